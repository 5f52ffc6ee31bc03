"""Benchmark: latency, cold start, REST responsiveness and memory of a connect-lite worker.

Everything runs in one go against embedded Tansu brokers on 127.0.0.1, with a real worker
process (EmbeddedConnect on the worker's own defaults, real Spark), and prints figures, never
verdicts. The broker of parts 1, 2, 4 and 5 is this script's, run at the worker's
data.plane.niceness as the worker's own embedded broker would be:

1. Single-record end-to-end latency with the worker's default settings (the keys of
   standalone.properties): one line appended to a FileStreamSource's file, timed until it is
   in a FileStreamSink's file, with a random 50-300 ms pause between lines so none batch.
   A raw consumer watching the topic splits each figure into legs: file -> source task read
   (the record's timestamp), read -> in the topic, topic -> sink file.
2. The raw confluent-kafka baseline on the same broker, in the same run (the worker idle):
   produce one record, flush, time until a subscribed consumer has it; with the consumer's
   default fetch.wait.max.ms and with 10 ms.
3. Cold start: a fresh worker with its own embedded broker (as shipped), a fresh data
   directory and the demo connectors given as files on the command line (as scripts/run.sh
   does), timed from the process start to REST answering, broker ready, Spark started, worker
   ready, the first record in the topic and the first line in the sink's file.
4. REST latency of GET /connectors/{name}/status and /offsets (alternating, on one keep-alive
   connection, 20 ms apart), idle and while a file -> Kafka -> file pipeline of
   ``--load-records`` JSON lines runs.
5. Memory: the resident set (VmRSS) of each process of the worker's tree, and of the broker,
   idle (10 s after the latency part, and at each further ``--idle-seconds``: Spark retires
   Python workers idle for a minute), busy (the largest sampled during the pipeline), and
   idle again 15 s after the pipeline's last record (the data plane has trimmed its heap).
   After the last idle sample, one more single record is timed (printed after part 2): with
   ``--idle-seconds`` over 60 it pays for Spark starting its Python workers again.

    flock /tmp/connect-lite-spark.lock .venv/bin/python scripts/bench_latency.py \\
        [--records 60] [--load-records 1000000] [--skip-cold-start] [--skip-load] \\
        [--idle-seconds 10 --idle-seconds 80] [--set key=value ...]

``--set key=value`` overrides a worker property (repeatable), to compare settings.
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import platform
import random
import re
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from confluent_kafka import OFFSET_BEGINNING, Consumer, Message, Producer, TopicPartition

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from connect_lite.config.properties import load_properties  # noqa: E402
from connect_lite.config.worker import WORKER_CONFIG_DEF  # noqa: E402
from connect_lite.kafka.broker import EmbeddedBroker  # noqa: E402
from connect_lite.testing import EmbeddedConnect, KafkaHelpers, free_port  # noqa: E402
from scripts.bench_pipeline import make_records  # noqa: E402
from scripts.demo.make_input import make_input  # noqa: E402

SHIPPED_PROPERTIES = REPO / "standalone.properties"
DEMO_CONNECTORS = [REPO / "scripts/demo/file-source.json", REPO / "scripts/demo/file-sink.json"]
ONE_PARTITION = {
    "topic.creation.default.partitions": "1",
    "topic.creation.default.replication.factor": "1",
}
PAUSE_RANGE_S = (0.05, 0.3)
"""The random pause between single records, so that none travel in the same batch."""
FILE_POLL_S = 0.002
RECORD_TIMEOUT_S = 60.0
REST_REQUESTS = 300
"""Requests of each kind in the idle phase (the busy phase lasts as long as the pipeline)."""
REST_PAUSE_S = 0.02
DATA_PLANE_NICENESS = int(WORKER_CONFIG_DEF.keys["data.plane.niceness"].default)
QUIET_S = 10.0
FOOTPRINT_IDLE_S = 60.0
"""The idle sample the footprint line reports: a minute with nothing flowing (always taken)."""
AFTER_LOAD_S = 15.0
FIRST_LINE_EVENT = "first line in the sink's file"
"""When idle memory is sampled again after the load (the data plane trims its heap after 5 s
without records; Spark ends idle Python workers only after 60 s)."""
MEMORY_SAMPLE_S = 0.25
COLD_START_TIMEOUT_S = 300.0
LOAD_TIMEOUT_S = 1800.0


# -- small helpers ---------------------------------------------------------------------------


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(1, math.ceil(p / 100 * len(ordered))) - 1]


def ms_row(label: str, seconds: Sequence[float], width: int = 52) -> str:
    ms = [s * 1000 for s in seconds]
    return (
        f"{label:<{width}}{len(ms):>5}{percentile(ms, 50):>10.1f}"
        f"{percentile(ms, 99):>10.1f}{max(ms):>10.1f}"
    )


def ms_header(title: str, width: int = 52) -> str:
    return f"{title:<{width}}{'n':>5}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}"


def file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def wait_for_size(path: Path, size: int, timeout: float) -> float:
    """Poll ``path`` until it holds ``size`` bytes; the perf_counter time it did."""
    deadline = time.perf_counter() + timeout
    while file_size(path) < size:
        if time.perf_counter() > deadline:
            raise SystemExit(f"{path} did not reach {size} bytes within {timeout:g} s")
        time.sleep(FILE_POLL_S)
    return time.perf_counter()


def pause() -> None:
    time.sleep(random.uniform(*PAUSE_RANGE_S))


def record_text(value: bytes | None) -> str:
    """A record's value as the line it came from: JsonConverter envelopes are unwrapped."""
    text = (value or b"").decode(errors="replace")
    try:
        decoded = json.loads(text)
    except ValueError:
        return text
    return str(decoded["payload"]) if isinstance(decoded, dict) and "payload" in decoded else text


def section(title: str) -> None:
    print(f"\n== {title}", flush=True)


def progress(message: str) -> None:
    print(f"   ... {message}", file=sys.stderr, flush=True)


# -- the worker ------------------------------------------------------------------------------


def shipped_props(changes: Mapping[str, str] | None = None) -> dict[str, str]:
    """standalone.properties as shipped, plus ``changes``; ``listeners`` is set at launch."""
    props = load_properties(SHIPPED_PROPERTIES)
    props["plugin.path"] = str(REPO / "plugins")  # "plugins" in the repo, from any directory
    return {**props, **(changes or {})}


def launch_worker(
    workdir: Path,
    props: Mapping[str, str],
    connector_files: Sequence[Path] = (),
    wait_healthy: bool = True,
) -> EmbeddedConnect:
    """The worker in ``workdir`` (its cwd) with ``props`` and a free REST port, on the
    worker's own defaults (not connect_lite.testing's FAST_DEFAULTS). ``props`` replace what
    EmbeddedConnect sets (plugin.path, state.storage.file...) where they name the same key."""
    props = {**props, "listeners": f"http://127.0.0.1:{free_port()}"}
    worker = EmbeddedConnect(
        start_broker=False,
        workdir=workdir,
        worker_properties=props,
        connector_files=connector_files,
        fast_defaults=False,
    )
    return worker.start(wait_healthy=wait_healthy)


def rest_port(worker: EmbeddedConnect) -> int:
    port = urlsplit(worker.rest_url).port
    assert port is not None
    return port


def put_connector(worker: EmbeddedConnect, name: str, config: Mapping[str, str]) -> None:
    response = worker.http.put(f"/connectors/{name}/config", dict(config))
    if response.status not in (200, 201):
        raise SystemExit(f"PUT /connectors/{name}/config: {response.status} {response.body}")


def file_pipeline(
    worker: EmbeddedConnect,
    name: str,
    src: Path,
    topic: str,
    out: Path,
    sink_extra: Mapping[str, str] | None = None,
) -> None:
    """A FileStreamSource ``{name}-source`` (src -> topic) and FileStreamSink ``{name}-sink``."""
    source = {"connector.class": "FileStreamSource", "file": str(src), "topic": topic}
    put_connector(worker, f"{name}-source", {**source, **ONE_PARTITION})
    sink = {"connector.class": "FileStreamSink", "file": str(out), "topics": topic}
    put_connector(worker, f"{name}-sink", {**sink, **(sink_extra or {})})


# -- 1. single-record latency through the worker -----------------------------------------------


class TopicWatcher:
    """A raw consumer on partition 0 of a topic, on its own thread: when each line first
    arrived, and its record timestamp (set by the source task as it read the line)."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.seen: dict[str, tuple[float, float]] = {}
        """line -> (perf_counter at arrival, record timestamp in epoch seconds)."""
        self._consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"bench-watch-{uuid.uuid4().hex[:6]}",
                "enable.auto.commit": False,
                "fetch.wait.max.ms": 10,
            }
        )
        self._consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="topic-watcher", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            message = self._consumer.poll(0.05)
            if message is None or message.error():
                continue
            arrived = time.perf_counter()
            stamp = message.timestamp()[1] / 1000
            self.seen.setdefault(record_text(message.value()), (arrived, stamp))

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._consumer.close()


@dataclass(frozen=True)
class Trip:
    """One line's trip; perf_counter times except ``appended_wall`` and ``read_wall``."""

    appended: float
    appended_wall: float
    in_sink: float
    in_topic: float | None
    read_wall: float | None

    @property
    def total(self) -> float:
        return self.in_sink - self.appended

    def legs(self) -> tuple[float, float, float] | None:
        """(appended -> read by the source task, read -> in the topic, topic -> sink file);
        None if the watcher missed the line."""
        if self.in_topic is None or self.read_wall is None:
            return None
        read = max(0.0, self.read_wall - self.appended_wall)
        to_topic = max(0.0, self.in_topic - self.appended - read)
        return read, to_topic, self.in_sink - self.in_topic


def append_line(path: Path, line: str) -> tuple[float, float]:
    """Append one line and flush it; (perf_counter, wall clock) just before the write."""
    with path.open("a") as out:
        began, wall = time.perf_counter(), time.time()
        out.write(line + "\n")
        out.flush()
    return began, wall


def single_record_trips(src: Path, out: Path, count: int, watcher: TopicWatcher) -> list[Trip]:
    trips = []
    size = file_size(out)
    for n in range(count):
        pause()
        line = f"latency-{n}-{uuid.uuid4().hex[:8]}"
        size += len(line) + 1
        appended, wall = append_line(src, line)
        in_sink = wait_for_size(out, size, RECORD_TIMEOUT_S)
        time.sleep(0.02)  # the watcher (fetch.wait.max.ms=10) read it long before the sink
        in_topic, read_wall = watcher.seen.get(line, (None, None))
        trips.append(Trip(appended, wall, in_sink, in_topic, read_wall))
    return trips


def latency_files(work: Path) -> tuple[Path, Path]:
    """The single-record pipeline's source and sink files."""
    return work / "latency-in.txt", work / "latency-out.txt"


def measure_worker_latency(
    worker: EmbeddedConnect, bootstrap: str, work: Path, count: int
) -> list[Trip]:
    src, out = latency_files(work)
    topic = f"latency-{uuid.uuid4().hex[:8]}"
    KafkaHelpers(bootstrap).create_topic(topic, partitions=1)
    warm = "warm-up"
    src.write_text(warm + "\n")
    file_pipeline(worker, "latency", src, topic, out)
    progress("waiting for the warm-up record (Spark's first jobs)")
    wait_for_size(out, len(warm) + 1, 300)
    watcher = TopicWatcher(bootstrap, topic)
    try:
        progress(f"{count} single records through the worker")
        return single_record_trips(src, out, count, watcher)
    finally:
        watcher.close()


def record_after_idle(work: Path) -> float:
    """One more line through the single-record pipeline, after nothing flowed for a while
    (Spark ends Python workers idle for a minute): seconds from appended to in the sink."""
    src, out = latency_files(work)
    line = f"after-idle-{uuid.uuid4().hex[:8]}"
    size = file_size(out) + len(line) + 1
    appended, _ = append_line(src, line)
    arrived = wait_for_size(out, size, RECORD_TIMEOUT_S)
    if out.read_text().splitlines()[-1] != line:
        raise SystemExit(f"{out} grew by something else than {line!r} (a record delivered again?)")
    return arrived - appended


def print_worker_latency(trips: Sequence[Trip]) -> None:
    section("1. Single-record latency, file -> worker -> Kafka -> worker -> file (defaults)")
    print(ms_header("path"))
    print(ms_row("end to end (line appended -> line in sink file)", [t.total for t in trips]))
    legs = [leg for leg in (t.legs() for t in trips) if leg is not None]
    names = (
        "  leg: appended -> source task read it (timestamp)",
        "  leg: read -> in the topic (a raw consumer has it)",
        "  leg: in the topic -> in the sink file",
    )
    for n, name in enumerate(names if legs else ()):
        print(ms_row(name, [leg[n] for leg in legs]))


# -- 2. the raw client baseline --------------------------------------------------------------


def round_trip(producer: Producer, consumer: Consumer, topic: str, value: bytes) -> float:
    """Produce ``value``, flush, poll until the consumer has it; the seconds it took."""
    began = time.perf_counter()
    producer.produce(topic, value)
    producer.flush(RECORD_TIMEOUT_S)
    deadline = began + RECORD_TIMEOUT_S
    while time.perf_counter() < deadline:
        message: Message | None = consumer.poll(0.1)
        if message is not None and not message.error() and message.value() == value:
            return time.perf_counter() - began
    raise SystemExit(f"the raw consumer did not get {value!r} within {RECORD_TIMEOUT_S:g} s")


def raw_latency(bootstrap: str, count: int, fetch_wait_ms: int | None) -> list[float]:
    topic = f"raw-latency-{uuid.uuid4().hex[:8]}"
    KafkaHelpers(bootstrap).create_topic(topic, partitions=1)
    conf: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "group.id": f"bench-{uuid.uuid4().hex[:6]}",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "session.timeout.ms": 6000,  # Tansu holds a join for half of it; not part of the figure
    }
    if fetch_wait_ms is not None:
        conf["fetch.wait.max.ms"] = fetch_wait_ms
    consumer = Consumer(conf)
    consumer.subscribe([topic])
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0})
    try:
        round_trip(producer, consumer, topic, b"warm-up")  # also waits for the group join
        latencies = []
        for n in range(count):
            pause()
            latencies.append(round_trip(producer, consumer, topic, f"raw-{n}".encode()))
        return latencies
    finally:
        consumer.close()


def print_raw_latency(by_setting: Mapping[str, Sequence[float]], worker_p50: float) -> None:
    section("2. Raw confluent-kafka baseline, same broker: produce, flush -> consumer has it")
    print(ms_header("consumer setting") + f"{'worker p50 / this p50':>24}")
    for label, latencies in by_setting.items():
        ratio = worker_p50 / percentile(latencies, 50)
        print(ms_row(label, latencies) + f"{ratio:>24.1f}")


# -- 3. cold start ---------------------------------------------------------------------------

LOG_LINE = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] \S+ (.*)$", re.MULTILINE)
LOG_EVENTS = {
    "first log line (Python imports done)": re.compile(r""),
    "embedded broker ready": re.compile(r"Embedded broker listening at (\S+)"),
    "Spark session starting": re.compile(r"Starting Spark session"),
    "Spark session started": re.compile(r"Spark session started in"),
    "Spark's Python workers warmed up": re.compile(r"Spark's Python workers warmed up"),
    "worker ready (connectors created)": re.compile(r"Worker started in"),
}


def log_events(log: str, began_wall: float) -> dict[str, tuple[float, str]]:
    """The first line of each LOG_EVENTS kind: (seconds since ``began_wall``, its text)."""
    found: dict[str, tuple[float, str]] = {}
    for match in LOG_LINE.finditer(log):
        stamp, text = match.groups()
        when = datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp() - began_wall
        for name, pattern in LOG_EVENTS.items():
            if name not in found and pattern.search(text):
                found[name] = (when, text)
    return found


def rest_answer(port: int) -> int | None:
    """The status of GET /, or None if nothing answers."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
    try:
        conn.request("GET", "/")
        response = conn.getresponse()
        response.read()
        return response.status
    except OSError:
        return None
    finally:
        conn.close()


class FirstRecord:
    """Reads the first record of a topic once the topic exists (no group: assigned)."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.topic = topic
        self._consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"bench-cold-{uuid.uuid4().hex[:6]}",
                "enable.auto.commit": False,
                "fetch.wait.max.ms": 10,
            }
        )
        self._assigned = False

    def poll(self) -> Message | None:
        if not self._assigned:
            metadata = self._consumer.list_topics(self.topic, timeout=1)
            found = metadata.topics.get(self.topic)
            if found is None or found.error is not None or not found.partitions:
                return None
            self._consumer.assign([TopicPartition(self.topic, 0, OFFSET_BEGINNING)])
            self._assigned = True
        message = self._consumer.poll(0.01)
        return message if message is not None and not message.error() else None

    def close(self) -> None:
        self._consumer.close()


@dataclass
class ColdStart:
    events: dict[str, float] = field(default_factory=dict)
    """What happened, in seconds since the process started."""
    ready_line: str = ""


def watch_cold_start(
    worker: EmbeddedConnect, began: float, began_wall: float, topic: str, out: Path
) -> ColdStart:
    result = ColdStart()
    events = result.events
    reader: FirstRecord | None = None
    deadline = began + COLD_START_TIMEOUT_S
    try:
        while FIRST_LINE_EVENT not in events or "first record in topic" not in events:
            if time.perf_counter() > deadline:
                raise SystemExit(
                    f"cold start incomplete after {COLD_START_TIMEOUT_S:g} s: {events}"
                )
            if worker.worker_exit_code is not None:
                raise SystemExit(f"the worker exited:\n{worker.log_text()[-3000:]}")
            now = time.perf_counter() - began
            if "REST answers GET / 200" not in events:
                status = rest_answer(rest_port(worker))
                if status is not None:
                    events.setdefault("REST listening (any answer to GET /)", now)
                if status == 200:
                    events["REST answers GET / 200"] = now
            found = log_events(worker.log_text(), began_wall)
            for name, (when, text) in found.items():
                events.setdefault(name, when)
                if name == "worker ready (connectors created)":
                    result.ready_line = text
            if reader is None and "embedded broker ready" in found:
                bootstrap = LOG_EVENTS["embedded broker ready"].search(
                    found["embedded broker ready"][1]
                )
                assert bootstrap is not None
                reader = FirstRecord(bootstrap.group(1), topic)
            if reader is not None and "first record in topic" not in events:
                message = reader.poll()
                if message is not None:
                    events["first record in topic"] = time.perf_counter() - began
                    stamp = message.timestamp()[1] / 1000
                    events["first record's timestamp (source task read it)"] = stamp - began_wall
            if file_size(out) > 0:
                events.setdefault(FIRST_LINE_EVENT, time.perf_counter() - began)
            time.sleep(0.01)
    finally:
        if reader is not None:
            reader.close()
    return result


def measure_cold_start(work: Path, changes: Mapping[str, str]) -> ColdStart:
    """The shipped properties (embedded broker on) in a fresh directory, the demo connectors."""
    workdir = work / "cold"
    make_input(workdir / "data/demo/input.txt", 1000)
    source = json.loads(DEMO_CONNECTORS[0].read_text())["config"]
    out = workdir / json.loads(DEMO_CONNECTORS[1].read_text())["config"]["file"]
    began, began_wall = time.perf_counter(), time.time()
    worker = launch_worker(workdir, shipped_props(changes), DEMO_CONNECTORS, wait_healthy=False)
    try:
        return watch_cold_start(worker, began, began_wall, source["topic"], out)
    finally:
        worker.close()


def print_cold_start(result: ColdStart) -> None:
    section("3. Cold start: fresh worker process, its own broker, demo connectors from files")
    print(f"{'event':<52}{'s since start':>14}")
    for name, seconds in sorted(result.events.items(), key=lambda item: item[1]):
        print(f"{name:<52}{seconds:>14.2f}")
    if result.ready_line:
        print(f"worker's ready line: {result.ready_line}")


# -- 4. REST latency -------------------------------------------------------------------------


def timed_get(conn: http.client.HTTPConnection, path: str) -> float:
    began = time.perf_counter()
    conn.request("GET", path)
    response = conn.getresponse()
    body = response.read()
    elapsed = time.perf_counter() - began
    if response.status != 200:
        raise SystemExit(f"GET {path}: {response.status} {body[:200]!r}")
    return elapsed


def rest_latency(port: int, connector: str, done: Callable[[int], bool]) -> dict[str, list[float]]:
    """GET status and offsets of ``connector`` in turn until ``done(pairs so far)``."""
    paths = {
        "status": f"/connectors/{connector}/status",
        "offsets": f"/connectors/{connector}/offsets",
    }
    times: dict[str, list[float]] = {kind: [] for kind in paths}
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        while not done(len(times["status"])):
            for kind, path in paths.items():
                times[kind].append(timed_get(conn, path))
                time.sleep(REST_PAUSE_S)
    finally:
        conn.close()
    return times


def print_rest_latency(
    connector: str, idle: Mapping[str, Sequence[float]], busy: Mapping[str, Sequence[float]] | None
) -> None:
    section(f"4. REST latency, GET /connectors/{connector}/status and /offsets (keep-alive)")
    print(ms_header("request"))
    for phase, times in (("idle", idle), ("busy", busy)):
        for kind, seconds in (times or {}).items():
            print(ms_row(f"{kind} ({phase})", seconds))
    if busy:
        print(f"{'request':<20}{'idle p99 ms':>14}{'busy p99 ms':>14}{'busy / idle':>14}")
        for kind in idle:
            quiet, loaded = percentile(idle[kind], 99), percentile(busy[kind], 99)
            print(f"{kind:<20}{quiet * 1000:>14.1f}{loaded * 1000:>14.1f}{loaded / quiet:>14.1f}")


# -- 5. memory -------------------------------------------------------------------------------


def parent_links() -> dict[int, int]:
    """pid -> ppid for every process (field 4 of /proc/<pid>/stat, after the ``(comm)``)."""
    links = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        links[int(stat.parent.name)] = int(fields[1])
    return links


def process_tree(root: int, links: Mapping[int, int]) -> list[int]:
    tree, frontier = [root], [root]
    while frontier:
        children = [pid for pid, ppid in links.items() if ppid in frontier]
        tree += children
        frontier = children
    return tree


def status_kb(pid: int, key: str) -> int | None:
    """A ``kB`` figure of /proc/<pid>/status (VmRSS, VmHWM); None once the process is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def command_line(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
    except OSError:
        return []


def label(pid: int, root: int, links: Mapping[int, int]) -> str:
    argv = command_line(pid)
    text = " ".join(argv)
    program = Path(argv[0]).name if argv else "?"
    if pid == root:
        return "worker (connect-lite)"
    if "connect_lite.dataplane.main" in text:
        return "data plane (tasks, Spark's driver)"
    if program == "java" and "org.apache.spark" in text:
        return "Spark JVM (java ... SparkSubmit)"
    if "pyspark.daemon" in text:
        if "pyspark.daemon" in " ".join(command_line(links.get(pid, 0))):
            return "PySpark Python worker (forked by the daemon)"
        return "PySpark daemon (python -m pyspark.daemon)"
    if "pyspark.worker" in text:
        return "PySpark Python worker"
    if "tansu" in program:
        return "embedded broker (Tansu)"
    return text[:50] or program


@dataclass
class Proc:
    label: str
    rss_kb: int
    hwm_kb: int = 0
    broker: bool = False


def memory_snapshot(root: int, broker_pid: int | None) -> dict[int, Proc]:
    """Every process of the worker's tree, and the broker, with its resident set."""
    links = parent_links()
    named = {pid: label(pid, root, links) for pid in process_tree(root, links)}
    if broker_pid is not None and broker_pid not in named:
        named[broker_pid] = "embedded broker (Tansu, the bench's)"
    procs = {}
    for pid, name in named.items():
        rss = status_kb(pid, "VmRSS")
        if rss is not None:  # VmHWM is updated lazily: it may lag behind VmRSS
            hwm = max(rss, status_kb(pid, "VmHWM") or 0)
            procs[pid] = Proc(name, rss, hwm, "Tansu" in name)
    return procs


def totals_kb(procs: Mapping[int, Proc]) -> tuple[int, int]:
    """(all, all but the broker)."""
    every = sum(p.rss_kb for p in procs.values())
    return every, every - sum(p.rss_kb for p in procs.values() if p.broker)


class MemorySampler:
    """Samples the tree every MEMORY_SAMPLE_S on a thread: the largest RSS of each process
    and the largest sampled totals."""

    def __init__(self, root: int, broker_pid: int | None) -> None:
        self.root, self.broker_pid = root, broker_pid
        self.largest: dict[int, Proc] = {}
        self.peak_total = (0, 0)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memory-sampler", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(MEMORY_SAMPLE_S):
            self.sample()

    def sample(self) -> None:
        snapshot = memory_snapshot(self.root, self.broker_pid)
        for pid, proc in snapshot.items():
            known = self.largest.get(pid)
            if known is not None:
                proc.rss_kb = max(proc.rss_kb, known.rss_kb)
            self.largest[pid] = proc  # the latest VmHWM, the largest VmRSS
        every, no_broker = totals_kb(snapshot)
        self.peak_total = (max(self.peak_total[0], every), max(self.peak_total[1], no_broker))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.sample()


def print_memory(title: str, procs: Mapping[int, Proc], totals: tuple[int, int]) -> None:
    print(f"{title}\n{'pid':>8}  {'process':<48}{'RSS MiB':>10}{'peak MiB':>10}")
    for pid, proc in sorted(procs.items(), key=lambda item: -item[1].rss_kb):
        print(f"{pid:>8}  {proc.label:<48}{proc.rss_kb / 1024:>10.1f}{proc.hwm_kb / 1024:>10.1f}")
    print(f"{'':>8}  {'total':<48}{totals[0] / 1024:>10.1f}")
    print(f"{'':>8}  {'total without the broker':<48}{totals[1] / 1024:>10.1f}")


# -- 4 and 5 under load ----------------------------------------------------------------------


@dataclass
class LoadRun:
    rest: dict[str, list[float]]
    memory: MemorySampler
    seconds: float
    records: int
    after: dict[int, Proc]
    """The tree's memory AFTER_LOAD_S after the last record."""


def run_load(
    worker: EmbeddedConnect, broker: EmbeddedBroker, work: Path, src: Path, records: int, query: str
) -> LoadRun:
    """Start the file -> Kafka -> file pipeline; query REST and sample memory until every
    line is in the sink's file (it holds the same bytes as the source's).

    The sink's session timeout is 6 s, as the worker sets it with its own broker: Tansu holds
    a group join for half of it, and Kafka's 45 s default would leave the sink waiting 22 s
    while only the source runs."""
    assert worker.worker_pid is not None
    out = work / "load-out.txt"
    size = file_size(src)
    topic = f"load-{uuid.uuid4().hex[:8]}"
    KafkaHelpers(broker.bootstrap_servers).create_topic(topic, partitions=1)
    memory = MemorySampler(worker.worker_pid, broker.pid)
    began = time.perf_counter()
    quick_join = {"consumer.override.session.timeout.ms": "6000"}
    file_pipeline(worker, "load", src, topic, out, quick_join)
    deadline = began + LOAD_TIMEOUT_S

    def done(_pairs: int) -> bool:
        if time.perf_counter() > deadline:
            raise SystemExit(f"the pipeline did not finish within {LOAD_TIMEOUT_S:g} s")
        return file_size(out) >= size

    rest = rest_latency(rest_port(worker), query, done)
    seconds = time.perf_counter() - began
    memory.stop()
    progress(f"{AFTER_LOAD_S:g} s with nothing flowing after the load")
    time.sleep(AFTER_LOAD_S)
    after = memory_snapshot(worker.worker_pid, broker.pid)
    return LoadRun(rest, memory, seconds, records, after)


# -- main ------------------------------------------------------------------------------------


def header() -> str:
    return (
        f"connect-lite bench_latency: {os.cpu_count()} cores, Python "
        f"{platform.python_version()} ({platform.machine()}), {datetime.now():%Y-%m-%d %H:%M}"
    )


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--records", type=int, default=60, help="single records (default 60)")
    parser.add_argument("--load-records", type=int, default=1_000_000)
    parser.add_argument("--skip-cold-start", action="store_true")
    parser.add_argument("--skip-load", action="store_true", help="no busy REST and memory figures")
    parser.add_argument(
        "--idle-seconds",
        type=float,
        action="append",
        help=(
            f"when to sample idle memory, after the latency part (default {QUIET_S:g}; "
            f"{FOOTPRINT_IDLE_S:g}, the footprint line's, is always sampled)"
        ),
    )
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="a worker property"
    )
    args = parser.parse_args()
    if args.records < 1 or args.load_records < 1:
        parser.error("--records and --load-records must be positive")
    args.idle_seconds = sorted({*(args.idle_seconds or [QUIET_S]), FOOTPRINT_IDLE_S})
    if any("=" not in item for item in args.set):
        parser.error("--set takes key=value")
    args.set = dict(item.split("=", 1) for item in args.set)
    return args


def main() -> None:
    args = parse_args()
    print(header(), flush=True)
    # The worker's own embedded broker would run at its data.plane.niceness: this one does too.
    niceness = int(shipped_props(args.set).get("data.plane.niceness", DATA_PLANE_NICENESS))
    with tempfile.TemporaryDirectory() as tmp, EmbeddedBroker(niceness=niceness) as broker:
        work = Path(tmp)
        bootstrap = broker.bootstrap_servers
        load_src = work / "load.jsonl"
        if not args.skip_load:
            progress(f"writing {args.load_records:,} JSON lines for the load")
            make_records(load_src, args.load_records)
        changes = {
            **args.set,
            "embedded.broker.enable": "false",
            "bootstrap.servers": bootstrap,
            "state.storage.file": str(work / "worker/state.db"),
            "connector.allowed.paths": str(work),  # the load and output files
        }
        props = shipped_props(changes)
        print(f"broker {bootstrap}; the worker: standalone.properties with {changes}")
        worker = launch_worker(work / "worker", props)
        assert worker.worker_pid is not None
        try:
            trips = measure_worker_latency(worker, bootstrap, work, args.records)
            last_record = time.monotonic()
            print_worker_latency(trips)
            progress("raw client baseline")
            raw = {
                "fetch.wait.max.ms default (500)": raw_latency(bootstrap, args.records, None),
                "fetch.wait.max.ms=10": raw_latency(bootstrap, args.records, 10),
            }
            print_raw_latency(raw, percentile([t.total for t in trips], 50))
            idle_memory = {}
            quiet_from = time.monotonic()
            for seconds in args.idle_seconds:
                progress(f"{seconds:g} s with nothing flowing")
                time.sleep(max(0.0, quiet_from + seconds - time.monotonic()))
                idle_memory[seconds] = memory_snapshot(worker.worker_pid, broker.pid)
            idle_for = time.monotonic() - last_record  # the raw baseline ran in between
            progress(f"one record after {idle_for:.0f} s idle")
            after_idle = record_after_idle(work)
            print(f"one record after {idle_for:.0f} s idle: {after_idle * 1000:.0f} ms end to end")
            query = "latency-source"
            idle_rest = rest_latency(rest_port(worker), query, lambda pairs: pairs >= REST_REQUESTS)
            load = None
            if not args.skip_load:
                progress(f"{args.load_records:,} records file -> Kafka -> file, with REST calls")
                load = run_load(worker, broker, work, load_src, args.load_records, query)
        finally:
            worker.close()
        print_rest_latency(query, idle_rest, load.rest if load else None)
        if load:
            rate = load.records / load.seconds
            print(
                f"(the pipeline: {load.records:,} records in {load.seconds:.1f} s, {rate:,.0f}/s)"
            )
        section("5. Memory (VmRSS; peak = VmHWM, the largest since the process started)")
        for seconds, snapshot in idle_memory.items():
            title = f"idle, {seconds:g} s after the latency part:"
            print_memory(title, snapshot, totals_kb(snapshot))
        if load:
            print()
            print_memory(
                "busy, the largest sampled during the pipeline (totals: largest sampled sum):",
                load.memory.largest,
                load.memory.peak_total,
            )
            print()
            title = f"idle, {AFTER_LOAD_S:g} s after the pipeline's last record:"
            print_memory(title, load.after, totals_kb(load.after))
        cold = None
        if not args.skip_cold_start:
            progress("cold start")
            cold = measure_cold_start(work, args.set)
            print_cold_start(cold)
        idle_kb = totals_kb(idle_memory[FOOTPRINT_IDLE_S])[1]
        print(footprint_line(idle_kb, load.memory.peak_total[1] if load else None, cold))


def footprint_line(idle_kb: int, busy_kb: int | None, cold: ColdStart | None) -> str:
    """The one line tools read: idle and busy resident memory without the broker (MiB), and
    seconds to the demo's first line in the sink's file; ``na`` for a part skipped."""
    first_line = None if cold is None else cold.events.get(FIRST_LINE_EVENT)
    return (
        f"footprint: idle_rss_mib={idle_kb / 1024:.0f} "
        f"busy_rss_mib={'na' if busy_kb is None else f'{busy_kb / 1024:.0f}'} "
        f"cold_first_line_s={'na' if first_line is None else f'{first_line:.2f}'}"
    )


if __name__ == "__main__":
    main()
