"""Time to ready of connect_lite.testing.EmbeddedConnect: broker, REST, Spark, first record.

    .venv/bin/python scripts/bench_fixture.py [--runs 3]

Each run enters a fresh EmbeddedConnect, creates a FileStreamSource over a 10-line file and
waits for its first record in Kafka. Marks, in seconds from entering the context: ``broker``
(embedded broker answers), ``rest`` (worker /health 200), ``connector running``, ``spark jvm``
(Spark's JVM process exists), ``spark session`` (Spark's first Python worker exists: the
session is up and runs the first batch's job), ``first record`` (read back from Kafka).
``--set key=value`` overrides a worker property (repeatable), to compare settings.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from connect_lite.testing import EmbeddedConnect
from connect_lite.testing.processes import descendants


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


class TreeWatcher(threading.Thread):
    """Notes when the worker's JVM and Spark's first Python worker appear."""

    def __init__(self, connect: EmbeddedConnect, begin: float, marks: dict[str, float]) -> None:
        super().__init__(daemon=True)
        self.connect, self.begin, self.marks = connect, begin, marks
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set() and "spark session" not in self.marks:
            pid = self.connect.worker_pid
            for child in descendants(pid) if pid else ():
                line = _cmdline(child)
                if "java" in line.split(" ")[0] and "spark jvm" not in self.marks:
                    self.marks["spark jvm"] = time.monotonic() - self.begin
                if "pyspark.daemon" in line or "pyspark.worker" in line:
                    self.marks.setdefault("spark session", time.monotonic() - self.begin)
            time.sleep(0.02)


def one_run(props: dict[str, str]) -> dict[str, float]:
    begin = time.monotonic()
    marks: dict[str, float] = {}
    connect = EmbeddedConnect(worker_properties=props)
    watcher = TreeWatcher(connect, begin, marks)
    watcher.start()
    with connect:
        marks.update(connect.timings)
        source_file = connect.workdir / "input.txt"
        source_file.write_text("".join(f"line-{i}\n" for i in range(10)))
        connect.client.create(
            "bench-source",
            {
                "connector.class": "FileStreamSource",
                "file": str(source_file),
                "topic": "bench",
                "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            },
        )
        connect.wait_running("bench-source", tasks=1)
        marks["connector running"] = time.monotonic() - begin
        connect.wait_topic_records("bench", 1)
        marks["first record"] = time.monotonic() - begin
        watcher.done.set()
    marks["teardown"] = time.monotonic() - begin - marks["first record"]
    return marks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    props = dict(item.split("=", 1) for item in args.set)
    runs = []
    for i in range(args.runs):
        marks = one_run(props)
        runs.append(marks)
        print(f"run {i + 1}: " + ", ".join(f"{k} {v:.2f}s" for k, v in marks.items()), flush=True)
    keys = [
        "broker",
        "rest",
        "connector running",
        "spark jvm",
        "spark session",
        "first record",
        "teardown",
    ]
    print("\nmedian seconds from entering the context:")
    for key in keys:
        values = [run[key] for run in runs if key in run]
        if values:
            print(f"  {key:18} {statistics.median(values):6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
