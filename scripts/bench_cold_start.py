"""Benchmark: ``scripts/run.sh`` to the first demo line in data/demo/output.txt, split by part.

    flock /tmp/connect-lite-spark.lock .venv/bin/python scripts/bench_cold_start.py [--runs 3]

Each run starts from no ``data/`` (the demo's files and the worker's state file, ignored by
git): a ``data/`` that exists before the benchmark is moved aside to ``data.before-bench/``
and put back when it ends (a run killed half-way leaves it there, and says so at the
start). Each run then starts
``scripts/run.sh`` (which runs scripts/setup.sh first: quick once set up, as when a user runs
it a second time) and times, from the moment it is started: the embedded broker ready, REST
answering 200, the Spark session started, the first source job's record in the topic (a raw
consumer reads it), and the first line in the sink's file. REST listens on 127.0.0.1:8083 as
standalone.properties says, so nothing else may use that port meanwhile. The worst of the
runs is printed last: the machine's speed varies, so compare runs of one session.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scripts.bench_latency import (  # noqa: E402
    COLD_START_TIMEOUT_S,
    LOG_EVENTS,
    FirstRecord,
    file_size,
    log_events,
    rest_answer,
)

REST_PORT = 8083
TOPIC = "connect-lite-demo"
PARTS = (
    ("embedded broker", "embedded broker ready"),
    ("REST", "REST answers GET / 200"),
    ("Spark session", "Spark session started"),
    ("first source job", "first record in topic"),
    ("first sink job", "first line in the sink's file"),
)


def one_run() -> dict[str, float]:
    shutil.rmtree(REPO / "data", ignore_errors=True)
    out = REPO / "data/demo/output.txt"
    events: dict[str, float] = {}
    with tempfile.TemporaryFile("w+") as log:
        began, began_wall = time.perf_counter(), time.time()
        proc = subprocess.Popen(
            ["scripts/run.sh"],
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        reader: FirstRecord | None = None
        try:
            while (
                "first line in the sink's file" not in events
                or "first record in topic" not in events
            ):
                now = time.perf_counter() - began
                if now > COLD_START_TIMEOUT_S or proc.poll() is not None:
                    log.seek(0)
                    raise SystemExit(
                        f"no demo line after {now:.0f} s: {events}\n{log.read()[-3000:]}"
                    )
                if "REST answers GET / 200" not in events and rest_answer(REST_PORT) == 200:
                    events["REST answers GET / 200"] = now
                log.seek(0)
                found = log_events(log.read(), began_wall)
                for name, (when, _text) in found.items():
                    events.setdefault(name, when)
                if reader is None and "embedded broker ready" in found:
                    match = LOG_EVENTS["embedded broker ready"].search(
                        found["embedded broker ready"][1]
                    )
                    assert match is not None
                    reader = FirstRecord(match.group(1), TOPIC)
                waiting = reader is not None and "first record in topic" not in events
                if waiting and reader is not None and reader.poll() is not None:
                    events["first record in topic"] = time.perf_counter() - began
                if file_size(out) > 0:
                    events.setdefault("first line in the sink's file", time.perf_counter() - began)
                time.sleep(0.01)
        finally:
            if reader is not None:
                reader.close()
            with contextlib.suppress(ProcessLookupError):  # the whole group may be gone
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    return events


def row(label: str, events: dict[str, float]) -> str:
    return f"{label:<10}" + "".join(
        f"{events.get(event, float('nan')):>18.2f}" for _, event in PARTS
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    data, kept = REPO / "data", REPO / "data.before-bench"
    if kept.exists():
        raise SystemExit(f"{kept} is there from an earlier run: move it back to {data} first")
    if data.exists():
        data.rename(kept)
        print(f"{data} (the worker's state file too) is moved to {kept} until the end")
    try:
        print(f"scripts/run.sh to the first demo line, {os.cpu_count()} cores; s since started")
        print(f"{'run':<10}" + "".join(f"{part:>18}" for part, _ in PARTS))
        runs = []
        for n in range(args.runs):
            runs.append(one_run())
            print(row(str(n + 1), runs[-1]), flush=True)
        worst = {event: max(run[event] for run in runs) for _, event in PARTS}
        print(row("worst", worst))
    finally:
        shutil.rmtree(data, ignore_errors=True)
        if kept.exists():
            kept.rename(data)


if __name__ == "__main__":
    main()
