"""KIP-158 rules at run time: group matching, inheritance, and one admin check per topic."""

from __future__ import annotations

from typing import Any

import pytest

from connect_lite.api.errors import ConnectError, RetriableError
from connect_lite.config.topic_creation import TopicCreation
from connect_lite.dataplane.topic_creation import TopicCreator
from connect_lite.kafka.admin import TopicDescription

CONFIG = {
    "topic.creation.groups": "foo,bar,default",
    "topic.creation.default.replication.factor": "3",
    "topic.creation.default.partitions": "1",
    "topic.creation.default.cleanup.policy": "delete",
    "topic.creation.foo.include": "orders.*,payments",
    "topic.creation.foo.exclude": "orders-tmp.*",
    "topic.creation.foo.partitions": "5",
    "topic.creation.foo.cleanup.policy": "compact",
    "topic.creation.bar.include": "orders-tmp.*,payments",
    "topic.creation.bar.replication.factor": "-1",
    "topic.creation.bar.retention.ms": "1000",
}


def test_groups_in_listed_order_with_default_last_and_inheritance() -> None:
    creation = TopicCreation.from_config(CONFIG)
    assert [g.name for g in creation.groups] == ["foo", "bar", "default"]
    foo = creation.group_for("orders-1")
    assert (foo.name, foo.partitions, foo.replication_factor) == ("foo", 5, 3)
    assert foo.configs == {"cleanup.policy": "compact"}  # extra configs are not inherited
    bar = creation.group_for("orders-tmp-1")  # excluded from foo: exclude wins
    assert (bar.name, bar.partitions, bar.replication_factor) == ("bar", 1, -1)
    assert bar.configs == {"retention.ms": "1000"}
    assert creation.group_for("payments").name == "foo"  # first match in list order
    assert creation.group_for("xorders-1").name == "default"  # full match only
    assert creation.group_for("payments2").name == "default"
    default = creation.group_for("anything")
    assert (default.partitions, default.replication_factor) == (1, 3)
    assert default.configs == {"cleanup.policy": "delete"}


def test_default_include_and_exclude_are_ignored() -> None:
    creation = TopicCreation.from_config(
        {
            "topic.creation.default.replication.factor": "1",
            "topic.creation.default.partitions": "2",
            "topic.creation.default.include": "nothing",
            "topic.creation.default.exclude": ".*",
        }
    )
    assert creation.group_for("any-topic").name == "default"
    assert creation.group_for("any-topic").configs == {}


class FakeAdmin:
    def __init__(self, existing: dict[str, int], fail: Exception | None = None) -> None:
        self.existing = dict(existing)
        self.fail = fail
        self.calls: list[tuple[str, Any]] = []

    def describe_topic(self, name: str) -> TopicDescription | None:
        self.calls.append(("describe", name))
        if self.fail:
            raise self.fail
        n = self.existing.get(name)
        return None if n is None else TopicDescription(name, n, 1, {})

    def create_topic(
        self, name: str, partitions: int, replication_factor: int, configs: dict[str, str]
    ) -> bool:
        self.calls.append(("create", (name, partitions, replication_factor, configs)))
        if name in self.existing:
            return False
        self.existing[name] = partitions
        return True


def test_creator_creates_missing_topics_once_and_never_touches_existing_ones() -> None:
    admin = FakeAdmin({"payments": 7})
    creator = TopicCreator(admin, TopicCreation.from_config(CONFIG))  # type: ignore[arg-type]
    creator.ensure({"orders-1", "payments"})
    creator.ensure(["orders-1", "payments", "orders-1"])
    assert sorted(c for c in admin.calls if c[0] == "describe") == [
        ("describe", "orders-1"),
        ("describe", "payments"),
    ]
    assert [c for c in admin.calls if c[0] == "create"] == [
        ("create", ("orders-1", 5, 3, {"cleanup.policy": "compact"}))
    ]
    assert admin.existing["payments"] == 7


def test_a_topic_created_meanwhile_counts_as_created() -> None:
    admin = FakeAdmin({})
    creator = TopicCreator(admin, TopicCreation.from_config(CONFIG))  # type: ignore[arg-type]
    admin.describe_topic = lambda name: None  # type: ignore[method-assign]  # lost the race
    admin.existing["orders-2"] = 9
    creator.ensure(["orders-2"])
    assert "orders-2" in creator.known and admin.existing["orders-2"] == 9


def test_a_failure_names_the_topic_and_the_group_and_is_not_remembered() -> None:
    admin = FakeAdmin({}, fail=RetriableError("timed out talking to the cluster"))
    creator = TopicCreator(admin, TopicCreation.from_config(CONFIG))  # type: ignore[arg-type]
    with pytest.raises(ConnectError) as raised:
        creator.ensure(["orders-3"])
    message = str(raised.value)
    assert "Unable to create topic 'orders-3'" in message and "'foo'" in message
    assert "timed out talking to the cluster" in message
    assert "orders-3" not in creator.known
