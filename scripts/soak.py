"""A seeded chaos soak: pipelines under load, random faults, and every record counted.

    .venv/bin/python scripts/soak.py --minutes N --seed S [--json PATH] [--rate R]
        [--mqtt-rate R] [--no-postgres] [--no-mqtt] [--keep]

It runs a Kafka-compatible broker of its own (the embedded Tansu, a process of this script's),
and a real worker process on it (``embedded.broker.enable=false``, so killing the worker
leaves the topic's data alone), with real Spark. Pipelines, every record numbered (``seq``):

- a FileStreamSource over a file this script appends to at ``--rate`` lines a second, into a
  topic of one partition;
- a FileStreamSink of that topic into a file;
- the lake sink of that topic into Parquet files (exactly once, judged per Kafka record);
- when PostgreSQL is installed (``scripts/setup.sh --tests``), the JDBC sink of that topic into
  a table keyed by the Kafka coordinates (upsert), on a PostgreSQL server of its own;
- when Mosquitto and paho-mqtt are installed, the MQTT source (QoS 1, a persistent session)
  of a Mosquitto of its own, fed by a device of this script's at ``--mqtt-rate``.

A REST client runs all along at a steady rate: status, offsets, the list, plugins, validate,
pause and resume, connector restarts and config updates. Faults come from ``--seed`` (the same
seed, the same sequence of faults and parameters): ``kill -9`` of the worker, of the
data-plane process and of Spark's JVM; SIGSTOP of the broker for 5-15 s; a connector restart
with its tasks; the source STOPPED, its offsets reset to an earlier record and RUNNING again;
a new ``tasks.max`` for the file sink; a burst of slow and bad REST clients; ``kill -9`` of
PostgreSQL and of Mosquitto (then started again). The script acts as the worker's operator:
it starts a killed worker again, as a service manager would, and restarts FAILED tasks, as an
operator would, and it counts both. After each fault it waits until the worker is healthy
again (``/health`` 200, every connector and task RUNNING, a record written after the fault in
the file sink's output, and a message published after it in the MQTT source's topic) and
records how long that took.

At the end it stops writing, drains, and checks every sink against what was sent (see
``scripts/soak_ledger.py``), samples of the RSS, threads and open files of the worker, the data
plane and the JVM (every 2 s; growth judged like for like, over the longest life of each and
across lives at the same age), and that no process is left behind. It prints a summary,
writes the JSON (``--json``), and exits 0 exactly when ``ok`` is true: nothing lost, no
duplicate in the lake, every fault recovered, no process's RSS grown over 15% after the
warm-up, threads and open files not grown, and nothing left running. A failure prints the seed
and the fault sequence, to run the same again.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from connect_lite.api.records import TopicPartition  # noqa: E402
from connect_lite.testing import EmbeddedConnect, HttpClient, KafkaHelpers  # noqa: E402
from connect_lite.testing.processes import alive, descendants  # noqa: E402
from scripts.soak_ledger import (  # noqa: E402
    KIND_MQTT,
    KIND_POSTGRES,
    KINDS_ALWAYS,
    RSS_GROWTH_LIMIT,
    Fault,
    Growth,
    LakeFile,
    Sample,
    SinkCount,
    count_lake,
    count_stream,
    count_table,
    count_topic,
    growth,
    plan_faults,
)

TOPIC = "soak"
MQTT_TOPIC = "soak/device"
"""The MQTT topic the device publishes to; the MQTT source copies it to Kafka's MQTT_KAFKA."""
MQTT_KAFKA = "soak-mqtt"
SCHEMA = {
    "type": "struct",
    "name": "Soak",
    "optional": False,
    "fields": [
        {"field": "seq", "type": "int64", "optional": False},
        {"field": "ts", "type": "int64", "optional": False},
    ],
}
SAMPLE_S = 2.0
WARMUP_S = 60.0
"""A process's warm-up before its growth is judged. Fixed, not a share of the run: with a
fault every 20 s or so, a process lives 2-4 minutes, however long the run (40 minutes,
seed 11: the longest life was 254 s, and a tenth of the run, 240 s, left nothing to judge)."""
REST_PAUSE_S = 0.25
READS = ("status", "status", "offsets", "list", "plugins", "validate", "topics")
MUTATIONS = ("pause_resume", "restart", "update")
MUTATE_EVERY = 40
"""One request in this many changes something (every 10 s): pause and resume, a connector
restart, a config update. Each restarts tasks, which then join their group again."""
RECOVERY_TIMEOUT_S = 240.0
DRAIN_TIMEOUT_S = 300.0
FAILED_RESTART_GRACE_S = 3.0
"""How long a FAILED task is left alone before the operator restarts it."""
SLOW_LOG_S = 30.0
"""A recovery this slow logs what it still waits for, and again each time as long."""
WATCHED = ("worker", "dataplane", "jvm")
LAKE_NAME = re.compile(r"^(?P<topic>.+)\+(?P<partition>\d+)\+(?P<first>\d+)\+(?P<last>\d+)\.")


def log(message: str) -> None:
    print(f"[soak {time.strftime('%H:%M:%S')}] {message}", flush=True)


# -- processes ----------------------------------------------------------------------------------


def cmdline(pid: int) -> str:
    try:
        return (
            Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        )
    except OSError:
        return ""


def watched_pids(worker_pid: int | None) -> dict[str, int]:
    """The worker, its data-plane process and Spark's JVM, those that run."""
    if worker_pid is None or not alive(worker_pid):
        return {}
    found = {"worker": worker_pid}
    for pid in descendants(worker_pid):
        text = cmdline(pid)
        if "connect_lite.dataplane.main" in text and "dataplane" not in found:
            found["dataplane"] = pid
        elif text.split(" ", 1)[0].endswith("java") and "jvm" not in found:
            found["jvm"] = pid
    return found


def reading(pid: int) -> tuple[int, int, int] | None:
    """(RSS kB, threads, open files) of a live process."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None
    values = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    try:
        return int(values["VmRSS"].split()[0]), int(values["Threads"]), fds
    except (KeyError, ValueError):
        return None


# -- the load -----------------------------------------------------------------------------------


class Writer:
    """Appends numbered JSON lines to the source's file at a steady rate; knows where each
    line starts, so an offsets reset can name a line."""

    def __init__(self, path: Path, rate: float) -> None:
        self.path = path
        self.rate = rate
        self.starts: list[int] = []
        self.size = 0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="writer", daemon=True)

    @property
    def sent(self) -> int:
        with self._lock:
            return len(self.starts)

    def start(self) -> None:
        self.path.touch()
        self._thread.start()

    def _run(self) -> None:
        begun = time.monotonic()
        with self.path.open("ab") as out:
            while not self._stop.wait(0.05):
                due = int((time.monotonic() - begun) * self.rate) - len(self.starts)
                if due <= 0:
                    continue
                chunk = bytearray()
                starts = []
                now_ms = int(time.time() * 1000)
                for seq in range(len(self.starts), len(self.starts) + due):
                    starts.append(self.size + len(chunk))
                    payload = {"seq": seq, "ts": now_ms}
                    chunk += json.dumps({"schema": SCHEMA, "payload": payload}).encode() + b"\n"
                out.write(chunk)
                out.flush()
                with self._lock:
                    self.starts += starts
                    self.size += len(chunk)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)

    def seq_at(self, position: int) -> int:
        """The seq of the line starting at or after byte ``position``."""
        with self._lock:
            lo, hi = 0, len(self.starts)
            while lo < hi:
                mid = (lo + hi) // 2
                if self.starts[mid] < position:
                    lo = mid + 1
                else:
                    hi = mid
            return lo


class Tail:
    """Reads the file sink's output as it grows: the seqs in delivery order."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.seqs: list[int] = []
        self.bad_lines = 0
        self._offset = 0
        self._lock = threading.Lock()

    def read(self) -> list[int]:
        with self._lock:
            try:
                with self.path.open("rb") as f:
                    f.seek(self._offset)
                    data = f.read()
            except FileNotFoundError:
                return self.seqs
            end = data.rfind(b"\n") + 1
            for line in data[:end].splitlines():
                try:
                    self.seqs.append(int(json.loads(line)["payload"]["seq"]))
                except (ValueError, KeyError, TypeError):
                    self.bad_lines += 1
            self._offset += end
            return self.seqs


class Device:
    """An MQTT device: publishes numbered messages (the payload is the seq) at a steady rate
    with QoS 1, in a persistent session, to Mosquitto. paho keeps what the broker has not
    acknowledged and sends it again after a reconnect, so every seq reaches the broker."""

    def __init__(self, host: str, port: int, rate: float) -> None:
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode

        self._codes = MQTTErrorCode
        self.rate = rate
        self.sent = 0
        self.given_up = 0
        self._infos: list[Any] = []
        self._stop = threading.Event()
        self._client = mqtt.Client(
            CallbackAPIVersion.VERSION2, client_id="soak-device", clean_session=False
        )
        self._client.max_queued_messages_set(0)  # no bound: the broker may be away
        self._client.max_inflight_messages_set(0)  # none queued behind a bound: in order
        self._held = threading.Event()
        self._client.on_disconnect = lambda *args: self._held.set()
        self._client.reconnect_delay_set(0.1, 1)
        self._client.connect_async(host, port)
        self._client.loop_start()
        self._thread = threading.Thread(target=self._run, name="device", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        begun = time.monotonic()
        while not self._stop.wait(0.05):
            try:
                self._infos = [i for i in self._infos if not i.is_published()]
            except (RuntimeError, ValueError) as error:  # paho gave a message up: say so
                log(f"the device lost a message: {error}")
                self.given_up += 1
                self._infos = []
            if self._held.is_set():
                # After a lost connection paho sends what the broker has not acknowledged
                # again, once the new one is accepted; a message published meanwhile could go
                # out first. Hold the new ones until connected and the old ones acknowledged
                # (a device that must keep its order does the same).
                if self._infos or not self._client.is_connected():
                    continue
                self._held.clear()
            due = int((time.monotonic() - begun) * self.rate) - self.sent
            for _ in range(max(0, due)):
                info = self._client.publish(MQTT_TOPIC, str(self.sent).encode(), qos=1)
                if info.rc == self._codes.MQTT_ERR_NO_CONN:
                    # The broker is away: paho keeps a QoS 1 message and sends it once
                    # connected again, and then it can be acknowledged like any other.
                    info.rc = self._codes.MQTT_ERR_SUCCESS
                self._infos.append(info)
                self.sent += 1

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def stop(self, timeout: float = 120) -> bool:
        """Stop publishing; True once the broker acknowledged every message."""
        self._stop.set()
        self._thread.join(10)
        deadline = time.monotonic() + timeout
        while any(not i.is_published() for i in self._infos):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.2)
        return True

    def close(self) -> None:
        self._client.loop_stop()
        self._client.disconnect()


class TopicTail:
    """Reads a topic from its start as it grows (assigned, no group): the seq in each
    record's value (a number in plain text)."""

    def __init__(self, bootstrap_servers: str, topic: str) -> None:
        from connect_lite.kafka import Consumer

        self.seqs: list[int] = []
        self._consumer = Consumer(
            {
                "bootstrap.servers": bootstrap_servers,
                "group.id": f"soak-tail-{os.getpid()}",
                "enable.auto.commit": "false",
                "auto.offset.reset": "earliest",
            }
        )
        self._consumer.assign({TopicPartition(topic, 0): 0})
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"tail-{topic}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                batch = self._consumer.poll_batch(10_000, 0.5)
            except Exception:  # the broker away for a moment: read on
                time.sleep(0.5)
                continue
            for message in batch:
                with contextlib.suppress(ValueError):
                    self.seqs.append(int(message.value or b""))

    def highest(self) -> int:
        return max(self.seqs[-200:], default=-1)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(10)
        self._consumer.close()


# -- the run ------------------------------------------------------------------------------------


@dataclass
class FaultRecord:
    kind: str
    at_s: float
    recovered_s: float | None
    param: int = 0
    operator: list[str] = field(default_factory=list)
    """What the operator (this script) did to recover: ``start worker``, ``restart <name>``."""
    error: str | None = None


class Soak:
    def __init__(self, args: argparse.Namespace, work: Path) -> None:
        self.args = args
        self.work = work
        self.began = time.monotonic()
        self.rng = random.Random(args.seed + 1)  # the REST client's choices
        self.source_file = work / "in.jsonl"
        self.sink_file = work / "out.jsonl"
        self.lake_dir = work / "lake"
        self.writer = Writer(self.source_file, args.rate)
        self.tail = Tail(self.sink_file)
        self.expected_extra: Counter[int] = Counter()
        self.faults: list[FaultRecord] = []
        self.samples: dict[tuple[str, str], list[Sample]] = {}
        self.seen_pids: set[int] = set()
        self.rest_counts: Counter[str] = Counter()
        self.rest_5xx: list[str] = []
        self.quiet = threading.Lock()
        """Held by a fault and its recovery: the REST client changes nothing meanwhile."""
        self.stopping = threading.Event()
        self.connect: EmbeddedConnect | None = None
        self.postgres: Any = None
        self.database = "soak"
        self.mosquitto: Any = None
        self.device: Device | None = None
        self.mqtt_tail: TopicTail | None = None
        self.connectors: dict[str, dict[str, str]] = {}
        self.sink_tasks = 1
        self.worker_starts = 0
        self.problems: list[str] = []
        """What went wrong outside the books and the faults."""

    # -- set-up -------------------------------------------------------------------------------
    def now(self) -> float:
        return round(time.monotonic() - self.began, 1)

    @property
    def worker(self) -> EmbeddedConnect:
        assert self.connect is not None
        return self.connect

    def start(self) -> None:
        if not self.args.no_postgres:
            self._start_postgres()
        if not self.args.no_mqtt:
            self._start_mosquitto()
        self.connect = EmbeddedConnect(
            workdir=self.work / "worker",
            worker_properties={
                "offset.flush.interval.ms": "1000",
                "connector.allowed.paths": str(self.work),
            },
            startup_timeout=180,
            request_timeout=30,
        )
        self.connect.start()
        self.worker_starts = 1
        log(f"worker up (pid {self.worker.worker_pid}), broker {self.worker.bootstrap_servers}")
        kafka = KafkaHelpers(self.worker.bootstrap_servers)
        kafka.create_topic(TOPIC, 1)
        if self.mosquitto is not None:
            kafka.create_topic(MQTT_KAFKA, 1)
            self.mqtt_tail = TopicTail(self.worker.bootstrap_servers, MQTT_KAFKA)
        self.connectors = self._configs()
        for name, config in self.connectors.items():
            self.worker.client.configure(name, config)
        for name in self.connectors:
            self.worker.wait_running(name, timeout=180)
        self.writer.start()
        if self.mosquitto is not None:
            self.device = Device(self.mosquitto.host, self.mosquitto.port, self.args.mqtt_rate)
            self.device.start()
        log(f"pipelines running: {', '.join(self.connectors)}; writing {self.args.rate:g}/s")

    def _start_postgres(self) -> None:
        try:
            from connect_lite.testing.postgres import PostgresServer

            self.postgres = PostgresServer().start()
            self.postgres.create_database(self.database)
            log(f"PostgreSQL on port {self.postgres.port}")
        except Exception as error:  # not installed: the JDBC sink sits out
            log(f"no PostgreSQL ({error}); the JDBC sink sits out")
            self.postgres = None

    def _start_mosquitto(self) -> None:
        try:
            import paho.mqtt.client  # noqa: F401  (the mqtt extra)

            from connect_lite.testing.mosquitto import MosquittoServer

            # Saved at every change, not each second: a kill -9 of Mosquitto then loses
            # nothing it acknowledged (see docs/soak.md).
            self.mosquitto = MosquittoServer(save_every_change=True).start()
            log(f"Mosquitto on port {self.mosquitto.port}")
        except Exception as error:  # not installed: the MQTT source sits out
            log(f"no Mosquitto or paho-mqtt ({error}); the MQTT source sits out")
            self.mosquitto = None

    def _configs(self) -> dict[str, dict[str, str]]:
        json_values = {
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "true",
        }
        configs = {
            "soak-source": {
                "connector.class": "FileStreamSource",
                "file": str(self.source_file),
                "topic": TOPIC,
                "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            },
            "soak-file": {
                "connector.class": "FileStreamSink",
                "topics": TOPIC,
                "file": str(self.sink_file),
                "tasks.max": str(self.sink_tasks),
                "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            },
            "soak-lake": {
                "connector.class": "LakeSink",
                "topics": TOPIC,
                "store.url": self.lake_dir.as_uri(),
                "flush.size": "2000",
                "rotate.schedule.interval.ms": "5000",
                **json_values,
            },
        }
        if self.postgres is not None:
            configs["soak-jdbc"] = {
                "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
                "topics": TOPIC,
                "connection.url": self.postgres.url(self.database),
                "connection.user": self.postgres.user,
                "insert.mode": "upsert",
                "pk.mode": "kafka",
                "auto.create": "true",
                "max.retries": "100",
                "retry.backoff.ms": "1000",
                **json_values,
            }
        if self.mosquitto is not None:
            configs["soak-mqtt"] = {
                "connector.class": "io.confluent.connect.mqtt.MqttSourceConnector",
                "tasks.max": "1",
                "mqtt.server.uri": self.mosquitto.uri,
                "mqtt.topics": MQTT_TOPIC,
                "kafka.topic": MQTT_KAFKA,
                "mqtt.qos": "1",
                "mqtt.clean.session.enabled": "false",
                "confluent.topic.bootstrap.servers": self.worker.bootstrap_servers,
                "confluent.topic.replication.factor": "1",
                "key.converter": "org.apache.kafka.connect.storage.StringConverter",
                "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
            }
        return configs

    # -- sampling -----------------------------------------------------------------------------
    def sampler(self) -> None:
        while not self.stopping.wait(SAMPLE_S):
            self.sample()

    def sample(self) -> None:
        connect = self.connect
        if connect is None:
            return
        t = time.monotonic() - self.began
        for name, pid in watched_pids(connect.worker_pid).items():
            self.seen_pids.add(pid)
            values = reading(pid)
            if values is None:
                continue
            for figure, value in zip(("rss", "threads", "fds"), values, strict=True):
                self.samples.setdefault((name, figure), []).append(Sample(t, pid, value))
        if connect.worker_pid is not None:
            self.seen_pids.update(descendants(connect.worker_pid))

    # -- the REST client ----------------------------------------------------------------------
    def rest_client(self) -> None:
        """A read every REST_PAUSE_S; every MUTATE_EVERY-th request changes something."""
        tick = 0
        while not self.stopping.wait(REST_PAUSE_S):
            tick += 1
            kinds = MUTATIONS if tick % MUTATE_EVERY == 0 else READS
            action = self.rng.choice(kinds)
            name = self.rng.choice(sorted(self.connectors))
            try:
                self._rest_action(action, name)
            except OSError:
                self.rest_counts["unreachable"] += 1

    def _rest_action(self, action: str, name: str) -> None:
        http = HttpClient(self.worker.rest_url, timeout=30)
        calls: list[tuple[str, str, Any]] = []
        if action == "status":
            calls = [("GET", f"/connectors/{name}/status", None)]
        elif action == "offsets":
            calls = [("GET", f"/connectors/{name}/offsets", None)]
        elif action == "list":
            calls = [("GET", "/connectors?expand=status&expand=info", None)]
        elif action == "plugins":
            calls = [("GET", "/connector-plugins", None)]
        elif action == "topics":
            calls = [("GET", f"/connectors/{name}/topics", None)]
        elif action == "validate":
            config = self.connectors[name]
            plugin = config["connector.class"]
            calls = [("PUT", f"/connector-plugins/{plugin}/config/validate", config)]
        if calls:
            for method, path, body in calls:
                self._count(action, http.request(method, path, body).status, method, path)
            return
        if not self.quiet.acquire(blocking=False):
            return  # a fault is on: the client changes nothing
        try:
            if action == "pause_resume":
                self._count(action, http.put(f"/connectors/{name}/pause").status, "PUT", "pause")
                time.sleep(self.rng.uniform(0.2, 1.0))
                self._count(action, http.put(f"/connectors/{name}/resume").status, "PUT", "resume")
            elif action == "restart":
                status = http.post(f"/connectors/{name}/restart").status
                self._count(action, status, "POST", f"/connectors/{name}/restart")
            elif action == "update":
                config = {**self.connectors[name], "soak.touched": str(self.now())}
                status = http.put(f"/connectors/{name}/config", config).status
                self._count(action, status, "PUT", f"/connectors/{name}/config")
        finally:
            self.quiet.release()

    def _count(self, action: str, status: int, method: str, path: str) -> None:
        self.rest_counts[f"{action} {status}"] += 1
        if status >= 500:
            self.rest_5xx.append(f"{self.now()}s {method} {path} -> {status}")

    # -- health -------------------------------------------------------------------------------
    def healthy(self, since_seq: int, record: FaultRecord, deadline: float) -> bool:
        """Wait until the worker is healthy and a record written after the fault (seq >=
        ``since_seq``) is in the file sink's output (and a message published after it is in
        the MQTT source's topic), acting as the operator meanwhile. A long wait logs, every
        SLOW_LOG_S, what it still waits for."""
        failed_since: dict[str, float] = {}
        device = self.device
        mqtt_since = -1 if device is None else device.sent - (1 if device.stopped else 0)
        began = next_log = time.monotonic()
        while time.monotonic() < deadline:
            proc_gone = self.worker.worker_pid is None or not alive(self.worker.worker_pid)
            if proc_gone:
                code = self.worker.worker_exit_code
                record.operator.append(f"start worker (it exited: {code})")
                self._start_worker()
                continue
            waiting = self._not_running(failed_since, record)
            if not self._delivered(since_seq):
                waiting.append(f"file sink at seq {max(self.tail.seqs[-50:], default=-1)}")
            if self.mqtt_tail is not None and self.mqtt_tail.highest() < mqtt_since:
                waiting.append(f"MQTT topic at seq {self.mqtt_tail.highest()}")
            if not waiting:
                return True
            if time.monotonic() >= next_log + SLOW_LOG_S:
                next_log = time.monotonic()
                log(f"  after {next_log - began:.0f} s still waiting for: {'; '.join(waiting)}")
            time.sleep(0.25)
        return False

    def _start_worker(self) -> None:
        with contextlib.suppress(Exception):
            self.worker.stop_worker()  # what the dead one left running
        self.worker.start_worker(wait_healthy=False)
        self.worker_starts += 1

    def _not_running(self, failed_since: dict[str, float], record: FaultRecord) -> list[str]:
        """What is not healthy yet (empty when everything is): /health, and each connector
        and task RUNNING. Restarts a task FAILED for FAILED_RESTART_GRACE_S, as an operator."""
        http = HttpClient(self.worker.rest_url, timeout=10)
        waiting = []
        try:
            health = http.get("/health").status
            if health != 200:
                waiting.append(f"/health {health}")
            for name in self.connectors:
                answer = http.get(f"/connectors/{name}/status")
                if answer.status != 200:
                    waiting.append(f"{name} status {answer.status}")
                    continue
                status = answer.body
                states = [status["connector"]["state"]] + [t["state"] for t in status["tasks"]]
                if "FAILED" in states:
                    first = failed_since.setdefault(name, time.monotonic())
                    if time.monotonic() - first >= FAILED_RESTART_GRACE_S:
                        query = "?includeTasks=true&onlyFailed=true"
                        http.post(f"/connectors/{name}/restart{query}")
                        record.operator.append(f"restart {name}")
                        failed_since.pop(name)
                if set(states) != {"RUNNING"} or not status["tasks"]:
                    waiting.append(f"{name} {'/'.join(states)}")
        except OSError as error:
            waiting.append(f"REST: {error}")
        return waiting

    def _delivered(self, since_seq: int) -> bool:
        seqs = self.tail.read()
        return bool(seqs) and max(seqs[-50:]) >= since_seq

    # -- faults -------------------------------------------------------------------------------
    def run_faults(self, plan: list[Fault], until: float, least: int) -> None:
        """The planned faults until ``until``, and at least ``least`` of them."""
        for fault in plan:
            if time.monotonic() >= until and len(self.faults) >= least:
                return
            time.sleep(fault.gap_s)
            with self.quiet:
                record = FaultRecord(fault.kind, self.now(), None, fault.param)
                self.faults.append(record)
                log(f"fault {len(self.faults)}: {fault.kind} ({fault.param})")
                try:
                    getattr(self, f"fault_{fault.kind}")(fault.param, record)
                except Exception as error:
                    record.error = f"{type(error).__name__}: {error}"
                    log(f"  the fault itself failed: {record.error}")
                ended = time.monotonic()
                since = self.writer.sent
                if self.healthy(since, record, ended + RECOVERY_TIMEOUT_S):
                    record.recovered_s = round(time.monotonic() - ended, 2)
                    log(f"  recovered in {record.recovered_s} s {record.operator or ''}")
                else:
                    log(f"  NOT recovered in {RECOVERY_TIMEOUT_S:.0f} s {record.operator}")

    def fault_kill_worker(self, param: int, record: FaultRecord) -> None:
        self.worker.kill_worker()
        record.operator.append("start worker")
        self._start_worker()

    def _kill_watched(self, which: str) -> None:
        pid = watched_pids(self.worker.worker_pid).get(which)
        if pid is None:
            raise RuntimeError(f"no {which} process to kill")
        os.kill(pid, signal.SIGKILL)

    def fault_kill_dataplane(self, param: int, record: FaultRecord) -> None:
        self._kill_watched("dataplane")

    def fault_kill_jvm(self, param: int, record: FaultRecord) -> None:
        self._kill_watched("jvm")

    def fault_pause_broker(self, seconds: int, record: FaultRecord) -> None:
        pid = self.worker.broker_pid
        if pid is None:
            raise RuntimeError("no broker pid")
        os.kill(pid, signal.SIGSTOP)
        try:
            time.sleep(seconds)
        finally:
            os.kill(pid, signal.SIGCONT)

    def fault_restart_connector(self, param: int, record: FaultRecord) -> None:
        name = sorted(self.connectors)[param % len(self.connectors)] if param else "soak-file"
        self.worker.client.restart(name, include_tasks=True)

    def fault_reset_source_offsets(self, back: int, record: FaultRecord) -> None:
        """STOPPED, offsets moved ``back`` records before the committed one, RUNNING: the
        records from there to the committed offset are sent again (expected re-deliveries)."""
        client = self.worker.client
        client.stop("soak-source")
        self.worker.wait_state("soak-source", "STOPPED", timeout=60)
        offsets = client.offsets("soak-source")
        position = int(offsets[0]["offset"]["position"]) if offsets else 0
        committed = self.writer.seq_at(position)
        target = max(0, committed - back)
        start = self.writer.starts[target] if target < len(self.writer.starts) else position
        partition = {"filename": str(self.source_file)}
        client.alter_offsets(
            "soak-source", [{"partition": partition, "offset": {"position": start}}]
        )
        for seq in range(target, committed):
            self.expected_extra[seq] += 1
        client.resume("soak-source")

    def fault_change_tasks_max(self, tasks: int, record: FaultRecord) -> None:
        self.sink_tasks = tasks
        self.connectors["soak-file"]["tasks.max"] = str(tasks)
        self.worker.client.configure("soak-file", self.connectors["soak-file"])

    def fault_bad_rest_clients(self, count: int, record: FaultRecord) -> None:
        """``count`` clients at once: half hold a request open byte by byte (slow), half send
        malformed requests; the worker must answer a plain GET meanwhile."""
        url = self.worker.rest_url.removeprefix("http://")
        host, port = url.split(":")[0], int(url.split(":")[1].split("/")[0])
        threads = [
            threading.Thread(target=_slow_client if i % 2 else _bad_client, args=(host, port, i))
            for i in range(count)
        ]
        for thread in threads:
            thread.start()
        time.sleep(1.0)
        began = time.monotonic()
        answer = HttpClient(self.worker.rest_url, timeout=10).get("/connectors")
        waited = time.monotonic() - began
        if answer.status != 200 or waited > 5:
            record.error = f"GET /connectors during the burst: {answer.status} in {waited:.1f} s"
        for thread in threads:
            thread.join(30)

    def fault_kill_mosquitto(self, param: int, record: FaultRecord) -> None:
        _crash_and_resume(self.mosquitto, "Mosquitto")

    def fault_kill_postgres(self, param: int, record: FaultRecord) -> None:
        _crash_and_resume(self.postgres, "PostgreSQL")

    # -- the end ------------------------------------------------------------------------------
    def drain(self) -> bool:
        """Wait until every sink holds every record sent; False after DRAIN_TIMEOUT_S."""
        sent = set(range(self.writer.sent))
        deadline = time.monotonic() + DRAIN_TIMEOUT_S
        record = FaultRecord("drain", self.now(), None)
        if not self.healthy(len(sent) - 1, record, deadline):
            return False

        def holds(seqs: Callable[[], set[int]], expected: set[int]) -> Callable[[], bool]:
            return lambda: expected <= seqs()

        checks = [
            holds(lambda: set(self.tail.read()), sent),
            holds(lambda: {s for f in self.lake_files() for s in f.seqs}, sent),
        ]
        if self.postgres is not None:
            checks.append(holds(lambda: {s for _, _, s in self.table_rows()}, sent))
        if self.device is not None and self.mqtt_tail is not None:
            tail = self.mqtt_tail
            checks.append(holds(lambda: set(tail.seqs), set(range(self.device.sent))))
        for check in checks:
            while not check():
                if time.monotonic() > deadline:
                    return False
                time.sleep(2)
        return True

    def lake_files(self) -> list[LakeFile]:
        import pyarrow.parquet as pq

        root = self.lake_dir
        files = []
        if not root.exists():
            return []
        for path in sorted(root.rglob("*.parquet")):
            if any(p.startswith((".", "_")) for p in path.relative_to(root).parts):
                continue
            match = LAKE_NAME.match(path.name)
            if match is None:
                continue
            seqs = tuple(pq.read_table(path, columns=["seq"]).column("seq").to_pylist())
            files.append(
                LakeFile(
                    path.name,
                    int(match["partition"]),
                    int(match["first"]),
                    int(match["last"]),
                    seqs,
                )
            )
        return files

    def table_rows(self) -> list[tuple[int, int, int]]:
        try:
            rows = self.postgres.query(
                self.database,
                f'SELECT __connect_partition, __connect_offset, seq FROM "{TOPIC}"',
            )
        except Exception:
            return []
        return [(int(p), int(o), int(s)) for p, o, s in rows]

    def topic_records(self, topic: str = TOPIC) -> dict[tuple[int, int], int]:
        messages = KafkaHelpers(self.worker.bootstrap_servers).consume(topic, timeout=120, idle=3)
        records = {}
        for m in messages:
            try:
                value = json.loads(m.value or b"")
                seq = value if isinstance(value, int) else value["payload"]["seq"]
                records[(m.partition, m.offset)] = int(seq)
            except (ValueError, KeyError, TypeError):
                records[(m.partition, m.offset)] = -1
        return records

    def books(self) -> dict[str, SinkCount]:
        sent = range(self.writer.sent)
        topic = self.topic_records()
        books = {
            "source": count_topic(sent, topic, self.expected_extra),
            "file": count_stream(sent, self.tail.read(), self.expected_extra),
            "lake": count_lake(sent, self.lake_files(), topic, self.expected_extra),
        }
        if self.postgres is not None:
            books["jdbc"] = count_table(sent, self.table_rows(), topic, self.expected_extra)
        if self.device is not None:
            books["mqtt"] = count_topic(range(self.device.sent), self.topic_records(MQTT_KAFKA), {})
        return books

    def growth(self) -> dict[str, Any]:
        """Growth per figure (None where no life was long enough to judge: see MIN_JUDGED_S)."""
        warmup = WARMUP_S
        result: dict[str, Any] = {}
        details: dict[str, Any] = {}

        def judged(found: list[Growth]) -> float | None:
            known = [g.worst for g in found if (g.longest_life, g.across_lives) != (None, None)]
            return round(max(known), 3) if known else None

        for name in WATCHED:
            rss = growth(self.samples.get((name, "rss"), []), warmup)
            result[f"{name}_rss"] = judged([rss])
            details[f"{name}_rss"] = asdict(rss)
        for figure in ("threads", "fds"):
            changes = {
                name: growth(self.samples.get((name, figure), []), warmup, relative=False)
                for name in WATCHED
            }
            result[figure] = judged(list(changes.values()))
            details.update({f"{name}_{figure}": asdict(g) for name, g in changes.items()})
        result["warmup_s"] = warmup
        samples = {
            f"{name}_{figure}": [[round(x.t, 1), x.pid, x.value] for x in values]
            for (name, figure), values in sorted(self.samples.items())
        }
        return {"growth": result, "growth_detail": details, "samples": samples}

    def close(self) -> int:
        """Stop everything; how many processes are left behind."""
        self.stopping.set()
        pids = set(self.seen_pids)
        for stop in (  # the script's own clients first, while their servers still answer
            self.device and self.device.close,
            self.mqtt_tail and self.mqtt_tail.close,
        ):
            if stop:
                with contextlib.suppress(Exception):
                    stop()
        if self.connect is not None:
            broker = self.connect.broker_pid
            if broker is not None:
                pids.add(broker)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(broker, signal.SIGCONT)
            self.connect.close()
        for server in (self.postgres, self.mosquitto):
            if server is not None:
                with contextlib.suppress(Exception):
                    server.stop()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(alive(p) for p in pids):
            time.sleep(0.2)
        marker = str(self.work)
        stray = {p for p in pids if alive(p)}
        for proc in Path("/proc").glob("[0-9]*"):
            pid = int(proc.name)
            if pid != os.getpid() and marker in cmdline(pid) and alive(pid):
                stray.add(pid)
        for pid in stray:
            log(f"left behind: {pid} {cmdline(pid)[:120]}")
        return len(stray)


def _crash_and_resume(server: Any, name: str) -> None:
    """``kill -9`` of a server of the soak's own (every process of it), started again on the
    same port 2 s later."""
    if server is None:
        raise RuntimeError(f"no {name}")
    server.crash()
    time.sleep(2)
    server.resume()


def _slow_client(host: str, port: int, i: int) -> None:
    """Sends the start of a request one byte every 0.5 s for 6 s, then drops the connection."""
    with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=10) as s:
        for byte in b"GET /connectors":
            s.sendall(bytes([byte]))
            time.sleep(0.5)


BAD_REQUESTS = [
    b"POST /connectors HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    b"Content-Length: 9\r\n\r\n{not json",
    b"PUT /connectors/x/config HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    b"Content-Length: 2000000\r\n\r\n" + b"[" * 20000,
    b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(range(64)),
    b"GET /connectors/%ff%fe/status HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    b"BREW /connectors HTTP/1.1\r\nHost: x\r\n\r\n",
]


def _bad_client(host: str, port: int, i: int) -> None:
    with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=10) as s:
        s.sendall(BAD_REQUESTS[i // 2 % len(BAD_REQUESTS)])
        with contextlib.suppress(OSError):
            s.recv(4096)


# -- main ---------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, required=True, help="how long faults go on")
    parser.add_argument("--seed", type=int, required=True, help="the fault sequence's seed")
    parser.add_argument("--json", type=Path, help="where the JSON report goes")
    parser.add_argument("--rate", type=float, default=200.0, help="records a second (200)")
    parser.add_argument(
        "--gap",
        type=float,
        nargs=2,
        default=(4.0, 12.0),
        metavar=("MIN", "MAX"),
        help="quiet seconds before each fault, drawn in [MIN, MAX]",
    )
    parser.add_argument(
        "--warm-up", type=float, default=20.0, help="seconds of load before the first fault (20)"
    )
    parser.add_argument(
        "--min-faults", type=int, default=6, help="faults go on past --minutes until this many (6)"
    )
    parser.add_argument("--no-postgres", action="store_true", help="without the JDBC sink")
    parser.add_argument("--no-mqtt", action="store_true", help="without the MQTT source")
    parser.add_argument("--mqtt-rate", type=float, default=50.0, help="MQTT messages a second (50)")
    parser.add_argument("--keep", action="store_true", help="keep the working directory")
    return parser.parse_args(argv)


def report(soak: Soak, books: dict[str, SinkCount], drained: bool, leftover: int) -> dict[str, Any]:
    growth = soak.growth()
    limits = growth["growth"]
    faults = [
        {k: v for k, v in asdict(f).items() if v not in (None, [], 0) or k == "recovered_s"}
        for f in soak.faults
    ]
    unrecovered = [f for f in soak.faults if f.recovered_s is None]
    lake = books["lake"]
    problems = [
        *(f"{name}: {c.lost} lost" for name, c in books.items() if c.lost),
        *([f"lake: {lake.duplicated} duplicated"] if lake.duplicated else []),
        *(
            [f"lake: {lake.extra['offsets_missing']} Kafka records in no file"]
            if lake.extra["offsets_missing"]
            else []
        ),
        *(f"{name}: {c.out_of_order} out of order" for name, c in books.items() if c.out_of_order),
        *(f"{f.kind} at {f.at_s} s not recovered" for f in unrecovered),
        *([] if drained else ["the sinks did not catch up at the end"]),
        *(
            f"{k} grew {v:.1%}"
            for k, v in limits.items()
            if k.endswith("_rss") and v is not None and v > RSS_GROWTH_LIMIT
        ),
        *([f"threads grew by {limits['threads']:g}"] if (limits["threads"] or 0) > 0 else []),
        *([f"open files grew by {limits['fds']:g}"] if (limits["fds"] or 0) > 0 else []),
        *([f"{leftover} processes left behind"] if leftover else []),
        *soak.problems,
    ]
    recoveries = [f.recovered_s for f in soak.faults if f.recovered_s is not None]
    return {
        "seed": soak.args.seed,
        "minutes": soak.args.minutes,
        "rate": soak.args.rate,
        "faults": faults,
        "recovery_s": {
            "p50": statistics.median(recoveries) if recoveries else None,
            "max": max(recoveries, default=None),
        },
        "sinks": {name: c.as_json() for name, c in books.items()},
        **growth,
        "rest": dict(sorted(soak.rest_counts.items())),
        "rest_5xx": soak.rest_5xx[:50],
        "worker_starts": soak.worker_starts,
        "leftover_processes": leftover,
        "problems": problems,
        "ok": not problems,
    }


def summary(result: dict[str, Any]) -> str:
    lines = [
        f"soak: seed {result['seed']}, {result['minutes']:g} min, {result['rate']:g} records/s, "
        f"{len(result['faults'])} faults, worker started {result['worker_starts']} times",
        f"recovery: p50 {result['recovery_s']['p50']} s, max {result['recovery_s']['max']} s",
    ]
    by_kind: dict[str, list[float]] = {}
    for f in result["faults"]:
        by_kind.setdefault(f["kind"], []).append(f["recovered_s"])
    for kind, times in sorted(by_kind.items()):
        lines.append(f"  {kind:<22} x{len(times):<3} recovered in {times}")
    lines.append(f"{'sink':<8}{'sent':>9}{'received':>10}{'lost':>6}{'dup':>6}{'order':>7}  more")
    for name, c in result["sinks"].items():
        more = {
            k: v
            for k, v in c.items()
            if k not in ("sent", "received", "lost", "duplicated", "out_of_order")
        }
        lines.append(
            f"{name:<8}{c['sent']:>9}{c['received']:>10}{c['lost']:>6}{c['duplicated']:>6}"
            f"{c['out_of_order']:>7}  {more}"
        )
    lines.append(f"growth (None: no life long enough to judge): {result['growth']}")
    lines.append(f"REST: {result['rest']}")
    if result["rest_5xx"]:
        lines.append(f"REST 5xx: {result['rest_5xx'][:10]}")
    lines.append(f"left behind: {result['leftover_processes']}")
    if result["ok"]:
        lines.append("ok: true")
    else:
        lines.append(f"ok: false: {'; '.join(result['problems'])}")
        sequence = ", ".join(f"{f['kind']}@{f['at_s']}" for f in result["faults"])
        lines.append(
            f"replay: scripts/soak.py --minutes {result['minutes']:g} "
            f"--seed {result['seed']}  (faults: {sequence})"
        )
    return "\n".join(lines)


@contextlib.contextmanager
def workspace(keep: bool) -> Iterator[Path]:
    work = Path(tempfile.mkdtemp(prefix="connect-lite-soak-"))
    try:
        yield work
    finally:
        if keep:
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def _interrupted(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _interrupted)  # cleaned up as on Ctrl-C
    kinds = list(KINDS_ALWAYS)
    with workspace(args.keep) as work:
        soak = Soak(args, work)
        result: dict[str, Any] | None = None
        try:
            soak.start()
            if soak.postgres is not None:
                kinds.append(KIND_POSTGRES)
            if soak.mosquitto is not None:
                kinds.append(KIND_MQTT)
            count = max(args.min_faults, int(args.minutes * 60 / 4))
            plan = plan_faults(args.seed, count, kinds, tuple(args.gap))
            background: list[Callable[[], None]] = [soak.sampler, soak.rest_client]
            for target in background:
                threading.Thread(target=target, name=target.__name__, daemon=True).start()
            time.sleep(args.warm_up)
            soak.run_faults(plan, time.monotonic() + args.minutes * 60, args.min_faults)
            log(f"{len(soak.faults)} faults done; draining")
            soak.writer.stop()
            if soak.device is not None and (not soak.device.stop() or soak.device.given_up):
                soak.problems.append("Mosquitto did not acknowledge every MQTT message")
            drained = soak.drain()
            soak.stopping.set()
            books = soak.books()
        except BaseException:
            traceback.print_exc()
            sequence = ", ".join(f"{f.kind}@{f.at_s}" for f in soak.faults)
            print(f"soak aborted: seed {args.seed}; faults so far: {sequence}", flush=True)
            with contextlib.suppress(Exception):
                print(f"worker log tail:\n{soak.worker.log_tail(3000)}")
            soak.close()
            return 2
        log_tail = soak.worker.log_tail(4000)
        leftover = soak.close()
        result = report(soak, books, drained, leftover)
        if not result["ok"]:
            print(f"worker log tail:\n{log_tail}")
        print(summary(result), flush=True)
        if args.json is not None:
            args.json.write_text(json.dumps(result, indent=2) + "\n")
        return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
