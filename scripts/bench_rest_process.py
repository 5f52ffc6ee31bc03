"""Benchmark: the worker's REST API while its data plane is busy, against the floor of the machine.

A real worker (EmbeddedConnect, real Spark; the broker is this script's, at the worker's
data.plane.niceness like the worker's own embedded one) runs a 1,000,000-record
file -> Kafka -> file pipeline, and GET requests go in turn to the worker's REST API (a
connector's status and offsets) and to a second Python process that answers the same
offsets from the worker's state file, opened read-only (``open_sqlite_reader``), with the
standard library's one-thread-per-connection HTTP server. Both are timed idle and under load.

    .venv/bin/python scripts/bench_rest_process.py [--load-records 1000000] [--set key=value]

The worker's REST API runs in the worker process, apart from the data-plane process whose
tasks hold their interpreter, at a lower priority (data.plane.niceness). The second process
shares nothing with the worker but the cores, the kernel and the disk: what load costs it is
the floor any REST server would meet on this machine, and the gap between the two is what
the worker's own request path still adds. Each line prints p50, p90, p99 and max.
"""

from __future__ import annotations

import argparse
import http.client
import json
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from connect_lite.config.worker import WORKER_CONFIG_DEF  # noqa: E402
from connect_lite.kafka.broker import EmbeddedBroker  # noqa: E402
from connect_lite.storage.sqlite import open_sqlite_reader  # noqa: E402
from connect_lite.testing import KafkaHelpers, free_port, wait_for  # noqa: E402
from scripts.bench_latency import (  # noqa: E402
    file_pipeline,
    percentile,
    rest_port,
    timed_get,
)
from scripts.bench_pipeline import bench_worker, make_records  # noqa: E402

REQUESTS = 300
PAUSE_S = 0.02
PERCENTS = (50, 90, 99, 100)


def serve(db: str, port: int) -> None:
    """The second process: GET /offsets/<connector> from the state file, opened read-only
    (connect_lite.storage.sqlite.open_sqlite_reader: no lock, nothing written)."""
    stores = open_sqlite_reader(db)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go in two writes

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
        "--set", action="append", default=[], metavar="KEY=VALUE", help="a worker property"
    )
    parser.add_argument("--serve", nargs=2, metavar=("DB", "PORT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve[0], int(args.serve[1]))
        return
    extra = dict(item.split("=", 1) for item in args.set)
    default = WORKER_CONFIG_DEF.keys["data.plane.niceness"].default
    niceness = int(extra.get("data.plane.niceness", default))
    with tempfile.TemporaryDirectory() as tmp, EmbeddedBroker(niceness=niceness) as broker:
        work = Path(tmp)
        worker = bench_worker(work, broker.bootstrap_servers, extra)
        port = free_port()
        reader: subprocess.Popen[bytes] | None = None
        try:
            worker.start()
            reader = subprocess.Popen(
                [sys.executable, __file__, "--serve", str(worker.state_file), str(port)]
            )
            lines = work / "q.txt"
            lines.write_text("a\nb\n")
            config = {"connector.class": "FileStreamSource", "file": str(lines), "topic": "q"}
            worker.http.put("/connectors/q/config", config)
            wait_for(lambda: worker.http.get("/connectors/q/offsets").body.get("offsets"), 60)
            own = http.client.HTTPConnection("127.0.0.1", rest_port(worker), timeout=60)
            wait_for(lambda: socket.create_connection(("127.0.0.1", port)).close() or True, 30)
            other = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            targets = [
                ("worker: status", own, "/connectors/q/status"),
                ("worker: offsets", own, "/connectors/q/offsets"),
                ("second process: offsets", other, "/offsets/q"),
            ]
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
        finally:
            if reader is not None:
                reader.kill()
                reader.wait()
            worker.close()
    print(
        f"{args.load_records:,} records file -> Kafka -> file in {seconds:.1f} s "
        f"(data.plane.niceness {niceness}; the broker at it too)"
    )
    head = "".join(f"{f'{phase} {p}':>11}" for phase in ("idle", "busy") for p in PERCENTS)
    print(f"{'GET (ms)':<26}{head}{'n':>6}  busy p99 / idle p99")
    for label, _, _ in targets:
        row = [percentile(t[label], p) * 1000 for t in (idle, busy) for p in PERCENTS]
        ratio = percentile(busy[label], 99) / percentile(idle[label], 99)
        cells = "".join(f"{v:>11.1f}" for v in row)
        print(f"{label:<26}{cells}{len(busy[label]):>6}  {ratio:.1f}")


if __name__ == "__main__":
    main()
