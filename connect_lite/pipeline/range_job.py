"""A sink batch read by the executors: offset ranges in, DataFrames for ``put_dataframe`` out.

The task's consumer keeps the group on the driver and plans each batch as offset ranges of its
partitions (dataplane/sink_ranges.py). One Spark job reads them (kafka/range_reader.py: one
assign-only reader per Python worker), converts and transforms each slice of messages in the
Python workers (chunk_work.py, as the Arrow form does), and keeps the outcome on the executors
with ``localCheckpoint``: the *stage*, one row per run of records that share their schemas
(the frame's rows, as Arrow IPC), per slice of errors, and per range read. No record comes
back to the driver; only those rows' small columns do, and the errors (with their messages,
for the dead letter queue).

From them the driver learns, per partition, how far the read went without a gap (a range
stops short where records stopped arriving: "more later") and where the first record whose
schemas differ from the partition's first record's sits: the batch ends there for that
partition, so each partition's part of a batch is one run of schemas, in offset order. The
partitions whose runs share schemas are handed over in one ``put_dataframe`` (RangeFrame), its
DataFrame mapped from the stage's rows (sink_frames.py's table, in the workers). The stage is
deterministic, so a plugin may read its DataFrame as often as it likes; ``release`` frees it.

A sink that needs each partition's rows in offset order (``SinkTask.ordered_dataframes``) gets
one Spark task per partition range; others get large ranges split over several Spark tasks.
"""

from __future__ import annotations

import array
import dataclasses
import functools
import hashlib
import logging
import pickle
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import pyarrow as pa

from connect_lite.api.components import HeaderConverter
from connect_lite.api.connector import FRAME_SCHEMA_METADATA
from connect_lite.api.data import Schema
from connect_lite.api.records import SinkRecord, TopicPartition
from connect_lite.kafka import range_reader
from connect_lite.kafka.consumer import ConsumedMessage
from connect_lite.pipeline.batch_job import BatchJob, where_sink
from connect_lite.pipeline.chunk_work import run_chunk
from connect_lite.pipeline.chunks import (
    MessageRow,
    RecordsChunk,
    SinkChunk,
    SinkInput,
    sink_record,
)
from connect_lite.pipeline.executor import BuildError, Components, components, gc_paused
from connect_lite.pipeline.record_errors import JobCancelledError, RecordError
from connect_lite.pipeline.sink_frames import (
    StructTypes,
    columns_table,
    frame_metadata,
    frame_schema,
    frame_table,
    guessed_types,
    no_headers,
    schema_runs,
    unified_type,
)
from connect_lite.pipeline.transfer import MAX_CHUNK_RECORDS, dumps, to_arrow
from connect_lite.protocol.job_spec import JobSpec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

log = logging.getLogger(__name__)

SLICE_RECORDS = MAX_CHUNK_RECORDS
"""Messages a reader converts at a time, and offsets per Spark task of a split range."""

READ_IDLE_S = 3.0
"""How long a reader waits for records that are due before its range ends short."""

OPEN_WAIT_S = 1.0
"""How long the reader of an open range waits for a first record."""

OPEN_QUIET_S = 0.1
"""How long the reader of an open range waits for more after a record: then it has read what
the partition holds now."""

_RANGES = pa.schema(
    [
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("split", pa.int32()),
        ("start", pa.int64()),
        ("end", pa.int64()),
        ("open", pa.bool_()),
    ]
)
STAGE = pa.schema(
    [
        ("kind", pa.string()),  # RECORDS, ERRORS or READ
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("split", pa.int32()),
        ("first", pa.int64()),  # RECORDS, ERRORS: the row's first offset; READ: the start
        ("last", pa.int64()),  # RECORDS: the row's last offset; READ: after the last read
        ("count", pa.int64()),  # RECORDS: records; READ: messages read
        ("retries", pa.int64()),  # READ: operations retried after a RetriableError
        ("group", pa.string()),  # RECORDS: the id of the run's schemas
        ("meta", pa.binary()),  # RECORDS: pickled (key schema, value schema, guessed types)
        ("payload", pa.binary()),  # RECORDS: the frame's rows, Arrow IPC; ERRORS: pickled
        ("offsets", pa.binary()),  # RECORDS: the records' offsets, as int64s
    ]
)
RECORDS, ERRORS, READ = "records", "errors", "read"


class OffsetRange(NamedTuple):
    """Offsets ``[offset, end)`` of one partition, planned for a batch. It names its start
    ``offset`` so that a task keeps ranges as it keeps messages (where to read again). An
    ``open`` range's end is only a cap: whether records are there is not known, and its
    reader takes what the partition holds (dataplane/sink_ranges.py says when)."""

    topic: str
    partition: int
    offset: int
    end: int
    open: bool = False
    epoch: int = 0  # of its partition's cursor when it was planned (sink_ranges.py)

    @property
    def tp(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


def merged(ranges: Sequence[OffsetRange]) -> list[OffsetRange]:
    """One range per partition from the ranges a batch collected (each planned where the
    one before it ended)."""
    out: dict[TopicPartition, OffsetRange] = {}
    for r in ranges:
        seen = out.get(r.tp)
        if seen is not None:
            r = seen._replace(end=max(seen.end, r.end), open=seen.open or r.open)
        out[r.tp] = r
    return list(out.values())


def splits(ranges: Sequence[OffsetRange], ordered: bool) -> list[tuple[OffsetRange, int]]:
    """Each range as (piece, split number): whole when ``ordered``, else in pieces of
    SLICE_RECORDS offsets, each read by a Spark task of its own."""
    out: list[tuple[OffsetRange, int]] = []
    for r in ranges:
        if ordered or r.open:
            out.append((r, 0))
            continue
        for n, start in enumerate(range(r.offset, r.end, SLICE_RECORDS)):
            out.append((r._replace(offset=start, end=min(start + SLICE_RECORDS, r.end)), n))
    return out


# -- in the executors ------------------------------------------------------------------------


def _group_id(key_schema: Schema | None, value_schema: Schema | None) -> str:
    text = repr((key_schema, value_schema)).encode()
    return hashlib.sha1(text, usedforsecurity=False).hexdigest()


def _records(messages: list[ConsumedMessage], chunk: Any) -> list[SinkRecord]:
    """The SinkRecords of a converted (and transformed) slice, aligned with ``chunk.kept``."""
    if isinstance(chunk, RecordsChunk):
        return list(chunk.records)
    if not isinstance(chunk, SinkChunk):
        return []
    columns = (chunk.key_schemas, chunk.keys, chunk.value_schemas, chunk.values, chunk.headers)
    return [
        sink_record(messages[i], kv, ks, vv, vs, hs)
        for i, ks, kv, vs, vv, hs in zip(chunk.kept, *columns, strict=True)
    ]


def _stage_rows(rows: list[dict[str, Any]]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist(rows, schema=STAGE)


def _row(kind: str, r: OffsetRange, split: int, **values: Any) -> dict[str, Any]:
    return {"kind": kind, "topic": r.topic, "partition": r.partition, "split": split, **values}


def map_ranges(
    spec: JobSpec,
    token: str,
    config: Mapping[str, str],
    batches: Iterator[pa.RecordBatch],
) -> Iterator[pa.RecordBatch]:
    """The mapInArrow function of the stage: ranges in, stage rows out (in Python workers)."""
    comps = components(spec, token)
    reader = range_reader.reader(config)
    meta = comps.has_transforms  # records are built by the chain from whole messages
    try:
        header_converter = comps.header.get()
    except BuildError as e:  # fails the batch, as a converter that cannot be built does
        yield _stage_rows([{"kind": ERRORS, "payload": dumps([(e.error, None)])}])
        return
    for batch in batches:
        for row in batch.to_pylist():
            r = OffsetRange(row["topic"], row["partition"], row["start"], row["end"], row["open"])
            read, retries, position = 0, 0, r.offset
            waits = (OPEN_WAIT_S, OPEN_QUIET_S) if r.open else (READ_IDLE_S, None)
            for messages in reader.read(r.tp, r.offset, r.end, SLICE_RECORDS, *waits):
                read += len(messages)
                position = messages[-1].offset + 1
                with gc_paused():
                    out = _plain_slice_rows(comps, r, row["split"], messages)
                    if out is None:
                        rows = cast("list[MessageRow]", messages)  # the same fields
                        chunk = run_chunk(comps, SinkInput.of(rows, meta=meta))
                        retries += chunk.retries
                        out = _slice_rows(r, row["split"], messages, chunk, header_converter)
                if out:
                    yield _stage_rows(out)
            done = {"first": r.offset, "last": position, "count": read, "retries": retries}
            yield _stage_rows([_row(READ, r, row["split"], **done)])


def _plain_slice_rows(
    comps: Components, r: OffsetRange, split: int, messages: list[ConsumedMessage]
) -> list[dict[str, Any]] | None:
    """The stage row of a plain slice, straight from the converters' values to the frame's
    columns: no transforms, no headers, one key schema and one value schema, and every
    message converted. None for any other slice: it takes the record path, which also
    reports each failing record."""
    if comps.has_transforms or any(m.headers for m in messages):
        return None
    try:
        key_converter, value_converter = comps.key.get(), comps.value.get()
        topic = messages[0].topic
        keys = [key_converter.to_connect_data(topic, m.key) for m in messages]
        values = [value_converter.to_connect_data(topic, m.value) for m in messages]
    except Exception:
        return None
    key_schema, value_schema = keys[0].schema, values[0].schema
    for converted, schema in ((keys, key_schema), (values, value_schema)):
        if any(c.schema is not schema and c.schema != schema for c in converted):
            return None
    table = columns_table(
        [m.topic for m in messages],
        [m.partition for m in messages],
        [m.offset for m in messages],
        [m.timestamp for m in messages],
        (key_schema, [k.value for k in keys]),
        (value_schema, [v.value for v in values]),
        no_headers(len(messages)),
        guess=True,
    )
    return [_records_row(r, split, key_schema, value_schema, table)]


def _records_row(
    r: OffsetRange,
    split: int,
    key_schema: Schema | None,
    value_schema: Schema | None,
    table: pa.Table,
) -> dict[str, Any]:
    """The stage row of one run of records with these schemas: ``table`` is the frame's rows,
    made with ``guess`` (its struct types are the run's guesses)."""
    offsets = table.column("offset").to_pylist()
    guessed = guessed_types(table, key_schema, value_schema)
    return _row(
        RECORDS, r, split,
        first=offsets[0], last=offsets[-1], count=len(offsets),
        group=_group_id(key_schema, value_schema),
        meta=dumps((key_schema, value_schema, guessed)),
        payload=_ipc(table),
        offsets=array.array("q", offsets).tobytes(),
    )  # fmt: skip


def _slice_rows(
    r: OffsetRange,
    split: int,
    messages: list[ConsumedMessage],
    chunk: Any,
    header_converter: HeaderConverter,
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if chunk.errors:
        failed = [
            (
                dataclasses.replace(e, where=where_sink(messages[e.index])),
                messages[e.index],
            )
            if e.index is not None
            else (e, None)
            for e in chunk.errors
        ]
        first = min((m.offset for _, m in failed if m is not None), default=messages[0].offset)
        out.append(_row(ERRORS, r, split, first=first, payload=dumps(failed)))
    records = _records(messages, chunk)
    for positions in schema_runs(records):
        run = [records[p] for p in positions]
        table = frame_table(run, header_converter, guess=True)
        out.append(_records_row(r, split, run[0].key_schema, run[0].value_schema, table))
    return out


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return bytes(sink.getvalue().to_pybytes())


def map_frame(
    limits: Mapping[TopicPartition, int],
    schema: pa.Schema,
    batches: Iterator[pa.RecordBatch],
) -> Iterator[pa.RecordBatch]:
    """The mapInArrow function of a RangeFrame: the stage's runs of one group in, the rows of
    ``put_dataframe``'s DataFrame out (in Python workers), each run's table conformed to the
    frame's ``schema``. Runs of partitions not in ``limits``, or at or after a partition's
    limit, are left out."""
    for batch in batches:
        topics, partitions = batch.column("topic").to_pylist(), batch.column("partition")
        firsts, payloads = batch.column("first").to_pylist(), batch.column("payload")
        for i, topic in enumerate(topics):
            limit = limits.get(TopicPartition(topic, partitions[i].as_py()))
            if limit is None or firsts[i] >= limit:
                continue
            table = pa.ipc.open_stream(payloads[i].as_buffer()).read_all().combine_chunks()
            columns = [
                conform(table.column(f.name).chunk(0), f.type)
                if f.name in table.schema.names
                else pa.nulls(table.num_rows, f.type)
                for f in schema
            ]
            yield pa.RecordBatch.from_arrays(columns, schema=schema)


def conform(array: pa.Array, kind: pa.DataType) -> pa.Array:
    """``array`` as type ``kind``: a struct's missing fields null, fields of types that
    ``unified_type`` merged promoted, timestamps in ``kind``'s unit."""
    if array.type == kind:
        return array
    if pa.types.is_null(array.type):
        return pa.nulls(len(array), kind)
    if pa.types.is_struct(kind) and pa.types.is_struct(array.type):
        names = {array.type.field(i).name for i in range(array.type.num_fields)}
        children = [
            conform(array.field(f.name), f.type)
            if f.name in names
            else pa.nulls(len(array), f.type)
            for f in kind
        ]
        mask = array.is_null() if array.null_count else None
        return pa.StructArray.from_arrays(children, fields=list(kind), mask=mask)
    if pa.types.is_list(kind) and pa.types.is_list(array.type):
        values = conform(array.values, kind.value_type)
        mask = array.is_null() if array.null_count else None
        return pa.ListArray.from_arrays(array.offsets, values, type=kind, mask=mask)
    return array.cast(kind)


# -- on the driver ---------------------------------------------------------------------------


@dataclass
class RangeFrame:
    """One ``put_dataframe`` of a range batch: the partitions whose part of the batch has these
    schemas, each up to its limit (the offset after its last record in it)."""

    stage: Any  # the batch's checkpointed stage (a pyspark DataFrame)
    job: BatchJob
    group: str
    key_schema: Schema | None
    value_schema: Schema | None
    struct_types: StructTypes
    limits: dict[TopicPartition, int]
    count: int
    config: Mapping[str, str] = field(default_factory=dict)  # the executors' readers'

    def _runs(self) -> DataFrame:
        """The stage's rows of this frame's runs of records."""
        from pyspark.sql import functions as F

        return self.stage.where((F.col("kind") == RECORDS) & (F.col("group") == self.group))

    def originals(self) -> list[ConsumedMessage]:
        """The consumed messages of the frame's records, read again here: for the dead letter
        queue when a put_dataframe failed and errors are tolerated (the only time records of
        a range batch come to the driver)."""

        runs = self._runs()
        wanted: dict[TopicPartition, set[int]] = {}
        for row in runs.select("topic", "partition", "first", "offsets").toArrow().to_pylist():
            tp = TopicPartition(row["topic"], row["partition"])
            limit = self.limits.get(tp)
            if limit is not None and row["first"] < limit:
                packed = array.array("q", row["offsets"])
                wanted.setdefault(tp, set()).update(o for o in packed if o < limit)
        found: list[ConsumedMessage] = []
        reader = range_reader.RangeReader(self.config)
        try:
            for tp, offsets in sorted(wanted.items()):
                for messages in reader.read(tp, min(offsets), max(offsets) + 1, 10_000, 10.0):
                    found.extend(m for m in messages if m.offset in offsets)
        finally:
            reader.close()
        return found

    def frame(self) -> DataFrame:
        """The DataFrame handed to ``put_dataframe`` (lazy: read from the stage when used)."""

        schema = _in_micros(frame_schema(self.key_schema, self.value_schema, self.struct_types))
        runs = self._runs()
        mapper = functools.partial(map_frame, dict(self.limits), schema)
        frame = runs.select("topic", "partition", "first", "payload").mapInArrow(
            mapper, _spark_schema(schema)
        )
        for name, form in frame_metadata(self.key_schema, self.value_schema).items():
            frame = frame.withMetadata(name, {FRAME_SCHEMA_METADATA: form})
        return frame


def _in_micros(schema: pa.Schema) -> pa.Schema:
    """``schema`` with every timestamp in microseconds, UTC: what Spark takes from Arrow."""
    return pa.schema([f.with_type(_micros(f.type)) for f in schema])


def _micros(kind: pa.DataType) -> pa.DataType:
    if pa.types.is_timestamp(kind):
        return pa.timestamp("us", tz="UTC")
    if pa.types.is_struct(kind):
        return pa.struct(
            [kind.field(i).with_type(_micros(kind.field(i).type)) for i in range(kind.num_fields)]
        )
    if pa.types.is_list(kind):
        return pa.list_(kind.value_field.with_type(_micros(kind.value_type)))
    if pa.types.is_map(kind):
        return pa.map_(
            kind.key_field.with_type(_micros(kind.key_type)),
            kind.item_field.with_type(_micros(kind.item_type)),
        )
    return kind


def _spark_schema(schema: pa.Schema) -> Any:
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(schema)


@dataclass
class RangeBatch:
    """What a range batch's stage says, on the driver: per partition where the batch ends
    (``next_offsets``) and whether that is short of its planned end (``short``: read from
    there again), the frames to hand over, and the errors below the ends with their messages.
    No record is here."""

    ranges: list[OffsetRange]
    next_offsets: dict[TopicPartition, int] = field(default_factory=dict)
    short: dict[TopicPartition, int] = field(default_factory=dict)
    opened: dict[TopicPartition, bool] = field(default_factory=dict)
    """Per partition read as an open range: whether it found records (then the partition is
    looked at again at once: its reader may have stopped before the partition's end)."""
    frames: list[RangeFrame] = field(default_factory=list)
    errors: list[RecordError] = field(default_factory=list)
    originals: list[Any] = field(default_factory=list)
    read: int = 0
    retries: int = 0
    stage: Any = None

    @property
    def count(self) -> int:
        return sum(f.count for f in self.frames)

    def without(self, partitions: set[TopicPartition]) -> None:
        """Forget these partitions' part of the batch (revoked, or read from elsewhere)."""
        for tp in partitions:
            self.next_offsets.pop(tp, None)
            self.short.pop(tp, None)
            self.opened.pop(tp, None)
        for f in self.frames:
            for tp in partitions:
                f.limits.pop(tp, None)
        self.frames = [f for f in self.frames if f.limits]
        kept = [
            (e, m)
            for e, m in zip(self.errors, self.originals, strict=True)
            if m is None or TopicPartition(m.topic, m.partition) not in partitions
        ]
        self.errors = [dataclasses.replace(e, index=i) for i, (e, _) in enumerate(kept)]
        self.originals = [m for _, m in kept]

    def release(self) -> None:
        """Free the stage on the executors (its DataFrames fail after this)."""
        stage, self.stage = self.stage, None
        if stage is None:
            return
        try:
            stage._jdf.queryExecution().logical().rdd().unpersist(False)
        except Exception as error:  # Spark's cleaner frees it with the stage's objects
            log.debug("Could not free a batch's stage: %s", error)


def run(
    job: BatchJob, ranges: Sequence[OffsetRange], config: Mapping[str, str], ordered: bool
) -> RangeBatch:
    """Read, convert and transform a range batch in the executors (see the module's doc). If
    the job failed because Spark's JVM is gone it runs once more on a new session; if Spark's
    cluster is unreachable, SparkUnavailableError."""
    ranges = merged(ranges)
    begin = time.monotonic()
    session = None
    try:
        session = job.engine.current_session()
        batch = _run_once(job, ranges, config, ordered)
        log.debug(
            "Read %d messages of %d partitions in the executors in %.2f s",
            batch.read, len(ranges), time.monotonic() - begin,
        )  # fmt: skip
        return batch
    except JobCancelledError:
        raise
    except Exception as error:
        job.engine.raise_if_unavailable(error)
        if not job.engine.recover(session):
            raise
    log.warning("Reading the batch of %s again on a new SparkSession", job.spec.job_id)
    return _run_once(job, ranges, config, ordered)


def _run_once(
    job: BatchJob, ranges: list[OffsetRange], config: Mapping[str, str], ordered: bool
) -> RangeBatch:
    from pyspark.sql import functions as F

    pieces = splits(ranges, ordered)
    total = sum(r.end - r.offset for r in ranges)
    description = f"connect-lite sink range batch {job.spec.job_id}: {total} offsets"
    engine = job.engine
    with engine.job_group(job.job_group, description, job.spec.job_id) as group:
        job._check_cancelled()
        rows = [
            dict(
                topic=r.topic,
                partition=r.partition,
                split=n,
                start=r.offset,
                end=r.end,
                open=r.open,
            )
            for r, n in pieces
        ]  # one record batch, so one Spark partition, per piece
        table = pa.Table.from_batches(
            [pa.RecordBatch.from_pylist([row], schema=_RANGES) for row in rows], _RANGES
        )
        mapper = functools.partial(map_ranges, job._shipped_spec(), job._token, dict(config))
        mapped = engine.session().createDataFrame(table).mapInArrow(mapper, _spark_schema(STAGE))
        try:
            stage = mapped.localCheckpoint(eager=True)
        except Exception as e:
            if group.cancelled:
                raise JobCancelledError(f"Job group {group.group_id} was cancelled") from e
            raise
        small = stage.select(
            *(c for c in STAGE.names if c not in ("payload", "offsets")),
            F.when(F.col("kind") == ERRORS, F.col("payload")).alias("payload"),
        )
        facts = to_arrow(group, small).to_pylist()
    batch = RangeBatch(ranges, stage=stage)
    try:
        _read_facts(batch, job, config, ranges, pieces, facts)
    except BaseException:
        batch.release()
        raise
    return batch


def _read_facts(
    batch: RangeBatch,
    job: BatchJob,
    config: Mapping[str, str],
    ranges: list[OffsetRange],
    pieces: list[tuple[OffsetRange, int]],
    facts: list[dict[str, Any]],
) -> None:
    reads: dict[tuple[TopicPartition, int], dict[str, Any]] = {}
    runs: dict[TopicPartition, list[dict[str, Any]]] = {}
    failed: list[tuple[RecordError, Any]] = []
    for fact in facts:
        tp = TopicPartition(fact["topic"], fact["partition"])
        if fact["kind"] == READ:
            reads[(tp, fact["split"])] = fact
            batch.read += fact["count"]
            batch.retries += fact["retries"]
        elif fact["kind"] == RECORDS:
            runs.setdefault(tp, []).append(fact)
        else:
            failed.extend(pickle.loads(fact["payload"]))
    fatal = [e for e, m in failed if m is None]
    if fatal:
        raise fatal[0].to_exception()
    first_groups: dict[TopicPartition, str] = {}
    for r in ranges:
        tp = r.tp
        end = r.offset  # the offset after the part read without a gap
        for piece, n in (p for p in pieces if p[0].tp == tp):
            read = reads.get((tp, n))
            if read is None or piece.offset != end:
                break
            end = read["last"]
            if end < piece.end:
                break
        gap_free = end
        own = sorted((f for f in runs.get(tp, ()) if f["first"] < end), key=lambda f: f["first"])
        if own:
            first_groups[tp] = own[0]["group"]
            other = [f["first"] for f in own if f["group"] != own[0]["group"]]
            end = min([end, *other])
        batch.next_offsets[tp] = end
        if r.open:  # whether it found records: then more may follow
            batch.opened[tp] = gap_free > r.offset
        elif end < r.end:
            batch.short[tp] = end
    _frames(batch, job, config, runs, first_groups)
    kept = [
        (e, m)
        for e, m in failed
        if m.offset < batch.next_offsets.get(TopicPartition(m.topic, m.partition), -1)
    ]
    kept.sort(key=lambda pair: (pair[1].topic, pair[1].partition, pair[1].offset))
    batch.errors = [dataclasses.replace(e, index=i) for i, (e, _) in enumerate(kept)]
    batch.originals = [m for _, m in kept]


def _frames(
    batch: RangeBatch,
    job: BatchJob,
    config: Mapping[str, str],
    runs: dict[TopicPartition, list[dict[str, Any]]],
    first_groups: dict[TopicPartition, str],
) -> None:
    by_group: dict[str, RangeFrame] = {}
    guesses: dict[str, dict[str, list[Any]]] = {}
    for tp, group in sorted(first_groups.items()):
        limit = batch.next_offsets[tp]
        own = [f for f in runs[tp] if f["group"] == group and f["first"] < limit]
        found = by_group.get(group)
        if found is None:
            key_schema, value_schema, _ = pickle.loads(own[0]["meta"])
            found = by_group[group] = RangeFrame(
                batch.stage, job, group, key_schema, value_schema, {}, {}, 0, config
            )
        found.limits[tp] = limit
        found.count += sum(f["count"] for f in own)
        for f in own:
            for side, guessed in pickle.loads(f["meta"])[2].items():
                guesses.setdefault(group, {}).setdefault(side, []).append(guessed)
    for group, frame in by_group.items():
        frame.struct_types = {
            side: unified_type(types) for side, types in guesses.get(group, {}).items()
        }
    batch.frames = list(by_group.values())


__all__ = [
    "OffsetRange",
    "RangeBatch",
    "RangeFrame",
    "map_frame",
    "map_ranges",
    "merged",
    "run",
    "splits",
]
