"""The restart trap of the embedded broker: it keeps topics in memory, while the state file keeps
source offsets and active topics. After a restart, the connectors whose stored state refers to
topics the broker no longer has are named in one WARN line that says what they will do."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

from connect_lite.storage.base import Stores


@dataclass(frozen=True)
class LostTopics:
    """Connectors whose stored state refers to topics the broker does not have, each with those
    topics (sorted; a source whose topics were not recorded has none to name)."""

    sources: dict[str, list[str]] = field(default_factory=dict)
    """Sources with stored offsets: they resume after them, past records that are gone."""
    sinks: dict[str, list[str]] = field(default_factory=dict)
    """Sinks that consumed topics the broker no longer has: they wait for those topics."""

    def __bool__(self) -> bool:
        return bool(self.sources or self.sinks)


def lost_topics(
    stores: Stores,
    connector_type: Callable[[Mapping[str, str]], str],
    topics: Collection[str],
) -> LostTopics:
    """Compare each stored connector's active topics (KIP-558) and, for a source, its stored
    offsets with ``topics``, the broker's. A source counts when it has offsets and one of its
    topics is gone (or none was recorded, topic tracking being off); a sink when one of the
    topics it consumed is gone. A topic recorded as a config provider reference is skipped."""
    found = LostTopics()
    for name in stores.configs.connector_names():
        config = stores.configs.get_connector_config(name)
        if config is None:
            continue
        used = [use.topic for use in stores.topics.topics(name) if "${" not in use.topic]
        gone = sorted(topic for topic in used if topic not in topics)
        kind = connector_type(config)
        if kind == "source" and stores.offsets.all(name) and (gone or not used):
            found.sources[name] = gone
        elif kind == "sink" and gone:
            found.sinks[name] = gone
    return found


def _named(connectors: Mapping[str, list[str]]) -> str:
    return ", ".join(
        f"{name} ({', '.join(topics)})" if topics else name for name, topics in connectors.items()
    )


def restart_warning(lost: LostTopics, state_file: str) -> str:
    """The one WARN line: which connectors, what they will do, and how to start afresh."""
    said = []
    if lost.sources:
        said.append(
            f"source connectors {_named(lost.sources)} resume after their stored offsets, so "
            "the records they wrote before are gone and are not written again"
        )
    if lost.sinks:
        said.append(
            f"sink connectors {_named(lost.sinks)} wait until their topics are created again"
        )
    return (
        "The embedded broker keeps topics in memory and no longer has the topics these "
        f"connectors used before this start: {'; '.join(said)}. Only an external Kafka keeps "
        "topic data across a restart (embedded.broker.enable=false and bootstrap.servers). To "
        "start afresh, stop the worker and remove the state file "
        f"{state_file}, or reset a source's offsets (stop it, then DELETE "
        "/connectors/<name>/offsets)."
    )


__all__ = ["LostTopics", "lost_topics", "restart_warning"]
