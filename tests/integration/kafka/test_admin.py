"""Admin operations on the session broker: topics, group offsets, clean errors, no hangs."""

from __future__ import annotations

import time
import uuid

import pytest

from connect_lite.api.errors import ConnectError, RetriableError
from connect_lite.api.records import TopicPartition
from connect_lite.kafka.admin import Admin
from connect_lite.kafka.clients import admin_config, consumer_config, producer_config
from connect_lite.kafka.consumer import Consumer
from connect_lite.kafka.producer import Producer

pytestmark = pytest.mark.integration


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def admin(bootstrap_servers: str) -> Admin:
    worker = {"bootstrap.servers": bootstrap_servers, "key.converter": "x", "plugin.path": "/p"}
    return Admin(admin_config(worker, {}), timeout=15)


def test_cluster_id_and_full_listing_does_not_create_topics(admin: Admin) -> None:
    assert admin.cluster_id()
    missing = unique("missing")
    assert missing not in admin.list_topics()
    assert admin.describe_topic(missing) is None
    assert missing not in admin.list_topics()  # describe did not auto-create it


def test_create_topic_with_partitions_and_configs(admin: Admin) -> None:
    name = unique("created")
    configs = {"cleanup.policy": "compact", "retention.ms": "3600000"}
    assert admin.create_topic(name, partitions=5, replication_factor=1, configs=configs) is True
    assert name in admin.list_topics()
    desc = admin.describe_topic(name)
    assert desc is not None
    assert (desc.name, desc.partitions, desc.replication_factor) == (name, 5, 1)
    assert {k: desc.configs.get(k) for k in configs} == configs
    assert admin.create_topic(name, partitions=2, replication_factor=1) is False
    assert admin.describe_topic(name).partitions == 5  # type: ignore[union-attr]


def test_group_offsets_commit_list_alter_and_delete(admin: Admin, bootstrap_servers: str) -> None:
    topic, group = unique("grp"), unique("connect-sink")
    admin.create_topic(topic, 2, 1)
    worker = {"bootstrap.servers": bootstrap_servers, "consumer.session.timeout.ms": "6000"}
    producer = Producer(producer_config(worker, "s", 0))
    for i in range(6):
        producer.produce(topic, b"%d" % i, partition=i % 2)
    assert producer.close(10) == 0

    consumer = Consumer(consumer_config(worker, "s", 0, group, {}))
    consumer.subscribe([topic])
    seen = 0
    deadline = time.monotonic() + 30
    while seen < 6 and time.monotonic() < deadline:
        seen += len(consumer.poll_batch(100, 0.5))
    assert seen == 6
    tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    consumer.commit({tp0: 3, tp1: 2})
    assert admin.list_group_offsets(group) == {tp0: 3, tp1: 2}
    with pytest.raises(ConnectError, match="active members"):
        admin.alter_group_offsets(group, {tp0: 0})
    consumer.close()

    admin.alter_group_offsets(group, {tp0: 1, tp1: 0})
    assert admin.list_group_offsets(group) == {tp0: 1, tp1: 0}
    assert admin.delete_group(group) is True
    assert admin.list_group_offsets(group) == {}
    # Deleting again is not an error (Kafka answers GROUP_ID_NOT_FOUND → False; Tansu succeeds).
    admin.delete_group(group)
    assert admin.list_group_offsets(group) == {}


def test_unknown_group_has_no_offsets(admin: Admin) -> None:
    assert admin.list_group_offsets(unique("nobody")) == {}


@pytest.mark.timeout(60)  # the hang guard: each call must give up, not wait forever
def test_unreachable_broker_raises_retriable_errors() -> None:
    admin = Admin({"bootstrap.servers": "127.0.0.1:1"}, timeout=1.5)
    with pytest.raises(RetriableError, match="cannot list topics"):
        admin.list_topics()
    with pytest.raises(RetriableError, match="cannot create topic t"):
        admin.create_topic("t", 1, 1)
    with pytest.raises(RetriableError, match="group g"):
        admin.list_group_offsets("g")
