"""KIP-158 at run time: create a source task's new topics by the first matching group."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from connect_lite.api.errors import ConnectError
from connect_lite.config.topic_creation import (
    DEFAULT_GROUP,
    PREFIX,
    group_names,
    topic_configs,
    topic_creation_def,
)
from connect_lite.kafka.admin import Admin

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TopicGroup:
    """One group's rules: which topics it takes, and how to create them."""

    name: str
    partitions: int
    replication_factor: int
    include: tuple[re.Pattern[str], ...] = ()
    exclude: tuple[re.Pattern[str], ...] = ()
    configs: dict[str, str] = field(default_factory=dict)

    def matches(self, topic: str) -> bool:
        """Full-match include and exclude; exclude wins; ``default`` takes every topic."""
        if self.name == DEFAULT_GROUP:
            return True
        included = any(p.fullmatch(topic) for p in self.include)
        return included and not any(p.fullmatch(topic) for p in self.exclude)


class TopicCreation:
    """The groups of one connector, in the order listed, ``default`` last."""

    def __init__(self, groups: list[TopicGroup]) -> None:
        self.groups = groups

    @classmethod
    def from_config(cls, config: Mapping[str, str]) -> TopicCreation:
        parsed = topic_creation_def(config).parse(config)
        default_rf = parsed[f"{PREFIX}default.replication.factor"]
        default_partitions = parsed[f"{PREFIX}default.partitions"]
        groups = []
        for name in group_names(config):
            prefix = f"{PREFIX}{name}."
            rf = parsed[prefix + "replication.factor"]
            partitions = parsed[prefix + "partitions"]
            groups.append(
                TopicGroup(
                    name,
                    default_partitions if partitions is None else partitions,
                    default_rf if rf is None else rf,
                    tuple(re.compile(p) for p in parsed[prefix + "include"]),
                    tuple(re.compile(p) for p in parsed[prefix + "exclude"]),
                    topic_configs(config, name),
                )
            )
        default_configs = topic_configs(config, DEFAULT_GROUP)
        groups.append(
            TopicGroup(DEFAULT_GROUP, default_partitions, default_rf, configs=default_configs)
        )
        return cls(groups)

    def group_for(self, topic: str) -> TopicGroup:
        return next(g for g in self.groups if g.matches(topic))


class TopicCreator:
    """Checks each topic once per task and creates it, before the first send, if missing.

    Existence is checked with a describe (never a metadata request for the single topic,
    which some brokers answer by auto-creating it). An existing topic is never altered; a
    topic created meanwhile by someone else counts as created."""

    def __init__(self, admin: Admin, creation: TopicCreation) -> None:
        self.admin = admin
        self.creation = creation
        self.known: set[str] = set()

    def close(self) -> None:
        """Release the admin client (the task is stopping)."""
        self.admin.close()

    def ensure(self, topics: Iterable[str]) -> None:
        for topic in topics:
            if topic not in self.known:
                self._ensure_one(topic)
                self.known.add(topic)

    def _ensure_one(self, topic: str) -> None:
        group = self.creation.group_for(topic)
        try:
            if self.admin.describe_topic(topic) is not None:
                return
            created = self.admin.create_topic(
                topic, group.partitions, group.replication_factor, group.configs
            )
        except ConnectError as error:
            raise ConnectError(
                f"Unable to create topic '{topic}' with the rules of topic creation group "
                f"'{group.name}' (partitions={group.partitions}, replication factor="
                f"{group.replication_factor}, configs={group.configs}): {error}"
            ) from error
        log.info(
            "%s topic %s (group %s, partitions %d, replication factor %d, configs %s)",
            "Created" if created else "Found existing",
            topic,
            group.name,
            group.partitions,
            group.replication_factor,
            group.configs,
        )
