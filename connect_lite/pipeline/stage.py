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
import functools
import logging
import operator
import pickle
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from connect_lite.api.components import Converter, HeaderConverter, Predicate, Transformation
from connect_lite.api.data import Headers
from connect_lite.api.records import SinkRecord, SourceRecord, TopicPartition
from connect_lite.pipeline import column_compilers, column_plan
from connect_lite.pipeline.columns import decoder
from connect_lite.pipeline.executor import gc_paused
from connect_lite.pipeline.record_errors import (
    RecordError,
    StageCancelledError,
    StageExecutionError,
)
from connect_lite.pipeline.session import SparkRuntime
from connect_lite.pipeline.transfer import (
    OUTPUT_SCHEMA,
    chunk_bounds,
    collect_payloads,
    dumps,
    map_sink_rows,
    map_source_rows,
    run_job,
    to_arrow,
)
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
    columns: bool = True
    """Run a chain of built-ins as Spark column expressions when the batch has a schema."""
    retry_timeout_ms: int = 0
    """errors.retry.timeout: how long a RetriableError is retried; 0 = never, -1 = forever."""
    retry_delay_max_ms: int = 60000
    """errors.retry.delay.max.ms: the cap of the exponential backoff between retries."""


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
    retries: int = 0  # operations retried after a RetriableError

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
    retries: int = 0  # operations retried after a RetriableError

    def next_offsets(self) -> dict[TopicPartition, int]:
        """Per partition, the offset after the last input message (what a commit stores)."""
        out: dict[TopicPartition, int] = {}
        for topic, partition, offset in self.offsets:
            tp = TopicPartition(topic, partition)
            if offset + 1 > out.get(tp, -1):
                out[tp] = offset + 1
        return out


@dataclass
class TransformResult:
    """The outcome of a chain over records: per input, the new record or None (dropped or
    failed, see ``errors``)."""

    records: list[Any]
    errors: list[RecordError] = field(default_factory=list)
    retries: int = 0


log = logging.getLogger(__name__)

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
        self._driver_chain: list[tuple[Any, Any, bool]] | None = None
        self.compiled_batches = 0  # batches whose chain ran as Spark column expressions

    def cancel(self) -> None:
        """Cancel this stage's running job (stopping its task)."""
        self.runtime.cancel(self.job_group)

    def _run_chunks(
        self, n: int, make_payload: Callable[[int, int], Any], kind: str | None = None
    ) -> list[Any]:
        """One job over the batch in chunks; their results with each chunk's start. If the
        job failed because Spark's JVM is gone, the batch runs once more on a new session."""
        try:
            return self._run_chunks_once(n, make_payload, kind or self.kind)
        except StageCancelledError:
            raise
        except Exception:
            if not self.runtime.recover():
                raise
        log.warning("Running the batch of %s again on a new SparkSession", self.spec.stage_id)
        return self._run_chunks_once(n, make_payload, kind or self.kind)

    def _run_chunks_once(
        self, n: int, make_payload: Callable[[int, int], Any], kind: str
    ) -> list[Any]:
        bounds = chunk_bounds(n, self.runtime.default_parallelism)
        description = f"connect-lite {kind} stage {self.spec.stage_id}: {n} records"
        with self.runtime.job_group(self.job_group, description) as group:
            payloads = [dumps(make_payload(a, b)) for a, b in bounds]
            results = run_job(self.runtime, group, kind, self.spec, self._token, payloads)
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

    def _chain(self) -> list[tuple[Any, Any, bool]] | None:
        """The transform chain built on the driver (for compiling), or None if it cannot be."""
        if self._driver_chain is None:
            try:
                self._driver_chain = [
                    (t.factory(), None if t.predicate is None else t.predicate(), t.negate)
                    for t in self.spec.transforms
                ]
            except Exception:
                self._driver_chain = []  # the executors report the failure per batch
        return self._driver_chain or None

    def transform(self, records: list[Any], *, tolerate_errors: bool = False) -> TransformResult:
        """Only the transform chain over converted records, in the Arrow form (mapInArrow)."""
        result = TransformResult([None] * len(records))
        if not records:
            return result
        with gc_paused():
            for base, chunk in self._run_chunks(
                len(records), lambda a, b: (records[a:b],), kind="chain"
            ):
                result.errors.extend(
                    self._errors(base, chunk["errors"], lambda i: _where(records[i]))
                )
                result.retries += chunk.get("retries", 0)
                for local, record in zip(chunk["kept"], chunk["records"], strict=True):
                    result.records[base + local] = record
        self._raise_first(result.errors, tolerate_errors)
        return result

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
        if n == 0:
            return SourceBatchResult(n)
        columns = self.spec.transforms and self.spec.columns
        result = self._run_as_columns(records) if columns else None
        if result is None:
            result = self._convert(records, bool(self.spec.transforms))
        self._raise_first(result.errors, tolerate_errors)
        return result

    def _run_as_columns(self, records: list[SourceRecord]) -> SourceBatchResult | None:
        """One job: the chain as Spark column expressions, then the converters in Python
        workers over the rows it kept. None when the batch has no column form (or the job
        failed for a reason that is no single record's; the Arrow form isolates it)."""
        chain = self._chain()
        if chain is None or not column_compilers.chain_has_columns(chain):
            return None
        try:
            planned = column_plan.plan(self.runtime, chain, records)
        except Exception as e:
            log.warning("No column form for this batch, using the Arrow form: %s", e)
            return None
        if planned is None:
            return None
        mapped = planned.selected.mapInArrow(
            functools.partial(map_source_rows, self.spec, self._token, planned.schemas),
            OUTPUT_SCHEMA,
        )
        n = len(records)
        description = f"connect-lite source stage {self.spec.stage_id}: {n} records as columns"
        try:
            with gc_paused(), self.runtime.job_group(self.job_group, description) as group:
                chunks = collect_payloads(group, mapped)
        except StageCancelledError:
            raise
        except Exception as e:
            log.warning("Column form of the transforms failed, using the Arrow form: %s", e)
            return None
        result = SourceBatchResult(n)
        survivors: set[int] = set()
        with gc_paused():
            for chunk in chunks:
                survivors.update(chunk["idx"])
                self._collect(records, 0, chunk, result)
        result.records.sort(key=operator.attrgetter("index"))  # partitions come back in any order
        result.errors.sort(key=lambda e: -1 if e.index is None else e.index)
        result.dropped = sorted(set(range(n)) - survivors)
        self.compiled_batches += 1
        return result

    def _convert(self, records: list[SourceRecord], full: bool) -> SourceBatchResult:
        """One job: with ``full`` the chain then the converters, else the converters only."""
        result = SourceBatchResult(len(records))
        names = SOURCE_RECORD_FIELDS if full else SOURCE_FIELDS
        with gc_paused():
            chunks = self._run_chunks(
                len(records), lambda a, b: (full, _columns(records[a:b], names))
            )
            for base, chunk in chunks:
                self._collect(records, base, chunk, result)
        return result

    def _collect(
        self, records: list[SourceRecord], base: int, chunk: dict[str, Any], out: SourceBatchResult
    ) -> None:
        out.errors.extend(self._errors(base, chunk["errors"], lambda i: _where_source(records[i])))
        out.retries += chunk.get("retries", 0)
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


def _where(record: Any) -> str:
    if isinstance(record, SourceRecord):
        return _where_source(record)
    return _where_sink((record.topic, record.kafka_partition, record.kafka_offset))


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
    _probe_converters: tuple[Converter, Converter] | None = None  # built once, on the driver

    def run(self, messages: Sequence[Any], *, tolerate_errors: bool = False) -> SinkBatchResult:
        """Turn consumed messages (objects with topic, partition, offset, key, value, headers,
        timestamp, timestamp_type) into SinkRecords, in input order, dropped ones omitted."""
        with gc_paused():
            rows = list(map(_MESSAGE, messages))
            offsets = [(r[0], r[1], r[2]) for r in rows]
            if not rows:
                return SinkBatchResult(offsets=offsets)
            columns = self.spec.transforms and self.spec.columns
            result = self._run_as_columns(rows) if columns else None
            if result is None:
                result = SinkBatchResult(offsets=offsets)
                for base, chunk in self._run_chunks(len(rows), lambda a, b: (rows[a:b],)):
                    self._collect(rows, base, chunk, result)
        self._raise_first(result.errors, tolerate_errors)
        return result

    def _probe(self, row: tuple[Any, ...]) -> SinkRecord | None:
        """The batch's first message converted on the driver, when it has a schema."""
        try:
            if self._probe_converters is None:
                self._probe_converters = (self.spec.key_converter(), self.spec.value_converter())
            key = self._probe_converters[0].to_connect_data(row[0], row[3])
            value = self._probe_converters[1].to_connect_data(row[0], row[4])
        except Exception:
            return None  # the job reports it against the record
        if key.schema is None and value.schema is None:
            return None
        headers = Headers.of((k, v) for k, v in row[5] or ())  # only their keys matter here
        return SinkRecord(
            row[0], row[1], row[2], key.value, value.value, key.schema, value.schema, row[6],
            TIMESTAMP_TYPES.get(row[7], row[7]), headers,
        )  # fmt: skip

    def _run_as_columns(self, rows: list[tuple[Any, ...]]) -> SinkBatchResult | None:
        """One job: converters in Python workers emit typed rows, the chain runs as Spark
        column expressions over them. None when the batch has no column form."""
        chain = self._chain()
        if chain is None or not column_compilers.chain_has_columns(chain):
            return None
        probe = self._probe(rows[0])
        if probe is None:
            return None
        try:
            planned = column_plan.plan_sink(
                self.runtime,
                chain,
                probe,
                rows,
                lambda layout: functools.partial(map_sink_rows, self.spec, self._token, layout),
            )
        except Exception as e:
            log.warning("No column form for this batch, using the Arrow form: %s", e)
            return None
        if planned is None:
            return None
        description = f"connect-lite sink stage {self.spec.stage_id}: {len(rows)} rows as columns"
        try:
            with self.runtime.job_group(self.job_group, description) as group:
                table = to_arrow(group, planned.selected)
        except StageExecutionError as e:  # e.g. a value Spark rejects: the Arrow form isolates it
            log.warning("Column form of the transforms failed, using the Arrow form: %s", e)
            return None
        result = self._collect_columns(rows, planned, table)
        self.compiled_batches += 1
        return result

    def _collect_columns(
        self, rows: list[tuple[Any, ...]], planned: column_plan.SinkPlan, table: Any
    ) -> SinkBatchResult:
        """SinkRecords from the select's rows; rows that did not fit run in the Arrow form."""
        result = SinkBatchResult(offsets=[(r[0], r[1], r[2]) for r in rows])
        data = table.to_pydict()
        result.retries = sum(data["retries"])
        decode: dict[str, Callable[[Any], Any] | None] = {
            side: decoder(schema) if side in planned.layout.typed and schema else None
            for side, schema in (
                ("key", planned.schemas["key"]),
                ("value", planned.schemas["value"]),
            )
        }
        kept: list[tuple[int, SinkRecord]] = []
        others: list[tuple[int, SinkRecord]] = []
        empty = Headers()
        for r, i in enumerate(data["idx"]):
            row = rows[i]
            ts_type = TIMESTAMP_TYPES.get(row[7], row[7])
            rest = data["rest"][r]
            if rest is not None:
                kind, *fields = pickle.loads(rest)
                if kind == "error":
                    result.errors.append(dataclasses.replace(fields[0], where=_where_sink(row)))
                    continue
                key, value, headers = fields
                record = SinkRecord(
                    row[0], row[1], row[2], key.value, value.value, key.schema, value.schema,
                    row[6], ts_type, headers,
                )  # fmt: skip
                others.append((i, record))
            elif not data["kept"][r]:
                result.dropped.append(i)
            else:
                key, value = (
                    _unpickled(data[f"{side}_raw"][r])
                    if convert is None
                    else convert(data[side][r])
                    for side, convert in decode.items()
                )
                blob = data["headers"][r]
                record = SinkRecord(
                    data["topic"][r], data["partition"][r], row[2], key, value,
                    planned.schemas["key"], planned.schemas["value"], data["timestamp"][r],
                    ts_type, empty if blob is None else pickle.loads(blob),
                )  # fmt: skip
                kept.append((i, record))
        if others:  # other schemas than the first message's, or nulls: the Arrow form
            chained = self.transform([record for _, record in others], tolerate_errors=True)
            result.retries += chained.retries
            for error in chained.errors:
                assert error.index is not None
                result.errors.append(dataclasses.replace(error, index=others[error.index][0]))
            failed = {e.index for e in chained.errors}
            for position, ((i, _), record) in enumerate(zip(others, chained.records, strict=True)):
                if record is not None:
                    kept.append((i, record))
                elif position not in failed:
                    result.dropped.append(i)
        kept.sort(key=operator.itemgetter(0))  # input order: offsets ascend per partition
        result.indices = [i for i, _ in kept]
        result.records = [record for _, record in kept]
        result.errors.sort(key=lambda e: -1 if e.index is None else e.index)
        result.dropped.sort()
        return result

    def _collect(
        self, rows: list[tuple[Any, ...]], base: int, chunk: dict[str, Any], out: SinkBatchResult
    ) -> None:
        out.errors.extend(self._errors(base, chunk["errors"], lambda i: _where_sink(rows[i])))
        out.retries += chunk.get("retries", 0)
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


def _unpickled(blob: bytes | None) -> Any:
    return None if blob is None else pickle.loads(blob)


def _where_sink(row: tuple[Any, ...]) -> str:
    return f"topic='{row[0]}', partition={row[1]}, offset={row[2]}"
