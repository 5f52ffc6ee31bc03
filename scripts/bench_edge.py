"""Benchmark: the edge connectors, each against a raw client on the same server, in one run.

Everything runs in one go: Mosquitto 2 started for the run (connect_lite.testing's
MosquittoServer, ``max_inflight_messages`` ``--inflight``: 20,000, as docs/mqtt.md advises
raising it), an embedded broker, a counting HTTP server on a
socket in this process, and a real worker process (EmbeddedConnect on the worker's own
defaults, real Spark).

1. MQTT into Kafka at QoS 1. One publisher (paho-mqtt, up to 1000 messages in flight) sends
   ``--messages`` messages of 100 bytes. The baseline is a raw paho subscriber at QoS 1 that
   only counts, timed from the first publish to its last message. The MQTT source
   (``mqtt.qos=1``, a persistent session, ByteArrayConverter) is timed from the first publish
   to the last record's arrival at a consumer of the topic. Both print messages per second
   and the ratio source / raw.
2. The HTTP sink. ``--records`` records of 100 bytes wait in a topic; the sink
   (``batch.max.size=--batch``, ``batch.prefix=[``, ``batch.suffix=]``) is created paused,
   then resumed and timed until the server counted every record. The baseline is a
   ``requests.Session`` loop posting the same batches to the same server. Both print requests
   and records per second and the ratio sink / raw.
3. Latency. With the source running, ``--latency-messages`` single messages, 50-200 ms apart;
   a consumer (fetch.wait.max.ms=10) notes when each one's record arrives. It prints the p50
   and p99 from the publish to the record's arrival.

    .venv/bin/python scripts/bench_edge.py [--messages 50000] [--records 100000] [--batch 100]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import requests
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from paho.mqtt.enums import CallbackAPIVersion

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from connect_lite.kafka import Admin  # noqa: E402
from connect_lite.kafka.broker import EmbeddedBroker  # noqa: E402
from connect_lite.testing import EmbeddedConnect, wait_for  # noqa: E402
from connect_lite.testing.mosquitto import MosquittoServer  # noqa: E402
from scripts.bench_cdc import percentile  # noqa: E402
from scripts.bench_pipeline import bench_worker  # noqa: E402

PAYLOAD = b"x" * 100
BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"


class CountingServer:
    """Answers 200 to every request and counts requests and records (a body is a JSON-like
    array of the batch's records, ``[r,r,...]``)."""

    def __init__(self) -> None:
        self.requests = 0
        self.records = 0
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # no 40 ms delayed-ACK stall between replies

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with owner._lock:
                    owner.requests += 1
                    owner.records += body.count(b",") + 1
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/in"

    def reset(self) -> None:
        with self._lock:
            self.requests = self.records = 0

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def publisher(mosquitto: MosquittoServer) -> Any:
    client = mqtt.Client(CallbackAPIVersion.VERSION2)
    client.max_inflight_messages_set(1000)
    client.max_queued_messages_set(0)
    client.connect(mosquitto.host, mosquitto.port)
    client.loop_start()
    return client


def publish_all(mosquitto: MosquittoServer, topic: str, count: int) -> float:
    """Publish ``count`` messages at QoS 1; the time the first one went."""
    client = publisher(mosquitto)
    start = time.perf_counter()
    infos = [client.publish(topic, PAYLOAD, qos=1) for _ in range(count)]
    infos[-1].wait_for_publish(600)
    client.loop_stop()
    client.disconnect()
    return start


def raw_subscriber(mosquitto: MosquittoServer, count: int) -> float:
    """Messages per second a raw paho subscriber at QoS 1 counts."""
    got = [0]
    done = threading.Event()
    at = [0.0]

    def on_message(client: Any, userdata: Any, message: Any) -> None:
        got[0] += 1
        if got[0] == count:
            at[0] = time.perf_counter()
            done.set()

    client = mqtt.Client(CallbackAPIVersion.VERSION2)
    client.on_message = on_message
    client.connect(mosquitto.host, mosquitto.port)
    client.subscribe("bench/raw/#", 1)
    client.loop_start()
    time.sleep(1)
    start = publish_all(mosquitto, "bench/raw/m", count)
    if not done.wait(600):
        raise RuntimeError(f"the raw subscriber counted {got[0]:,} of {count:,}")
    client.loop_stop()
    client.disconnect()
    return count / (at[0] - start)


class Arrivals:
    """A consumer thread that creates a topic of one partition, counts its records from the
    beginning and notes when each arrives (the embedded broker's high watermark can lag, so
    records are read, not counted from watermarks)."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.count = 0
        self.last_at = 0.0
        self.at: dict[bytes, float] = {}
        self._stop = threading.Event()
        with Admin({"bootstrap.servers": bootstrap}) as admin:
            admin.create_topic(topic, 1)
        self._consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": uuid.uuid4().hex,
                                   "fetch.wait.max.ms": 10})  # fmt: skip
        self._consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])  # no group join
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            for message in self._consumer.consume(1000, 0.05):
                if message.error():
                    continue
                now = time.perf_counter()
                self.count += 1
                self.last_at = now
                value = message.value()
                if value and value.startswith(b"latency-"):
                    self.at[value] = time.time()

    def wait(self, count: int) -> float:
        """The time the ``count``-th record arrived."""
        wait_for(lambda: self.count >= count, 3600, interval=0.05)
        return self.last_at

    def close(self) -> None:
        self._stop.set()
        self._thread.join(10)
        self._consumer.close()


def mqtt_source(worker: EmbeddedConnect, mosquitto: MosquittoServer, arrivals: Arrivals,
                count: int) -> float:  # fmt: skip
    """Messages per second the MQTT source moves into Kafka."""
    config = {
        "connector.class": "io.confluent.connect.mqtt.MqttSourceConnector",
        "mqtt.server.uri": mosquitto.uri, "mqtt.topics": "bench/src/#",
        "kafka.topic": "bench-mqtt", "mqtt.qos": "1", "mqtt.clean.session.enabled": "false",
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": BYTES,
    }  # fmt: skip
    worker.create_running("bench-mqtt", config, tasks=1)
    time.sleep(1)
    start = publish_all(mosquitto, "bench/src/m", count)
    return count / (arrivals.wait(count) - start)


def http_raw(server: CountingServer, records: int, batch: int) -> tuple[float, float]:
    """Requests and records per second of a requests.Session posting the same batches."""
    body = b"[" + b",".join([PAYLOAD] * batch) + b"]"
    session = requests.Session()
    server.reset()
    start = time.perf_counter()
    for _ in range(records // batch):
        session.post(
            server.url, data=body, headers={"Content-Type": "text/plain"}
        ).raise_for_status()
    elapsed = time.perf_counter() - start
    return server.requests / elapsed, server.records / elapsed


def http_sink(worker: EmbeddedConnect, server: CountingServer, bootstrap: str, records: int,
              batch: int) -> tuple[float, float]:  # fmt: skip
    """Requests and records per second the HTTP sink sends, from its resume. It first takes a
    record (its consumer joined), is paused while the records are produced, then resumed."""
    config = {
        "connector.class": "io.confluent.connect.http.HttpSinkConnector",
        "topics": "bench-http", "http.api.url": server.url, "batch.max.size": str(batch),
        "batch.prefix": "[", "batch.suffix": "]", "value.converter": BYTES,
    }  # fmt: skip
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    producer.produce("bench-http", PAYLOAD)
    producer.flush(60)
    server.reset()
    worker.create_running("bench-http", config, tasks=1)
    wait_for(lambda: server.records >= 1, 300, what="the sink's first record")
    assert worker.http.put("/connectors/bench-http/pause", None).status == 202
    wait_for(lambda: worker.http.get("/connectors/bench-http/status").body["tasks"][0]["state"]
             == "PAUSED", 120)  # fmt: skip
    for _ in range(records):
        producer.produce("bench-http", PAYLOAD)
        producer.poll(0)
    producer.flush(60)
    server.reset()
    start = time.perf_counter()
    assert worker.http.put("/connectors/bench-http/resume", None).status == 202
    wait_for(lambda: server.records >= records, 3600, interval=0.05)
    elapsed = time.perf_counter() - start
    return server.requests / elapsed, server.records / elapsed


def latency(mosquitto: MosquittoServer, arrivals: Arrivals, count: int) -> list[float]:
    """Seconds from each single publish to its record's arrival at the consumer."""
    client = publisher(mosquitto)
    sent: dict[bytes, float] = {}
    for n in range(count):
        payload = f"latency-{n}".encode()
        sent[payload] = time.time()
        client.publish("bench/src/latency", payload, qos=1)
        time.sleep(random.uniform(0.05, 0.2))
    wait_for(lambda: len(arrivals.at.keys() & sent.keys()) == count, 120)
    client.loop_stop()
    client.disconnect()
    return [arrivals.at[p] - sent[p] for p in sent]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--latency-messages", type=int, default=200)
    parser.add_argument("--inflight", type=int, default=20_000,
                        help="Mosquitto's max_inflight_messages")  # fmt: skip
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]  # each figure as it comes
    server = CountingServer()
    mosquitto_server = MosquittoServer(max_inflight_messages=args.inflight)
    with mosquitto_server as mosquitto, EmbeddedBroker() as broker:
        bootstrap = broker.bootstrap_servers
        with tempfile.TemporaryDirectory() as tmp, bench_worker(Path(tmp), bootstrap, {}) as worker:
            raw = raw_subscriber(mosquitto, args.messages)
            print(f"{'raw paho subscriber, QoS 1 (counts only)':<44} {raw:>10,.0f} messages/s")
            arrivals = Arrivals(bootstrap, "bench-mqtt")
            rate = mqtt_source(worker, mosquitto, arrivals, args.messages)
            print(f"{'MQTT source, QoS 1 -> Kafka (acked)':<44} {rate:>10,.0f} messages/s  "
                  f"ratio {rate / raw:.2f}")  # fmt: skip
            raw_requests, raw_records = http_raw(server, args.records, args.batch)
            print(f"{'raw requests.Session, same batches':<44} {raw_requests:>10,.0f} requests/s "
                  f"{raw_records:>10,.0f} records/s")  # fmt: skip
            requests_s, records_s = http_sink(worker, server, bootstrap, args.records, args.batch)
            print(f"{'HTTP sink, batch.max.size=' + str(args.batch):<44} {requests_s:>10,.0f} "
                  f"requests/s {records_s:>10,.0f} records/s  ratio "
                  f"{records_s / raw_records:.2f}")  # fmt: skip
            if args.latency_messages:
                delays = latency(mosquitto, arrivals, args.latency_messages)
                print(f"MQTT publish -> record at a consumer, {len(delays)} single messages: "
                      f"p50 {percentile(delays, 0.5) * 1000:.0f} ms, "
                      f"p99 {percentile(delays, 0.99) * 1000:.0f} ms")  # fmt: skip
            arrivals.close()
    server.close()


if __name__ == "__main__":
    main()
