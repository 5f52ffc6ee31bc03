"""Benchmark: would a REST process of its own stay responsive while the data plane is busy?

A probe for a design, not a feature: a real worker (python app.py, real Spark, the embedded
broker) runs a 1,000,000-record file -> Kafka -> file pipeline, and GET requests go in turn
to the worker's own REST API (a connector's status and offsets) and to a second Python
process that answers the same offsets from the worker's state file, opened read-only
(``open_sqlite_reader``: SQLite in WAL mode lets a reader in while the worker writes).
Both are timed idle and under load.

    .venv/bin/python scripts/bench_rest_process.py [--load-records 1000000] [--nice N]

The worker's requests wait for the interpreter its tasks' driver work holds; the second
process only shares the cores. The gap between the two is what moving the REST API (or the
data plane) into a process of its own would buy. With ``--nice N`` every thread of the
worker's process tree (its driver, Spark's JVM and Python workers) runs at niceness N, as a
data plane of its own could, while the second process keeps the default: what a lower
priority adds on two saturated cores. (The worker's own answers do not gain from it: its
requests wait for the interpreter, not for a core.)
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from connect_lite.kafka.broker import EmbeddedBroker  # noqa: E402
from connect_lite.storage.sqlite import open_sqlite_reader  # noqa: E402
from connect_lite.testing.kafka_helpers import KafkaHelpers  # noqa: E402
from scripts.bench_latency import (  # noqa: E402
    file_pipeline,
    parent_links,
    percentile,
    process_tree,
    timed_get,
)
from scripts.bench_pipeline import make_records  # noqa: E402
from tests.integration.worker_process import WorkerProcess, wait_for  # noqa: E402

REQUESTS = 300
PAUSE_S = 0.02


def serve(db: str, port: int) -> None:
    """The second process: GET /offsets/<connector> from the state file, opened read-only
    (connect_lite.storage.sqlite.open_sqlite_reader: no lock, nothing written)."""
    stores = open_sqlite_reader(db)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            name = self.path.rsplit("/", 1)[-1]
            found = stores.offsets.all(name)
            body = json.dumps(
                {"offsets": [{"partition": p, "offset": o} for p, o in found]}
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


def renice(root: int, nice: int) -> int:
    """Every thread of ``root``'s process tree at niceness ``nice`` (threads started later
    inherit it); how many threads. A niceness this user may not set stops the script."""
    threads = 0
    for pid in process_tree(root, parent_links()):
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                os.setpriority(os.PRIO_PROCESS, int(task.name), nice)
            except PermissionError as error:
                raise SystemExit(f"cannot set niceness {nice}: {error}") from error
            except (ProcessLookupError, FileNotFoundError, ValueError):
                continue  # gone meanwhile
            threads += 1
    return threads


class Renicer:
    """Renices the worker's tree every second, for processes that started since (Spark's
    Python workers are forked by a daemon that already has it, but not only they)."""

    def __init__(self, root: int, nice: int) -> None:
        if renice(root, nice) == 0:
            raise SystemExit(f"no thread of process {root} to renice")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(root, nice), daemon=True)
        self._thread.start()

    def _run(self, root: int, nice: int) -> None:
        while not self._stop.wait(1.0):
            renice(root, nice)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def measure(
    targets: list[tuple[str, http.client.HTTPConnection, str]], done: Callable[[int], bool]
) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {label: [] for label, _, _ in targets}
    while not done(len(times[targets[0][0]])):
        for label, conn, path in targets:
            times[label].append(timed_get(conn, path))
            time.sleep(PAUSE_S)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--load-records", type=int, default=1_000_000)
    parser.add_argument(
        "--nice", type=int, default=0, help="niceness of the worker's process tree (0: none)"
    )
    parser.add_argument("--serve", nargs=2, metavar=("DB", "PORT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve[0], int(args.serve[1]))
        return
    with tempfile.TemporaryDirectory() as tmp, EmbeddedBroker() as broker:
        work = Path(tmp)
        worker = WorkerProcess(work, broker.bootstrap_servers)
        port = free_port()
        reader: subprocess.Popen[bytes] | None = None
        try:
            worker.start()
            reader = subprocess.Popen(
                [sys.executable, __file__, "--serve", str(work / "state.db"), str(port)]
            )
            lines = work / "q.txt"
            lines.write_text("a\nb\n")
            config = {"connector.class": "FileStreamSource", "file": str(lines), "topic": "q"}
            worker.rest.put("/connectors/q/config", config)
            wait_for(lambda: worker.rest.get("/connectors/q/offsets").body.get("offsets"), 60)
            own = http.client.HTTPConnection("127.0.0.1", worker.port, timeout=60)
            wait_for(lambda: socket.create_connection(("127.0.0.1", port)).close() or True, 30)
            other = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            targets = [
                ("worker: status", own, "/connectors/q/status"),
                ("worker: offsets", own, "/connectors/q/offsets"),
                ("second process: offsets", other, "/offsets/q"),
            ]
            renicer = Renicer(worker.proc.pid, args.nice) if args.nice else None
            idle = measure(targets, lambda n: n >= REQUESTS)
            src = work / "load.jsonl"
            make_records(src, args.load_records)
            size = src.stat().st_size
            out = work / "load-out.txt"
            topic = f"load-{uuid.uuid4().hex[:8]}"
            KafkaHelpers(broker.bootstrap_servers).create_topic(topic, partitions=1)
            quick_join = {"consumer.override.session.timeout.ms": "6000"}
            began = time.perf_counter()
            file_pipeline(worker, "load", src, topic, out, quick_join)
            deadline = began + 1200

            def done(_: int) -> bool:
                if time.perf_counter() > deadline:
                    raise SystemExit("the pipeline did not finish within 1200 s")
                return out.exists() and out.stat().st_size >= size

            busy = measure(targets, done)
            seconds = time.perf_counter() - began
            if renicer is not None:
                renicer.stop()
        finally:
            if reader is not None:
                reader.kill()
                reader.wait()
            worker.stop()
    niced = f", the worker's process tree at niceness {args.nice}" if args.nice else ""
    print(f"{args.load_records:,} records file -> Kafka -> file in {seconds:.1f} s{niced}")
    print(f"{'GET':<26}{'idle p50':>10}{'idle p99':>10}{'busy p50':>10}{'busy p99':>10}{'n':>6}")
    for label, _, _ in targets:
        row = [percentile(t[label], p) * 1000 for t in (idle, busy) for p in (50, 99)]
        print(f"{label:<26}" + "".join(f"{v:>10.1f}" for v in row) + f"{len(busy[label]):>6}")


if __name__ == "__main__":
    main()
