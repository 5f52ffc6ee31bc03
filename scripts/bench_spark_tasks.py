"""Benchmark: what one Spark job with Python workers costs, by how the JVM reaches them and how
the chunks travel.

Two sessions with the worker's settings (connect_lite.pipeline.session_start's defaults), one after
the other, each in a process of its own: the JVM talks to its Python workers over TCP on
loopback, or over Unix domain sockets (``spark.python.unix.domain.socket.enabled``, the
worker's default). In each, the median of ``--runs`` jobs of three kinds:

- ten empty tasks (``mapInArrow`` over ten one-row partitions): Spark's cost per task;
- ten chunks of 2.5 MB carried in the rows, through the JVM and back (``createDataFrame``,
  ``mapInArrow``, ``toArrow``), as on a cluster;
- the same ten chunks through files (connect_lite.pipeline.exchange), the rows carrying only
  references to them, as on a local master.

    .venv/bin/python scripts/bench_spark_tasks.py [--runs 5]

It prints milliseconds per job and the ratio to the first line (TCP, chunks in the rows): the
baseline of the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

CHUNKS = 10
CHUNK_BYTES = 2_500_000


def _empty(batches: Iterator[Any]) -> Iterator[Any]:
    yield from batches


def _through_files(batches: Iterator[Any]) -> Iterator[Any]:
    """In the Python workers: read each referenced chunk and write it back as its result."""
    from connect_lite.pipeline import exchange
    from connect_lite.pipeline.transfer import _row

    for batch in batches:
        for row, chunk in enumerate(batch.column(0).to_pylist()):
            path = exchange.referenced(batch.column(1)[row].as_buffer())
            assert path is not None
            yield _row(chunk, exchange.put_result(path, exchange.read(path)))


def measure(unix_sockets: bool, runs: int) -> dict[str, float]:
    """Median ms per job of each kind, in a fresh session."""
    import pyarrow as pa

    from connect_lite.pipeline.session import SparkEngine
    from connect_lite.pipeline.session_start import UNIX_SOCKETS_KEY
    from connect_lite.pipeline.transfer import _ARROW_SCHEMA, OUTPUT_SCHEMA, _row

    engine = SparkEngine({"spark.master": "local[2]", UNIX_SOCKETS_KEY: str(unix_sockets).lower()})
    spark = engine.session()
    chunks = [os.urandom(CHUNK_BYTES) for _ in range(CHUNKS)]
    files = engine.exchange  # the worker's own: a local master has one
    assert files is not None

    def job(payloads: list[bytes], function: Callable[..., Any]) -> list[bytes]:
        rows = [_row(i, p) for i, p in enumerate(payloads)]
        frame = spark.createDataFrame(pa.Table.from_batches(rows, _ARROW_SCHEMA))
        table = frame.mapInArrow(function, OUTPUT_SCHEMA).toArrow()
        return [bytes(blob.as_buffer()) for blob in table.column("payload")]

    def empty_tasks() -> None:
        job([b""] * CHUNKS, _empty)

    def inline() -> None:
        assert sum(map(len, job(chunks, _empty))) == CHUNKS * CHUNK_BYTES

    def through_files() -> None:
        job_files = files.put(chunks)
        results = [files.resolve(blob) for blob in job(job_files.rows, _through_files)]
        job_files.discard()
        assert sum(map(len, results)) == CHUNKS * CHUNK_BYTES

    kinds = {"empty tasks": empty_tasks, "chunks in rows": inline, "chunks in files": through_files}
    try:
        empty_tasks()  # the Python workers start
        times: dict[str, list[float]] = {kind: [] for kind in kinds}
        for _ in range(runs):  # interleaved: the machine's pace drifts
            for kind, run in kinds.items():
                begin = time.perf_counter()
                run()
                times[kind].append((time.perf_counter() - begin) * 1000)
        return {kind: statistics.median(values) for kind, values in times.items()}
    finally:
        engine.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--child", choices=["tcp", "unix"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child == "unix", args.runs)))
        return
    results = {}
    for transport in ("tcp", "unix"):
        with tempfile.TemporaryDirectory() as tmp:
            out = subprocess.run(
                [sys.executable, __file__, "--child", transport, "--runs", str(args.runs)],
                capture_output=True,
                text=True,
                check=True,
                cwd=tmp,
            )
        results[transport] = json.loads(out.stdout.strip().splitlines()[-1])
    print(
        f"{CHUNKS} tasks per job; chunks of {CHUNK_BYTES / 1e6:.1f} MB; "
        f"median of {args.runs} jobs (ms), ratio to TCP with chunks in the rows"
    )
    baseline = results["tcp"]["chunks in rows"]
    print(f"{'JVM to Python workers':<24}{'job':<18}{'ms':>8}{'ratio':>8}")
    for transport, label in (("tcp", "TCP on loopback"), ("unix", "Unix domain sockets")):
        for kind, ms in results[transport].items():
            print(f"{label:<24}{kind:<18}{ms:>8.0f}{ms / baseline:>8.2f}")


if __name__ == "__main__":
    main()
