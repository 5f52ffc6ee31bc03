"""KIP-558: the topics each connector has used, recorded once per topic and kept in SQLite."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Iterable

from connect_lite.api.errors import ForbiddenError, RetriableError
from connect_lite.config.connector_config import ConnectorConfig
from connect_lite.config.user_regex import RegexTimeoutError, UserRegex
from connect_lite.storage.base import TopicStore, TopicUse

log = logging.getLogger(__name__)

TRACKING_DISABLED = "Topic tracking is disabled."
RESET_DISABLED = "Topic tracking reset is disabled."


class TopicTracker:
    """Records ``(connector, topic, task, discovery time)`` the first time a task uses a topic.

    The in-memory view is checked first, so a topic costs one store write, not one per record;
    tasks racing on the same topic are harmless (the store keeps the first record).

    A topic whose name is, whole, a resolved config provider value is recorded as its reference
    (``conceal``): the secret reaches neither the state file nor GET .../topics."""

    def __init__(
        self,
        store: TopicStore,
        enabled: bool,
        allow_reset: bool,
        conceal: Callable[[str], str] | None = None,
    ) -> None:
        self.store = store
        self._conceal = conceal or (lambda topic: topic)
        self.enabled = enabled
        self.allow_reset = allow_reset
        self._known: dict[str, set[str]] = {}
        self._lock = threading.Lock()

    def record(self, connector: str, topics: Iterable[str], task: int) -> None:
        """Called on the task's thread: its log lines carry the task's logging context."""
        if not self.enabled:
            return
        known = self._known_topics(connector)
        new = [t for t in topics if t not in known]
        for topic in new:
            try:
                shown = self._conceal(topic)
                self.store.put(TopicUse(connector, shown, task, int(time.time() * 1000)))
            except RetriableError as error:  # not known yet: the next batch tries again
                log.warning("Could not record topic %s: %s", shown, error)
                return
            with self._lock:
                known.add(topic)
            log.debug("Now uses topic %s", shown)

    def _known_topics(self, connector: str) -> set[str]:
        with self._lock:
            known = self._known.get(connector)
            if known is None:
                known = {u.topic for u in self.store.topics(connector)}
                self._known[connector] = known
            return known

    def topics(self, connector: str) -> list[str]:
        """The active topics, sorted; 403 when tracking is disabled."""
        if not self.enabled:
            raise ForbiddenError(TRACKING_DISABLED)
        return [u.topic for u in self.store.topics(connector)]

    def reset(self, connector: str) -> None:
        """Forget every topic of the connector; 403 when tracking or reset is disabled."""
        if not self.enabled:
            raise ForbiddenError(TRACKING_DISABLED)
        if not self.allow_reset:
            raise ForbiddenError(RESET_DISABLED)
        self.forget(connector)

    def forget(self, connector: str) -> None:
        """Clear the set whatever the settings (a deleted connector's set goes with it)."""
        with self._lock:
            self.store.reset(connector)
            self._known.pop(connector, None)

    def keep_only_consumed(self, connector: str, config: ConnectorConfig) -> None:
        """After a sink's reconfiguration, drop topics its new config no longer consumes; a
        ``topics.regex`` that cannot be matched in time drops none."""
        listed = set(config.topics) | {self._conceal(topic) for topic in config.topics}
        regex = config.topics_regex
        others = [u.topic for u in self.store.topics(connector) if u.topic not in listed]
        try:  # not under the lock: a regex RE2 cannot take is matched in a child process
            matched = UserRegex(regex).full_matches(others) if regex else [False] * len(others)
        except (re.error, RegexTimeoutError) as error:
            log.warning("[%s] Keeps its active topics: topics.regex: %s", connector, error)
            return
        unused = [topic for topic, hit in zip(others, matched, strict=True) if not hit]
        if not unused:
            return
        with self._lock:
            self.store.remove(connector, unused)
            self._known.pop(connector, None)
        log.info("[%s] No longer consumes %s: removed from its active topics", connector, unused)

    def counts(self, connectors: Iterable[str]) -> dict[str, int]:
        return {name: len(self.store.topics(name)) for name in connectors}
