"""The batch stages: source or sink batches through converters and transforms, one Spark job each.

Components are described by picklable zero-argument factories and built lazily in
Spark's Python workers, once per worker process and stage (see executor.py). The
driver pickles the batch into one chunk per partition and runs one job
(transfer.py); record-level work is in work.py.

Throughput of ``run`` on the shared 2-core machine (local[2], ~70-100-byte values, no
transforms, 1,000,000 records per size; ``python -m tests.integration.pipeline.bench_stage``).
Two runs, the second with other helpers' workers and a second JVM busy on the same cores:

  batch      source (str)   sink (str)    source (JSON)  sink (JSON, schemaless)
  50k        98-175 k/s     98-116 k/s    85-154 k/s     79-124 k/s
  100k       173-201 k/s    131-191 k/s   192-258 k/s    137-154 k/s
  200k       217-344 k/s    122-197 k/s   273-276 k/s    101-139 k/s
  400k       213-307 k/s    129-192 k/s   284-303 k/s    86-114 k/s

A Spark job costs ~0.15-0.2 s however small, so batches under ~50k pay mostly for
scheduling. On the sink side, the driver's share is building the SinkRecords (~1 us
each) and unpickling the converted values; the rest runs in parallel in the workers.
Converters with a vectorized ``from_connect_batch``/``to_connect_batch`` are called once
per run of records with the same topic and schema.
"""

from __future__ import annotations

import dataclasses
import operator
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from connect_lite.api.components import Converter, HeaderConverter, Predicate, Transformation
from connect_lite.api.records import SinkRecord, SourceRecord, TopicPartition
from connect_lite.pipeline.errors import RecordError
from connect_lite.pipeline.executor import gc_paused
from connect_lite.pipeline.session import SparkRuntime
from connect_lite.pipeline.transfer import dumps, run_job, split
from connect_lite.pipeline.work import SOURCE_FIELDS, SOURCE_RECORD_FIELDS, TIMESTAMP_TYPES


@dataclass(frozen=True)
class TransformSpec:
    """A transformation factory, with an optional predicate factory that gates it."""

    factory: Callable[[], Transformation[Any]]
    predicate: Callable[[], Predicate[Any]] | None = None
    negate: bool = False


@dataclass(frozen=True)
class StageSpec:
    """What a stage runs: converter factories (already configured) and the transform chain.

    ``stage_id`` keys the per-worker-process component cache, so it must be unique among
    live stages (e.g. ``"<connector>-<task>"``); each new SourceStage/SinkStage instance
    rebuilds its components once, even under an id used before.
    """

    stage_id: str
    key_converter: Callable[[], Converter]
    value_converter: Callable[[], Converter]
    header_converter: Callable[[], HeaderConverter]
    transforms: tuple[TransformSpec, ...] = ()


@dataclass(slots=True)
class ProducedRecord:
    """A source record ready to produce: serialized key, value and headers."""

    index: int  # position in the input batch
    topic: str
    partition: int | None
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]]
    timestamp: int | None


@dataclass
class SourceBatchResult:
    """The outcome of a source batch: produced records in input order, drops and errors."""

    size: int
    records: list[ProducedRecord] = field(default_factory=list)
    dropped: list[int] = field(default_factory=list)
    errors: list[RecordError] = field(default_factory=list)  # only with tolerate_errors

    def by_index(self) -> list[ProducedRecord | None]:
        """One entry per input record: its ProducedRecord, or None if dropped or failed."""
        out: list[ProducedRecord | None] = [None] * self.size
        for record in self.records:
            out[record.index] = record
        return out


@dataclass
class SinkBatchResult:
    """The outcome of a sink batch: SinkRecords in input order, and every input's offset."""

    records: list[SinkRecord] = field(default_factory=list)
    indices: list[int] = field(default_factory=list)  # input position of each record
    offsets: list[tuple[str, int, int]] = field(default_factory=list)  # every input
    dropped: list[int] = field(default_factory=list)
    errors: list[RecordError] = field(default_factory=list)  # only with tolerate_errors

    def next_offsets(self) -> dict[TopicPartition, int]:
        """Per partition, the offset after the last input message (what a commit stores)."""
        out: dict[TopicPartition, int] = {}
        for topic, partition, offset in self.offsets:
            tp = TopicPartition(topic, partition)
            if offset + 1 > out.get(tp, -1):
                out[tp] = offset + 1
        return out


_MESSAGE = operator.attrgetter(
    "topic", "partition", "offset", "key", "value", "headers", "timestamp", "timestamp_type"
)


class _Stage:
    """Shared driver-side plumbing: job group, chunking, error raising."""

    kind = ""

    def __init__(self, runtime: SparkRuntime, spec: StageSpec, job_group: str) -> None:
        self.runtime = runtime
        self.spec = spec
        self.job_group = job_group
        self._token = uuid.uuid4().hex  # a new stage instance rebuilds its components

    def cancel(self) -> None:
        """Cancel this stage's running job (stopping its task)."""
        self.runtime.cancel(self.job_group)

    def _run_chunks(self, n: int, make_payload: Callable[[int, int], Any]) -> list[Any]:
        bounds = split(n, self.runtime.default_parallelism)
        description = f"connect-lite {self.kind} stage {self.spec.stage_id}: {n} records"
        with self.runtime.job_group(self.job_group, description) as group:
            payloads = [dumps(make_payload(a, b)) for a, b in bounds]
            results = run_job(self.runtime, group, self.kind, self.spec, self._token, payloads)
        return list(zip((a for a, _ in bounds), results, strict=True))

    @staticmethod
    def _errors(
        base: int, chunk_errors: Sequence[RecordError], where: Callable[[int], str]
    ) -> list[RecordError]:
        return [
            e
            if e.index is None
            else dataclasses.replace(e, index=base + e.index, where=where(base + e.index))
            for e in chunk_errors
        ]

    @staticmethod
    def _raise_first(errors: list[RecordError], tolerate: bool) -> None:
        fatal = [e for e in errors if e.index is None]
        if fatal:
            raise fatal[0].to_exception()
        if errors and not tolerate:
            raise min(errors, key=lambda e: e.index or 0).to_exception()


class SourceStage(_Stage):
    """Transforms, predicates and converters for batches of SourceRecords, one job per batch."""

    kind = "source"

    def run(
        self, records: list[SourceRecord], *, tolerate_errors: bool = False
    ) -> SourceBatchResult:
        """Convert a batch. Errors raise (DataError or the original ConnectError subclass)
        unless ``tolerate_errors``, which reports them in the result and skips the records."""
        n = len(records)
        result = SourceBatchResult(n)
        if n == 0:
            return result
        full = bool(self.spec.transforms)
        names = SOURCE_RECORD_FIELDS if full else SOURCE_FIELDS
        with gc_paused():
            chunks = self._run_chunks(n, lambda a, b: (full, _columns(records[a:b], names)))
            for base, chunk in chunks:
                self._collect(records, base, chunk, result)
        self._raise_first(result.errors, tolerate_errors)
        return result

    def _collect(
        self, records: list[SourceRecord], base: int, chunk: dict[str, Any], out: SourceBatchResult
    ) -> None:
        out.errors.extend(self._errors(base, chunk["errors"], lambda i: _where_source(records[i])))
        out.dropped.extend(base + i for i in chunk["dropped"])
        if not chunk["kept"]:
            return
        keys, values, meta = chunk["keys"], chunk["values"], chunk["meta"]
        headers = chunk["headers"] or [None] * len(keys)
        append = out.records.append
        for j, local in enumerate(chunk["kept"]):
            index = base + local
            if meta is None:
                rec = records[index]
                topic, partition, ts = rec.topic, rec.kafka_partition, rec.timestamp
            else:
                topic, partition, ts = meta[j]
            append(
                ProducedRecord(index, topic, partition, keys[j], values[j], headers[j] or [], ts)
            )


def _columns(records: list[SourceRecord], names: tuple[str, ...]) -> tuple[list[Any], ...]:
    """Field columns of a chunk (pickles ~3x faster than per-record tuples); no empty Headers."""
    return tuple(
        [r.headers or None for r in records]
        if name == "headers"
        else list(map(operator.attrgetter(name), records))
        for name in names
    )


def _where_source(record: SourceRecord) -> str:
    sp = dict(record.source_partition) if record.source_partition is not None else None
    so = dict(record.source_offset) if record.source_offset is not None else None
    return (
        f"topic='{record.topic}', partition={record.kafka_partition}, "
        f"source partition={sp}, source offset={so}"
    )


class SinkStage(_Stage):
    """Converters, then transforms and predicates, for batches of consumed messages."""

    kind = "sink"

    def run(self, messages: Sequence[Any], *, tolerate_errors: bool = False) -> SinkBatchResult:
        """Turn consumed messages (objects with topic, partition, offset, key, value, headers,
        timestamp, timestamp_type) into SinkRecords, in input order, dropped ones omitted."""
        with gc_paused():
            rows = list(map(_MESSAGE, messages))
            result = SinkBatchResult(offsets=[(r[0], r[1], r[2]) for r in rows])
            if not rows:
                return result
            for base, chunk in self._run_chunks(len(rows), lambda a, b: (rows[a:b],)):
                self._collect(rows, base, chunk, result)
        self._raise_first(result.errors, tolerate_errors)
        return result

    def _collect(
        self, rows: list[tuple[Any, ...]], base: int, chunk: dict[str, Any], out: SinkBatchResult
    ) -> None:
        out.errors.extend(self._errors(base, chunk["errors"], lambda i: _where_sink(rows[i])))
        out.dropped.extend(base + i for i in chunk["dropped"])
        kept = [base + i for i in chunk["kept"]]
        out.indices.extend(kept)
        if "records" in chunk:
            out.records.extend(chunk["records"])
            return
        append, ts_name = out.records.append, TIMESTAMP_TYPES.get
        columns = (chunk[c] for c in ("key_schemas", "keys", "value_schemas", "values", "headers"))
        for index, ks, kv, vs, vv, hs in zip(kept, *columns, strict=True):
            r = rows[index]
            append(SinkRecord(r[0], r[1], r[2], kv, vv, ks, vs, r[6], ts_name(r[7], r[7]), hs))


def _where_sink(row: tuple[Any, ...]) -> str:
    return f"topic='{row[0]}', partition={row[1]}, offset={row[2]}"
