"""Benchmark: what busy Python threads cost a request handler in the same process.

The worker's REST threads share one interpreter, and so one GIL, with the tasks' driver
work. A thread that releases the GIL (a socket read or write, an SQLite call) must win it
back, and CPython lets a busy thread keep it for up to ``sys.getswitchinterval()`` (5 ms)
each time another thread asks. This script times, in one process, small units of a request's
work with 0, 1 and 3 threads running pure Python beside them (the baseline is 0, in the same
run):

- an SQLite query on an in-memory table (releases the GIL about twice);
- ten such queries;
- a socket round trip over a local socket pair (a send and a receive);
- pure Python of about the same length, which releases nothing.

    .venv/bin/python scripts/bench_gil_handoff.py [--repeat 200] [--switch-interval 0.005]

It needs no Spark and no broker. Its point: the cost of a request under load grows with the
number of times it gives the GIL up, times the busy threads, whatever it does in between.
"""

from __future__ import annotations

import argparse
import socket
import sqlite3
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scripts.bench_latency import percentile  # noqa: E402  # the benchmarks' nearest rank

BUSY_COUNTS = (0, 1, 3)


def busy_loop(stop: threading.Event) -> None:
    """Pure Python that never blocks: it gives the GIL up only when asked to."""
    total = 0
    while not stop.is_set():
        for i in range(1000):
            total += i


def workloads() -> dict[str, Callable[[], object]]:
    db = sqlite3.connect(":memory:", check_same_thread=False)
    db.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
    db.executemany("INSERT INTO t VALUES (?, ?)", [(i, str(i)) for i in range(100)])
    left, right = socket.socketpair()

    def query() -> object:
        return db.execute("SELECT v FROM t WHERE k = ?", (5,)).fetchall()

    def ten_queries() -> object:
        return [query() for _ in range(10)]

    def round_trip() -> object:
        left.sendall(b"ping")
        return right.recv(16)

    def pure_python() -> object:
        total = 0
        for i in range(20_000):  # bytecode: a busy thread may ask for the GIL in between
            total += i
        return total

    return {
        "1 SQLite query": query,
        "10 SQLite queries": ten_queries,
        "socket send + receive": round_trip,
        "pure Python, no release": pure_python,
    }


def timed(work: Callable[[], object], repeat: int) -> list[float]:
    """Milliseconds per call. Each call follows a short sleep, as a request follows a wait for
    its socket; the wait to win the GIL back after that sleep is not counted, only what the
    call itself gives up and waits for."""
    out = []
    for _ in range(repeat):
        time.sleep(0.002)
        began = time.perf_counter()
        work()
        out.append((time.perf_counter() - began) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200, help="calls per figure")
    parser.add_argument("--switch-interval", type=float, help="sys.setswitchinterval (s)")
    args = parser.parse_args()
    if args.repeat < 10:
        parser.error("--repeat must be at least 10")
    if args.switch_interval is not None:
        if args.switch_interval <= 0:
            parser.error("--switch-interval must be positive")
        sys.setswitchinterval(args.switch_interval)
    print(f"Python {sys.version.split()[0]}, switch interval {sys.getswitchinterval() * 1000:g} ms")
    work = workloads()
    baseline: dict[str, float] = {}
    print(
        f"{'work':<26}{'busy threads':>13}{'p50 ms':>9}{'p99 ms':>9}{'mean ms':>9}"
        f"{'mean / idle':>13}"
    )
    for busy in BUSY_COUNTS:
        stop = threading.Event()
        threads = [threading.Thread(target=busy_loop, args=(stop,)) for _ in range(busy)]
        for thread in threads:
            thread.start()
        try:
            for name, call in work.items():
                times = timed(call, args.repeat)
                mean = sum(times) / len(times)
                baseline.setdefault(name, mean)
                print(
                    f"{name:<26}{busy:>13}{percentile(times, 50):>9.2f}"
                    f"{percentile(times, 99):>9.2f}{mean:>9.2f}{mean / baseline[name]:>13.0f}"
                )
        finally:
            stop.set()
            for thread in threads:
                thread.join()


if __name__ == "__main__":
    main()
