"""Confluent's MQTT source and sink against a real worker, Kafka broker and Mosquitto 2:
wildcards, QoS 0-2, keys and headers, a persistent session across a kill -9 and a Mosquitto
restart, Kafka away with the bound held, a sink to source round trip, passwords, TLS, and bad
configs."""

from __future__ import annotations

import json
import os
import re
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from connect_lite.testing import EmbeddedConnect, KafkaHelpers, wait_for
from connect_lite.testing.mosquitto import MosquittoServer, MosquittoTls
from tests.http_server import RecordingServer
from tests.integration.testkit import create_running, unique
from tests.tls_certs import PASSWORD, Pki, make_pki
from tests.unit.docs.doc_blocks import block

pytestmark = pytest.mark.integration

BYTES = {
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
}
USERS = {"device": "s3cret"}


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("mqtt-pki"))


@pytest.fixture(scope="module")
def mosquitto(pki: Pki) -> Iterator[MosquittoServer]:
    """One Mosquitto for the module: anonymous, password and TLS listeners; it saves at every
    change, so that a kill -9 of it loses nothing it acknowledged."""
    tls = MosquittoTls(cafile=pki.ca_pem, certfile=pki.server_pem, keyfile=pki.server_pem,
                       require_certificate=True)  # fmt: skip
    with MosquittoServer(users=USERS, tls=tls, save_every_change=True) as server:
        yield server


def source(server_uri: str, topics: str, kafka_topic: str, **extra: str) -> dict[str, str]:
    """A config as a Confluent user writes it."""
    return {
        "connector.class": "io.confluent.connect.mqtt.MqttSourceConnector",
        "tasks.max": "1",
        "mqtt.server.uri": server_uri,
        "mqtt.topics": topics,
        "kafka.topic": kafka_topic,
        "confluent.license": "",
        "confluent.topic.bootstrap.servers": "localhost:9092",
        "confluent.topic.replication.factor": "1",
        **BYTES,
        **extra,
    }


class Publisher:
    """A paho client that publishes and waits for the broker to take each message."""

    def __init__(self, server: MosquittoServer, port: int | None = None, **auth: str) -> None:
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2)
        if auth:
            self.client.username_pw_set(auth["user"], auth["password"])
        self.client.connect(server.host, port or server.port)
        self.client.loop_start()

    def send(self, topic: str, payload: str, qos: int = 1, retain: bool = False) -> None:
        for _ in range(100):  # a broker restarting refuses for a moment: publish again
            info = self.client.publish(topic, payload, qos=qos, retain=retain)
            try:
                info.wait_for_publish(5)
                if info.is_published():
                    return
            except (RuntimeError, ValueError):
                pass
            time.sleep(0.1)
        raise AssertionError(f"the broker never took {payload}")

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


class Subscriber:
    """A paho client that records what it gets."""

    def __init__(self, server: MosquittoServer, topic: str) -> None:
        self.got: list[tuple[str, bytes, bool]] = []
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2)
        self.client.on_message = lambda c, u, m: self.got.append((m.topic, m.payload, m.retain))
        self.client.connect(server.host, server.port)
        self.client.subscribe(topic, 1)
        self.client.loop_start()

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


def values(kafka: KafkaHelpers, topic: str, idle: float = 1.0) -> list[bytes]:
    return [m.value or b"" for m in kafka.consume(topic, None, timeout=30, idle=idle)]


def test_wildcards_qos_keys_and_headers(
    worker: EmbeddedConnect, kafka: KafkaHelpers, mosquitto: MosquittoServer
) -> None:
    root = unique("dev")
    topic = unique("mqtt")
    kafka.create_topic(topic, 1)
    create_running(worker, "mqtt", source(mosquitto.uri, f"{root}/+/temp,{root}/alerts/#",
                                          topic, **{"mqtt.qos": "1"}))  # fmt: skip
    publisher = Publisher(mosquitto)
    time.sleep(1)  # the task subscribed
    publisher.send(f"{root}/d1/temp", "21.5", qos=0)
    publisher.send(f"{root}/d2/temp", "22.0", qos=1)
    publisher.send(f"{root}/alerts/a/b", "hot", qos=2)  # delivered at the subscription's QoS 1
    publisher.send(f"{root}/d1/humidity", "40", qos=1)  # matches no filter
    publisher.close()
    found = kafka.consume(topic, 3, timeout=60)
    assert [(m.key, m.value) for m in found] == [
        (f"{root}/d1/temp".encode(), b"21.5"),
        (f"{root}/d2/temp".encode(), b"22.0"),
        (f"{root}/alerts/a/b".encode(), b"hot"),
    ]
    headers = [dict(m.headers) for m in found]
    assert [h["mqtt.qos"] for h in headers] == [b"0", b"1", b"1"]
    assert headers[0]["mqtt.message.id"] == b"0" and int(headers[1]["mqtt.message.id"]) > 0
    assert [list(h) for h in headers] == [
        ["mqtt.message.id", "mqtt.qos", "mqtt.retained", "mqtt.duplicate"]
    ] * 3
    assert {h["mqtt.retained"] for h in headers} == {b"false"}
    assert {h["mqtt.duplicate"] for h in headers} == {b"false"}
    assert values(kafka, topic) == [b"21.5", b"22.0", b"hot"]  # nothing else


@pytest.mark.parametrize("qos", [1, 2])
def test_a_persistent_session_loses_nothing_across_kill_9s_and_a_mosquitto_restart(
    worker: EmbeddedConnect, kafka: KafkaHelpers, mosquitto: MosquittoServer, qos: int
) -> None:
    root = unique("kill")
    topic = unique("mqtt")
    kafka.create_topic(topic, 3)
    config = source(mosquitto.uri, f"{root}/#", topic, **{
        "mqtt.qos": str(qos), "mqtt.clean.session.enabled": "false",
        "mqtt.client.id": unique("edge")})  # fmt: skip
    create_running(worker, "mqtt", config)
    publisher = Publisher(mosquitto)
    time.sleep(1)
    total = 600

    def publish(first: int, last: int) -> None:
        for i in range(first, last):
            publisher.send(f"{root}/s{i % 5}", f"m{i}", qos=qos)
            time.sleep(0.01)  # a stream, still flowing at the restart and the crash below

    publish(0, 100)
    wait_for(lambda: len(values(kafka, topic, 0.5)) >= 100, 60, what="the first messages")
    writer = threading.Thread(target=publish, args=(100, 400))
    writer.start()
    wait_for(lambda: len(values(kafka, topic, 0.2)) >= 150, 60, what="messages mid-stream")
    worker.kill_worker()  # messages not yet acknowledged wait in the broker's session
    writer.join(120)
    worker.start_worker()
    writer = threading.Thread(target=publish, args=(400, total))
    writer.start()
    time.sleep(0.5)
    mosquitto.restart()  # mid-stream: the session and its queued messages are saved
    time.sleep(0.5)
    mosquitto.crash()  # kill -9, mid-stream: what it acknowledged was saved
    time.sleep(1)
    mosquitto.resume()
    writer.join(120)
    publisher.close()

    def seen() -> set[bytes]:
        return set(values(kafka, topic, 1.0))

    expected = {f"m{i}".encode() for i in range(total)}
    wait_for(lambda: seen() >= expected, 120, what="every message after the crash and restart")
    assert len(values(kafka, topic)) >= total  # at least once: only duplicates, never a gap


def test_kafka_away_holds_the_bound_and_loses_nothing(
    new_worker: Any, mosquitto: MosquittoServer
) -> None:
    """A worker with a broker of its own, frozen (SIGSTOP) while messages keep coming: reading
    stops at records.buffer.queue.size, and every message arrives once Kafka is back."""
    with new_worker(bootstrap_servers=None) as worker:  # a Kafka of its own
        helpers = KafkaHelpers(worker.bootstrap_servers)
        root = unique("away")
        topic = unique("mqtt")
        helpers.create_topic(topic, 1)
        create_running(worker, "mqtt", source(mosquitto.uri, f"{root}/#", topic, **{
            "mqtt.qos": "1", "mqtt.clean.session.enabled": "false",
            "records.buffer.queue.size": "20", "records.buffer.queue.full.timeout": "1000",
            "mqtt.client.id": unique("away")}))  # fmt: skip
        publisher = Publisher(mosquitto)
        time.sleep(1)
        broker = worker.broker_pid
        assert broker is not None
        os.kill(broker, signal.SIGSTOP)
        try:
            for i in range(200):
                publisher.send(f"{root}/x", f"m{i}")
            wait_for(lambda: "messages wait for Kafka" in worker.log_text(), 30,
                     what="reading stopped at the bound")  # fmt: skip
            time.sleep(10)  # away for a while
        finally:
            os.kill(broker, signal.SIGCONT)
        publisher.close()
        waiting = re.findall(r"MQTT source: (\d+) messages wait for Kafka", worker.log_text())
        assert waiting and {int(n) for n in waiting} == {20}  # never more than the bound
        expected = {f"m{i}".encode() for i in range(200)}
        wait_for(lambda: set(values(helpers, topic)) >= expected, 120,
                 what="every message once Kafka is back")  # fmt: skip


def test_sink_to_mosquitto_to_source_round_trip(
    worker: EmbeddedConnect, kafka: KafkaHelpers, mosquitto: MosquittoServer
) -> None:
    """Kafka → MQTT sink (RegexRouter renames the MQTT topic) → Mosquitto → MQTT source."""
    topic_in = unique("rt-in")
    topic_out = unique("rt-out")
    kafka.create_topic(topic_in, 1)
    root = unique("rt")
    create_running(worker, "mqtt-src", source(mosquitto.uri, f"{root}/#", topic_out,
                                              **{"mqtt.qos": "1"}))  # fmt: skip
    watcher = Subscriber(mosquitto, f"{root}/#")
    time.sleep(1)
    name = create_running(worker, "mqtt-sink", {
        "connector.class": "io.confluent.connect.mqtt.MqttSinkConnector",
        "topics": topic_in, "mqtt.server.uri": mosquitto.uri, "mqtt.qos": "1",
        "mqtt.retained.enabled": "false",
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "transforms": "route", "transforms.route.type":
            "org.apache.kafka.connect.transforms.RegexRouter",
        "transforms.route.regex": ".*", "transforms.route.replacement": f"{root}/from-kafka",
    })  # fmt: skip
    kafka.produce(topic_in, [("k", f"v{i}") for i in range(20)])
    found = kafka.consume(topic_out, 20, timeout=60)
    assert [m.value for m in found] == [f"v{i}".encode() for i in range(20)]
    assert {m.key for m in found} == {f"{root}/from-kafka".encode()}
    assert [p for _, p, _ in watcher.got] == [f"v{i}".encode() for i in range(20)]
    watcher.close()

    def committed() -> int:
        offsets = worker.http.get(f"/connectors/{name}/offsets").body["offsets"]
        return int(offsets[0]["offset"]["kafka_offset"]) if offsets else 0

    wait_for(lambda: committed() == 20, 60, what="the sink's offsets after the confirms")


def test_the_sink_retains_by_default_and_sends_other_values_to_the_dlq(
    worker: EmbeddedConnect, kafka: KafkaHelpers, mosquitto: MosquittoServer
) -> None:
    topic = unique("retain")
    dlq = unique("dlq")
    kafka.create_topic(topic, 1)
    kafka.produce(topic, ['"text"', '{"a": 1}', '"last"'])
    create_running(worker, "mqtt-sink", {
        "connector.class": "MqttSink", "topics": topic, "mqtt.server.uri": mosquitto.uri,
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false", "errors.tolerance": "all",
        "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.topic.replication.factor": "1"})  # fmt: skip
    (dead,) = kafka.consume(dlq, 1, timeout=60)
    assert dead.value == b'{"a": 1}'

    def retained() -> tuple[str, bytes, bool] | None:
        late = Subscriber(mosquitto, topic)  # subscribes after the publishes: the retained one
        try:
            wait_for(lambda: late.got, 30, what="the retained message")
        finally:
            late.close()
        return late.got[0]

    wait_for(lambda: retained() == (topic, b"last", True), 30, what="the last one retained")


def test_passwords_and_mutual_tls(
    worker: EmbeddedConnect,
    kafka: KafkaHelpers,
    mosquitto: MosquittoServer,
    pki: Pki,
    tmp_path: Path,
) -> None:
    root = unique("sec")
    auth_topic, tls_topic = unique("auth"), unique("tls")
    create_running(worker, "mqtt", source(mosquitto.auth_uri, f"{root}/#", auth_topic, **{
        "mqtt.username": "device", "mqtt.password": "s3cret"}))  # fmt: skip
    keystore = tmp_path / "client.pem"  # a PEM keystore: the key, then its certificate
    keystore.write_bytes(pki.client_key.read_bytes() + pki.client_cert.read_bytes())
    create_running(worker, "mqtt", source(mosquitto.tls_uri, f"{root}/#", tls_topic, **{
        "mqtt.ssl.trust.store.path": str(pki.ca_p12),
        "mqtt.ssl.trust.store.password": PASSWORD,
        "mqtt.ssl.key.store.path": str(keystore)}))  # fmt: skip
    bad = create_running(worker, "mqtt", source(mosquitto.auth_uri, f"{root}/#", unique("x"),
        **{"mqtt.username": "device", "mqtt.password": "wrong",
           "max.retry.time.ms": "1000"}))  # fmt: skip
    time.sleep(1)
    publisher = Publisher(mosquitto)
    publisher.send(f"{root}/a", "secure")
    publisher.close()
    assert [m.value for m in kafka.consume(auth_topic, 1, timeout=60)] == [b"secure"]
    assert [m.value for m in kafka.consume(tls_topic, 1, timeout=60)] == [b"secure"]

    # Kafka's worker logs a source task's RetriableError and polls again: the task runs on.
    wait_for(
        lambda: re.search(
            rf"\[{bad}\|task-0\] Failed to poll .* refused the connection: "
            "Not authorized",
            worker.log_text(),
        ),
        60,
        what="the refusal logged",
    )
    assert worker.http.get(f"/connectors/{bad}/status").body["tasks"][0]["state"] == "RUNNING"
    assert "wrong" not in Path(worker.log_file).read_text()  # a PASSWORD: [hidden] in logs


def test_bad_configs_are_400s_that_name_the_key(
    worker: EmbeddedConnect, mosquitto: MosquittoServer, tmp_path: Path
) -> None:
    jks = tmp_path / "store.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed" + b"\0" * 60)
    bad: list[tuple[str, dict[str, str], str]] = [
        ("mqtt.qos", {"mqtt.qos": "3"}, ""),
        ("mqtt.server.uri", {"mqtt.server.uri": "http://x:1"}, "tcp://"),
        ("mqtt.topics", {"mqtt.topics": "a/#/b"}, "whole levels"),
        ("mqtt.topics", {"mqtt.topics": "a/b+"}, "whole levels"),
        ("mqtt.ssl.trust.store.path", {"mqtt.ssl.trust.store.path": str(jks)}, "PKCS12"),
        ("mqtt.ssl.trust.store.path", {"mqtt.ssl.trust.store.path": "/nope"}, "cannot read"),
    ]
    base = source(mosquitto.uri, "a/b", "t")
    for key, extra, words in bad:
        answer = worker.http.put(
            "/connector-plugins/MqttSourceConnector/config/validate", {**base, **extra}
        ).body
        errors = {c["value"]["name"]: c["value"]["errors"] for c in answer["configs"]}
        assert errors.get(key), (key, answer)
        assert words in " ".join(errors[key]), errors[key]
    created = worker.http.put("/connectors/mqtt-bad/config", {**base, "mqtt.qos": "5"})
    assert created.status == 400 and "mqtt.qos" in created.body["message"]
    sink = {"connector.class": "MqttSinkConnector", "topics": "t", "mqtt.server.uri": "x"}
    answer = worker.http.put("/connector-plugins/MqttSinkConnector/config/validate", sink).body
    errors = {c["value"]["name"]: c["value"]["errors"] for c in answer["configs"]}
    assert errors["mqtt.server.uri"]


def test_the_edge_example_runs_as_documented(
    worker: EmbeddedConnect, kafka: KafkaHelpers, mosquitto: MosquittoServer, tmp_path: Path
) -> None:
    """docs/mqtt.md's edge box: MQTT -> Kafka -> (lake, HTTP) on one worker, its three configs
    as written but for the addresses (and a topic of this test's own)."""
    topic = unique("edge-readings")
    lake = tmp_path / "lake"
    with RecordingServer() as web:
        swaps = {"tcp://127.0.0.1:1883": mosquitto.uri, "edge-readings": topic,
                 "https://hooks.example.com/readings": web.url("/readings"),
                 "file:///var/lib/connect-lite/lake": lake.as_uri()}  # fmt: skip

        def config(test_id: str) -> dict[str, str]:
            text = block(test_id).text
            for old, new in swaps.items():
                text = text.replace(old, new)
            assert topic in text and not re.search(r":1883|example\.com|/var/lib", text)
            return dict(json.loads(text))

        kafka.create_topic(topic, 1)
        for test_id in ("edge-mqtt-source", "edge-lake-sink", "edge-http-sink"):
            create_running(worker, test_id, config(test_id))
        publisher = Publisher(mosquitto)
        time.sleep(1)
        readings = [{"sensor": f"s{i % 3}", "celsius": 20 + i / 10} for i in range(100)]
        for i, reading in enumerate(readings):
            publisher.send(f"sensors/s{i % 3}/temperature", json.dumps(reading))
        publisher.close()

        def posted() -> list[Any]:
            return [r for request in web.accepted() for r in request.json()]

        wait_for(lambda: len(posted()) >= 100, 120, what="the readings posted")
        assert posted() == readings  # in order, batches of up to a hundred
        assert {r.headers["content-type"] for r in web.accepted()} == {"application/json"}

        def rows() -> list[dict[str, Any]]:
            import pyarrow.parquet as pq

            files = sorted((lake / "topics").rglob("*.parquet"))  # not the staging files
            return [row for f in files for row in pq.read_table(f).to_pylist()]

        wait_for(lambda: len(rows()) >= 100, 120, what="the readings in the lake")
        assert sorted(rows(), key=lambda r: (r["sensor"], r["celsius"])) == sorted(
            readings, key=lambda r: (r["sensor"], r["celsius"]))  # fmt: skip


def test_the_documented_source_and_sink_configs_run_unchanged(
    worker: EmbeddedConnect, kafka: KafkaHelpers, mosquitto: MosquittoServer
) -> None:
    """docs/mqtt.md's Confluent configs, as written but for the addresses, the topics and the
    user (its password is a config provider's reference there)."""
    commands, sensors = unique("device-commands"), unique("sensors")

    def config(test_id: str, swaps: dict[str, str]) -> dict[str, str]:
        found = dict(json.loads(block(test_id).text))
        for key, value in swaps.items():
            assert key in found, key
            found[key] = value
        return found

    create_running(worker, "doc-src", config("mqtt-source-example", {
        "mqtt.server.uri": mosquitto.auth_uri, "mqtt.topics": f"{sensors}/+/temperature",
        "kafka.topic": sensors, "mqtt.username": "device", "mqtt.password": "s3cret"}))  # fmt: skip
    kafka.create_topic(commands, 1)
    create_running(worker, "doc-sink", config("mqtt-sink-example", {
        "mqtt.server.uri": mosquitto.uri, "topics": commands}))  # fmt: skip
    watcher = Subscriber(mosquitto, commands)
    publisher = Publisher(mosquitto, mosquitto.auth_port, user="device", password="s3cret")
    time.sleep(1)
    publisher.send(f"{sensors}/boiler/temperature", "71.5")
    publisher.close()
    kafka.produce(commands, [("valve-1", "open")])
    (reading,) = kafka.consume(sensors, 1, timeout=60)
    assert (reading.key, reading.value) == (f"{sensors}/boiler/temperature".encode(), b"71.5")
    wait_for(lambda: watcher.got, 60, what="the command published")
    watcher.close()
    assert watcher.got == [(commands, b"open", False)]  # live, so not flagged retained
