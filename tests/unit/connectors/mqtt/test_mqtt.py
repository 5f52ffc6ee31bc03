"""The MQTT connectors' configuration, task split, sink values, and the source's ordered
acknowledgements and bound (with a fake paho client and no broker)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import pytest

from connect_lite.api import ConfigError, DataError, Headers, SinkRecord
from connect_lite.connectors.mqtt.config import SinkSettings, SourceSettings
from connect_lite.connectors.mqtt.connection import Server
from connect_lite.connectors.mqtt.sink import payload
from connect_lite.connectors.mqtt.source import MqttSourceConnector, MqttSourceTask, _Pending

BASE = {"name": "edge", "mqtt.server.uri": "tcp://127.0.0.1:1883", "mqtt.topics": "a/#"}


def errors_of(config: dict[str, str]) -> dict[str, list[str]]:
    with pytest.raises(ConfigError) as raised:
        SourceSettings.parse(config)
    for key, messages in raised.value.errors.items():
        assert all(key in m for m in messages), messages  # a 400's message names the key
    return raised.value.errors


def test_confluent_defaults() -> None:
    s = SourceSettings.parse(BASE)
    assert (s.kafka_topic, s.qos, s.bound, s.max_batch) == ("mqtt", 0, 50000, 4096)
    assert (s.empty_timeout_s, s.full_timeout_s, s.retry_ms) == (0.1, 60.0, 30000)
    o = s.options
    assert (o.clean_session, o.connect_timeout_s, o.keepalive_s) == (True, 30.0, 60)
    assert o.client_id == "edge-0" and o.tls_context is None
    sink = SinkSettings.parse({k: v for k, v in BASE.items() if k != "mqtt.topics"})
    assert (sink.qos, sink.retained, sink.publish_timeout_s) == (0, True, 30.0)
    forever = SinkSettings.parse({**BASE, "mqtt.publish.timeout.ms": "-1"})
    assert forever.publish_timeout_s is None


def test_server_uris() -> None:
    assert Server.parse("tcp://h:1884") == Server("tcp://h:1884", "h", 1884, False)
    assert Server.parse("ssl://h") == Server("ssl://h", "h", 8883, True)
    for bad in ("http://h:1", "h:1883", "tcp://:1883", "tcp://h:x"):
        with pytest.raises(ValueError):
            Server.parse(bad)


@pytest.mark.parametrize(
    ("extra", "key"),
    [
        ({"mqtt.qos": "3"}, "mqtt.qos"),
        ({"mqtt.server.uri": "ws://h"}, "mqtt.server.uri"),
        ({"mqtt.topics": "a/#/b"}, "mqtt.topics"),
        ({"mqtt.topics": "a+/b"}, "mqtt.topics"),
        ({"mqtt.topics": ""}, "mqtt.topics"),
        ({"kafka.topic": ""}, "kafka.topic"),
        ({"mqtt.password": "p"}, "mqtt.username"),
        ({"mqtt.ssl.trust.store.path": "/no/such/file"}, "mqtt.ssl.trust.store.path"),
        ({"records.buffer.queue.size": "0"}, "records.buffer.queue.size"),
    ],
)
def test_bad_values_name_their_key(extra: dict[str, str], key: str) -> None:
    assert key in errors_of({**BASE, **extra})


def test_filters_are_shared_out_with_a_stable_client_id_each() -> None:
    connector = MqttSourceConnector()
    connector.start({**BASE, "mqtt.topics": "a,b,c", "mqtt.qos": "1"})
    configs = connector.task_configs(2)
    assert [(c["mqtt.topics"], c["mqtt.client.id"]) for c in configs] == [
        ("a,c", "edge-0"), ("b", "edge-1")]  # fmt: skip
    assert len(connector.task_configs(5)) == 3  # no more tasks than filters
    connector.start({**BASE, "mqtt.client.id": "gateway"})
    assert [c["mqtt.client.id"] for c in connector.task_configs(1)] == ["gateway"]


def record(value: object) -> SinkRecord:
    return SinkRecord("t", 0, 7, None, value, None, None, 0, "CreateTime", Headers())


def test_sink_values_are_bytes_strings_or_null() -> None:
    assert payload(record(b"\x00\x01")) == b"\x00\x01"
    assert payload(record("héllo")) == "héllo".encode()
    assert payload(record(None)) == b""  # clears a retained message
    with pytest.raises(DataError, match=r"only bytes and string values.*t-0 at offset 7 is a dict"):
        payload(record({"a": 1}))


@dataclass
class FakeMessage:
    topic: str
    payload: bytes
    mid: int
    qos: int
    retain: bool = False
    dup: bool = False


class FakeClient:
    def __init__(self) -> None:
        self.acks: list[tuple[int, int]] = []

    def ack(self, mid: int, qos: int) -> None:
        self.acks.append((mid, qos))


class FakeConnection:
    def __init__(self, client: FakeClient) -> None:
        self.client: Any = client
        self.stopping = False


def task_with(client: FakeClient, bound: int = 100) -> MqttSourceTask:
    task = MqttSourceTask()
    task._settings = SourceSettings.parse({**BASE, "records.buffer.queue.size": str(bound)})
    task._pending = _Pending(bound=bound)
    task._connection = FakeConnection(client)  # type: ignore[assignment]
    return task


def test_acknowledgements_go_in_arrival_order_once_kafka_has_each() -> None:
    client = FakeClient()
    task = task_with(client)
    for mid, qos in ((1, 1), (0, 0), (2, 2), (3, 1)):
        task._message(client, FakeMessage("a/b", b"x", mid, qos))
    records = task.poll()
    assert records is not None and len(records) == 4
    assert [h.key for h in records[2].headers] == [
        "mqtt.message.id", "mqtt.qos", "mqtt.retained", "mqtt.duplicate"]  # fmt: skip
    assert (records[2].key, records[2].value, records[2].source_partition) == ("a/b", b"x", None)
    task.commit_record(records[2], None)  # Kafka has the third: it waits for the first two
    assert client.acks == []
    task.commit_record(records[0], None)
    assert client.acks == [(1, 1)]
    task.commit_record(records[1], None)  # a QoS 0 message: nothing to acknowledge
    assert client.acks == [(1, 1), (2, 2)]
    task.commit_record(records[3], None)
    assert client.acks == [(1, 1), (2, 2), (3, 1)]


def test_a_dropped_connections_messages_are_not_acknowledged_on_the_next() -> None:
    old, new = FakeClient(), FakeClient()
    task = task_with(old)
    task._message(old, FakeMessage("a", b"1", 5, 1))
    assert task._connection is not None
    task._connection.client = new  # reconnected: the broker delivers 5 again
    task._message(new, FakeMessage("a", b"1", 5, 1, dup=True))
    first, again = task.poll() or []
    task.commit_record(first, None)
    task.commit_record(again, None)
    assert old.acks == [] and new.acks == [(5, 1)]


def test_reading_stops_at_the_bound_until_kafka_catches_up() -> None:
    client = FakeClient()
    task = task_with(client, bound=2)
    task._message(client, FakeMessage("a", b"1", 1, 1))
    task._message(client, FakeMessage("a", b"2", 2, 1))
    third = threading.Thread(target=task._message, args=(client, FakeMessage("a", b"3", 3, 1)))
    third.start()
    time.sleep(0.3)
    assert third.is_alive()  # the connection's thread waits: nothing dropped, nothing read
    records = task.poll() or []
    assert len(records) == 2
    task.commit_record(records[0], None)
    third.join(5)
    assert not third.is_alive()
    assert [r.value for r in task.poll() or []] == [b"3"]
