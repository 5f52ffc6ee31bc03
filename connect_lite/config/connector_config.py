"""A typed view of a stored connector config's framework keys, for both processes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from connect_lite.api.config import prefixed
from connect_lite.config.framework import sink_config_def, source_config_def


class ConnectorConfig:
    """Framework keys of a connector config, parsed with their defaults.

    Build it from a config that passed validation; a bad value raises ConfigError.
    ``connector_type`` is ``"sink"`` or ``"source"`` (Kafka's SinkConnectorConfig /
    SourceConnectorConfig). The worker builds one per connector start and hands it down to
    the connector runner, its tasks, their error handling and topic tracking.
    """

    def __init__(self, config: Mapping[str, str], connector_type: str) -> None:
        self.raw: dict[str, str] = dict(config)
        self.connector_type = connector_type
        config_def = sink_config_def() if connector_type == "sink" else source_config_def()
        self._values = config_def.parse(self.raw)

    def get(self, key: str) -> Any:
        return self._values[key]

    @property
    def name(self) -> str:
        return str(self.get("name"))

    @property
    def tasks_max(self) -> int:
        return int(self.get("tasks.max"))

    @property
    def tasks_max_enforce(self) -> bool:
        return bool(self.get("tasks.max.enforce"))

    @property
    def plugin_config(self) -> dict[str, str]:
        """The config a connector's ``start`` sees: everything but the KIP-891 version keys."""
        return {k: v for k, v in self.raw.items() if not k.endswith(".plugin.version")}

    @property
    def transforms(self) -> list[str]:
        """The transform aliases, in order (empty items dropped)."""
        return [alias for alias in self.get("transforms") or [] if alias]

    @property
    def predicates(self) -> list[str]:
        return list(self.get("predicates"))

    def prefixed(self, prefix: str) -> dict[str, str]:
        """Raw keys starting with ``prefix``, prefix stripped (e.g. ``transforms.t.``)."""
        return prefixed(self.raw, prefix)

    @property
    def errors_tolerance_all(self) -> bool:
        return self.get("errors.tolerance") == "all"

    @property
    def errors_retry_timeout_ms(self) -> int:
        return int(self.get("errors.retry.timeout"))

    @property
    def errors_retry_delay_max_ms(self) -> int:
        return int(self.get("errors.retry.delay.max.ms"))

    @property
    def errors_log_enable(self) -> bool:
        return bool(self.get("errors.log.enable"))

    @property
    def errors_log_include_messages(self) -> bool:
        return bool(self.get("errors.log.include.messages"))

    @property
    def topics(self) -> list[str]:
        """Sink only: the topics list (empty items dropped)."""
        return [t for t in self.get("topics") or [] if t]

    @property
    def topics_regex(self) -> str | None:
        """Sink only: the topics regex, or None when blank."""
        value = self.get("topics.regex") or ""
        return value if value.strip() else None

    @property
    def consumer_group_id(self) -> str:
        """Sink only: ``consumer.override.group.id``, or ``connect-<name>`` as in Kafka."""
        return self.prefixed("consumer.override.").get("group.id") or f"connect-{self.name}"

    def task_topic_settings(self) -> dict[str, str]:
        """Sink only: ``topics`` and ``topics.regex`` as given, for every task config.

        As Kafka's Worker does, each generated task config gets the connector's value of
        each key that is set (non-empty), replacing what the connector put there."""
        return {key: self.raw[key] for key in ("topics", "topics.regex") if self.raw.get(key)}

    @property
    def dlq_topic(self) -> str | None:
        """Sink only: the dead letter queue topic, or None when blank."""
        value = (self.get("errors.deadletterqueue.topic.name") or "").strip()
        return value or None

    @property
    def dlq_replication_factor(self) -> int:
        return int(self.get("errors.deadletterqueue.topic.replication.factor"))

    @property
    def dlq_context_headers_enable(self) -> bool:
        return bool(self.get("errors.deadletterqueue.context.headers.enable"))

    @property
    def topic_creation_groups(self) -> list[str]:
        """Source only: the topic creation groups listed (``default`` is implicit)."""
        return list(self.get("topic.creation.groups"))


@dataclass(frozen=True)
class SinkSubscription:
    """What a sink task subscribes to, read from its task config as Kafka's WorkerSinkTask
    does: the ``topics`` list (blank items dropped) or the ``topics.regex`` pattern."""

    topics: list[str]
    regex: str | None

    @classmethod
    def of_task(cls, task_config: Mapping[str, str]) -> SinkSubscription:
        topics = [t.strip() for t in task_config.get("topics", "").split(",") if t.strip()]
        return cls(topics, task_config.get("topics.regex") or None)


__all__ = ["ConnectorConfig", "SinkSubscription"]
