"""Produce → consume through the wrappers, on the session broker."""

from __future__ import annotations

import threading
import time
import uuid

import pytest

from connect_lite.api.errors import ConnectError
from connect_lite.api.records import RecordMetadata, TopicPartition
from connect_lite.kafka import consumer as consumer_module
from connect_lite.kafka.admin import Admin
from connect_lite.kafka.clients import consumer_config, producer_config
from connect_lite.kafka.consumer import ConsumedMessage, Consumer
from connect_lite.kafka.producer import Producer

pytestmark = pytest.mark.integration


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def worker(bootstrap: str) -> dict[str, str]:
    return {"bootstrap.servers": bootstrap, "consumer.session.timeout.ms": "6000"}


def read(consumer: Consumer, count: int, timeout: float = 30.0) -> list[ConsumedMessage]:
    got: list[ConsumedMessage] = []
    deadline = time.monotonic() + timeout
    while len(got) < count and time.monotonic() < deadline:
        got.extend(consumer.poll_batch(1000, 0.5))
    return got


def produce_all(producer: Producer, topic: str, records: list[dict]) -> list:  # type: ignore[type-arg]
    reports: list[tuple[ConnectError | None, RecordMetadata | None]] = []
    for rec in records:
        producer.produce(topic, on_delivery=lambda e, m: reports.append((e, m)), **rec)
    assert producer.flush(30) == 0
    return reports


def test_round_trip_keeps_keys_values_headers_and_timestamps(bootstrap_servers: str) -> None:
    topic = unique("roundtrip")
    Admin({"bootstrap.servers": bootstrap_servers}).create_topic(topic, 2, 1)
    producer = Producer(producer_config(worker(bootstrap_servers), "rt", 0))
    records = [
        {"value": b"v0", "key": b"k0", "partition": 0, "timestamp": 1_700_000_000_000},
        {"value": None, "key": b"k1", "partition": 1, "headers": [("h", b"x"), ("n", None)]},
        {"value": b"v2", "partition": 0, "headers": [("h", b"y"), ("h", b"z")]},
    ]
    reports = produce_all(producer, topic, records)
    producer.close()
    assert [e for e, _ in reports] == [None, None, None]
    metas = [m for _, m in reports]
    assert all(isinstance(m, RecordMetadata) and m.topic == topic for m in metas)
    by_place = {(m.partition, m.offset): m for m in metas if m}
    assert sorted(by_place) == [(0, 0), (0, 1), (1, 0)]  # partitions report independently
    assert by_place[(0, 0)].timestamp == 1_700_000_000_000

    consumer = Consumer(consumer_config(worker(bootstrap_servers), "rt", 0, unique("g"), {}))
    consumer.subscribe([topic])
    got = sorted(read(consumer, 3), key=lambda m: (m.partition, m.offset))
    consumer.close()
    assert [(m.partition, m.offset, m.key, m.value) for m in got] == [
        (0, 0, b"k0", b"v0"),
        (0, 1, None, b"v2"),
        (1, 0, b"k1", None),
    ]
    assert got[0].timestamp == 1_700_000_000_000 and got[0].timestamp_type == "CreateTime"
    assert got[1].headers == [("h", b"y"), ("h", b"z")]
    assert got[2].headers == [("h", b"x"), ("n", None)]
    assert got[0].headers == []


def test_rows_are_produced_as_produce_would_in_order_even_past_a_full_queue(
    bootstrap_servers: str,
) -> None:
    """produce_rows: the same fields as produce, in order; a local queue of 5 messages makes
    it wait for room (as produce does) rather than fail or drop."""
    topic = unique("rows")
    Admin({"bootstrap.servers": bootstrap_servers}).create_topic(topic, 2, 1)
    errors: list[ConnectError] = []
    conf = {**producer_config(worker(bootstrap_servers), "rows", 0)}
    conf["queue.buffering.max.messages"] = "5"
    producer = Producer(conf, on_error=errors.append)
    rows = [
        (0, topic, 0, b"k0", b"v0", None, 1_700_000_000_000),
        (1, topic, 1, None, None, [("h", b"x"), ("n", None)], None),
        *((i, topic, 0, None, f"v{i}".encode(), None, None) for i in range(2, 40)),
    ]
    producer.produce_rows(rows)
    assert producer.flush(30) == 0 and errors == []
    producer.close()

    consumer = Consumer(consumer_config(worker(bootstrap_servers), "rows", 0, unique("g"), {}))
    consumer.subscribe([topic])
    got = sorted(read(consumer, 40), key=lambda m: (m.partition, m.offset))
    consumer.close()
    assert [(m.key, m.value) for m in got if m.partition == 0] == [(b"k0", b"v0")] + [
        (None, f"v{i}".encode()) for i in range(2, 40)
    ]
    assert [(m.key, m.value, m.headers) for m in got if m.partition == 1] == [
        (None, None, [("h", b"x"), ("n", None)])
    ]
    assert got[0].timestamp == 1_700_000_000_000


def test_a_poll_returns_at_most_a_slice_and_the_next_polls_the_rest_in_order(
    bootstrap_servers: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(consumer_module, "CONSUME_SLICE", 10)
    topic = unique("slices")
    Admin({"bootstrap.servers": bootstrap_servers}).create_topic(topic, 1, 1)
    producer = Producer(producer_config(worker(bootstrap_servers), "slices", 0))
    produce_all(producer, topic, [{"value": f"v{i}".encode()} for i in range(25)])
    producer.close()
    consumer = Consumer(consumer_config(worker(bootstrap_servers), "sl", 0, unique("g"), {}))
    consumer.subscribe([topic])
    got: list[ConsumedMessage] = []
    sizes: list[int] = []
    deadline = time.monotonic() + 30
    while len(got) < 25 and time.monotonic() < deadline:
        batch = consumer.poll_batch(1000, 0.5)
        sizes.append(len(batch))
        got.extend(batch)
    consumer.close()
    assert [m.value for m in got] == [f"v{i}".encode() for i in range(25)]
    assert max(sizes) == 10, sizes  # all 25 were waiting: every full poll took a slice


def test_regex_subscription_matches_whole_names_and_start_offsets_apply(
    bootstrap_servers: str,
) -> None:
    base = unique("rx")
    admin = Admin({"bootstrap.servers": bootstrap_servers})
    for name in (f"{base}-a", f"{base}-b", f"{base}-a-extra"):
        admin.create_topic(name, 1, 1)
    producer = Producer(producer_config(worker(bootstrap_servers), "rx", 0))
    for name in (f"{base}-a", f"{base}-b", f"{base}-a-extra"):
        produce_all(producer, name, [{"value": f"{name}-{i}".encode()} for i in range(3)])
    producer.close()

    assigned: list[TopicPartition] = []

    def on_assign(tps: list[TopicPartition]) -> dict[TopicPartition, int]:
        assigned.extend(tps)
        return {TopicPartition(f"{base}-b", 0): 2}

    consumer = Consumer(consumer_config(worker(bootstrap_servers), "rx", 0, unique("g"), {}))
    consumer.subscribe(pattern=f"{base}-(a|b)", on_assign=on_assign)
    got = read(consumer, 4)
    assert sorted(m.value for m in got if m.value) == [
        f"{base}-a-0".encode(),
        f"{base}-a-1".encode(),
        f"{base}-a-2".encode(),
        f"{base}-b-2".encode(),
    ]
    assert sorted(assigned) == [TopicPartition(f"{base}-a", 0), TopicPartition(f"{base}-b", 0)]
    assert consumer.assignment() == sorted(assigned)
    assert consumer.position([TopicPartition(f"{base}-a", 0)]) == {
        TopicPartition(f"{base}-a", 0): 3
    }
    consumer.close()
    consumer.close()


def test_pause_stops_delivery_until_resume(bootstrap_servers: str) -> None:
    topic = unique("pause")
    Admin({"bootstrap.servers": bootstrap_servers}).create_topic(topic, 1, 1)
    producer = Producer(producer_config(worker(bootstrap_servers), "p", 0))
    produce_all(producer, topic, [{"value": b"first"}])
    consumer = Consumer(consumer_config(worker(bootstrap_servers), "p", 0, unique("g"), {}))
    consumer.subscribe([topic])
    assert [m.value for m in read(consumer, 1)] == [b"first"]
    tp = TopicPartition(topic, 0)
    consumer.pause([tp])
    produce_all(producer, topic, [{"value": b"second"}])
    assert consumer.poll_batch(100, 1.5) == []
    consumer.resume([tp])
    assert [m.value for m in read(consumer, 1)] == [b"second"]
    consumer.seek(tp, 0)
    assert [m.value for m in read(consumer, 2)] == [b"first", b"second"]
    producer.close()
    consumer.close()


def test_subscribe_needs_exactly_one_of_topics_or_pattern(bootstrap_servers: str) -> None:
    consumer = Consumer(consumer_config(worker(bootstrap_servers), "s", 0, unique("g"), {}))
    with pytest.raises(ConnectError, match="exactly one"):
        consumer.subscribe(["a"], pattern="b")
    with pytest.raises(ConnectError, match="exactly one"):
        consumer.subscribe()
    consumer.close()


def test_delivery_failure_reaches_the_callback_as_a_connect_error() -> None:
    producer = Producer(
        {"bootstrap.servers": "127.0.0.1:1", "message.timeout.ms": "500"}, max_block_s=1
    )
    reports: list[tuple[ConnectError | None, RecordMetadata | None]] = []
    producer.produce("nowhere", b"v", on_delivery=lambda e, m: reports.append((e, m)))
    deadline = time.monotonic() + 10
    while not reports and time.monotonic() < deadline:
        producer.poll(0.1)
    assert len(reports) == 1
    err, meta = reports[0]
    assert isinstance(err, ConnectError) and "nowhere" in str(err) and meta is None
    assert producer.close(timeout=1) == 0


def test_error_only_reports_call_on_error_and_flush_returns_zero_on_success(
    bootstrap_servers: str,
) -> None:
    from connect_lite.api.errors import ConnectError
    from connect_lite.kafka.producer import Producer as ConnectProducer

    errors: list[ConnectError] = []
    good = ConnectProducer({"bootstrap.servers": bootstrap_servers}, on_error=errors.append)
    for n in range(100):
        good.produce("error-only-ok", f"v{n}".encode())
    assert good.flush(30) == 0
    assert errors == []
    good.close()
    dead = ConnectProducer(
        {"bootstrap.servers": "127.0.0.1:1", "message.timeout.ms": "300"}, on_error=errors.append
    )
    dead.produce("error-only-dead", b"v")
    assert dead.flush(10) == 0
    assert len(errors) == 1 and isinstance(errors[0], ConnectError)
    assert "error-only-dead" in str(errors[0])
    dead.close()


def test_a_consumer_closed_while_joining_leaves_the_group_usable(bootstrap_servers: str) -> None:
    """Tansu never completes a group's next join after a member left in the middle of one:
    a task stopped a second after it started (a config update, a restart) left its
    successor without partitions for good. close() now lets the join end first."""
    topic, group = unique("join-close"), unique("group")
    Admin({"bootstrap.servers": bootstrap_servers}).create_topic(topic, 1, 1)
    producer = Producer(producer_config(worker(bootstrap_servers), "jc", 0))
    produce_all(producer, topic, [{"value": b"v", "partition": 0}])
    producer.close()
    config = consumer_config(worker(bootstrap_servers), "jc", 0, group)
    for _ in range(2):
        quitter = Consumer(config)
        quitter.subscribe([topic])
        quitter.poll_batch(10, 0.3)  # the join has started, not ended
        assert quitter._joining
        quitter.close()
    successor = Consumer(config)
    successor.subscribe([topic])
    try:
        assert [m.value for m in read(successor, 1, timeout=30)] == [b"v"]
    finally:
        successor.close()


def test_two_members_closed_at_once_leave_the_group_usable(bootstrap_servers: str) -> None:
    """Two tasks of one connector stop together (a restart, a config update): if the second
    left before its heartbeat told it of the first one's leave, and it was the group's leader,
    Tansu never completed the group's next rebalance. They now leave in turn, the second once
    the group settled again. Twice: the old code failed when the leader closed second."""
    topic = unique("pair-close")
    Admin({"bootstrap.servers": bootstrap_servers}).create_topic(topic, 2, 1)
    producer = Producer(producer_config(worker(bootstrap_servers), "pc", 0))
    produce_all(producer, topic, [{"value": b"a", "partition": 0}, {"value": b"b", "partition": 1}])
    producer.close()
    for _ in range(2):
        config = consumer_config(worker(bootstrap_servers), "pc", 0, unique("group"))
        pair = [Consumer(config), Consumer(config)]
        for member in pair:
            member.subscribe([topic])
        deadline = time.monotonic() + 30
        while any(m._joining for m in pair) and time.monotonic() < deadline:
            for member in pair:
                member.poll_batch(10, 0.05)
        assert not any(m._joining for m in pair), "the pair never settled"
        closers = [threading.Thread(target=m.close) for m in pair]
        for closer in closers:
            closer.start()
        for closer in closers:
            closer.join(30)
        successor = Consumer(config)
        successor.subscribe([topic])
        try:
            assert sorted(m.value for m in read(successor, 2, timeout=30)) == [b"a", b"b"]
        finally:
            successor.close()
