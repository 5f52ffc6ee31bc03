"""KIP-158 at run time: create a source task's new topics by the first matching group."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from connect_lite.api.errors import ConnectError
from connect_lite.config.topic_creation import TopicCreation
from connect_lite.kafka.admin import Admin

log = logging.getLogger(__name__)


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
