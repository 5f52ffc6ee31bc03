"""Throughput of SourceJob.run and SinkJob.run (run by hand: python -m ...bench_stage)."""

from __future__ import annotations

import argparse
import functools
import json
import time
from dataclasses import dataclass
from typing import Any

from pyspark import cloudpickle

from connect_lite.api import SourceRecord
from connect_lite.pipeline import SinkJob, SourceJob, SparkEngine
from connect_lite.protocol.job_spec import JobSpec
from tests.integration.pipeline import plugins

cloudpickle.register_pickle_by_value(plugins)


@dataclass
class Msg:
    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: Any
    timestamp: int
    timestamp_type: int


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--total", type=int, default=1_000_000)
    parser.add_argument("--sizes", default="50000,100000,200000,400000")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--kind", default="string", choices=["string", "json"])
    args = parser.parse_args()
    engine = SparkEngine({"spark.master": args.master})
    engine.session()
    conv = plugins.Utf8Converter if args.kind == "string" else plugins.JsonStructConverter
    spec = JobSpec(
        f"bench-{args.kind}",
        functools.partial(plugins.key_build, plugins.Utf8Converter),
        functools.partial(plugins.build, conv),
        plugins.Utf8HeaderConverter,
    )
    src, sink = SourceJob(engine, spec, "bench"), SinkJob(engine, spec, "bench")

    def value(i: int) -> Any:
        v = {"id": i, "name": "x" * 40, "score": i * 0.5, "ok": True}
        return v if args.kind == "json" else json.dumps(v)

    pool = [
        SourceRecord({"p": 0}, {"o": i}, "bench", value(i), timestamp=i) for i in range(400_000)
    ]
    payload = [
        json.dumps({"id": i, "name": "x" * 40, "score": i * 0.5, "ok": True}).encode()
        for i in range(400_000)
    ]
    msgs = [Msg("bench", 0, i, None, payload[i], None, i, 1) for i in range(400_000)]
    src.run(pool[:1000])
    sink.run(msgs[:1000])  # warm-up: workers and components
    for size in (int(s) for s in args.sizes.split(",")):
        for name, job, data in (("source", src, pool), ("sink", sink, msgs)):
            done, start = 0, time.perf_counter()
            while done < args.total:
                n = min(size, args.total - done)
                job.run(data[:n])
                done += n
            elapsed = time.perf_counter() - start
            print(
                f"{args.kind:6} {name:6} batch {size:>7}: {done / elapsed:>10,.0f} rec/s",
                flush=True,
            )
    engine.stop()


if __name__ == "__main__":
    main()
