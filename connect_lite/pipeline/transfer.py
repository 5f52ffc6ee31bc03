"""Moving a batch through one Spark job: pickled chunks in Arrow rows, ``mapInArrow``, ``toArrow``.

How a batch travels (each choice measured on the 2-core box):

- The driver splits the batch into one chunk per partition (Spark's default parallelism,
  at most one per record) and pickles each chunk: the record fields the executor needs,
  as a chunks.ChunkInput.
  Pickle memoizes repeated objects (topic strings, schemas), so a chunk costs little
  more than its values.
- Each chunk is one row ``(chunk: int64, payload: binary)`` of an Arrow table whose record
  batches are one per chunk; ``spark.createDataFrame(table)`` makes one partition per
  Arrow record batch, so chunk *i* is partition *i* (with the session's
  ``spark.sql.execution.arrow.localRelationThreshold=0``: below that size Spark would make
  a LocalRelation instead, split in defaultParallelism partitions).
- ``mapInArrow`` runs :func:`map_chunks` in the Python workers: unpickle, run the
  batch job's components (cached per worker process), pickle the result (a chunks.ChunkResult),
  and yield one output row per chunk. ``toArrow()`` collects them; the driver unpickles in
  order.
- On a local master the rows carry references to files instead of the pickles
  (exchange.py): the chunks and results skip the JVM's copies.

Per-record Arrow rows (binary/int/list<struct> columns) were measured as the alternative:
for 200k values of ~70 bytes through mapInArrow + toArrow, per-record binary rows took
0.36 s and two pickled chunk rows 0.32-0.37 s, so the JVM's row conversion is not the
bottleneck. Chunks were kept because sink results must be Python objects anyway (Structs,
schemas, Headers), and drops, errors and metadata travel in the same blob. Inside a chunk,
source records and sink results travel as columns (one list per field), ~3x faster to
pickle than a tuple per record. Cyclic GC is paused while chunks are (un)pickled and
records are built: it otherwise dominates the cost of allocating millions of objects.
"""

from __future__ import annotations

import functools
import itertools
import logging
import pickle
import struct
import time
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from connect_lite.api.data import Schema
from connect_lite.pipeline import exchange
from connect_lite.pipeline.chunk_work import run_chunk
from connect_lite.pipeline.chunks import ChunkResult, SourceChunk
from connect_lite.pipeline.executor import components, gc_paused
from connect_lite.pipeline.job_groups import JobGroup
from connect_lite.pipeline.record_errors import JobCancelledError, JobFailedError
from connect_lite.pipeline.session import SparkEngine
from connect_lite.pipeline.source_send import Sending, SendOrder
from connect_lite.pipeline.typed_rows import RowLayout, sink_rows, source_rows, typed_rows
from connect_lite.protocol.job_spec import JobSpec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

log = logging.getLogger(__name__)

OUTPUT_SCHEMA = "chunk long, payload binary"
_ARROW_SCHEMA = pa.schema([("chunk", pa.int64()), ("payload", pa.binary())])


MAX_CHUNK_RECORDS = 20_000
"""Records per pickled chunk. A chunk is one row to the JVM, which copies it whole into a
contiguous buffer (doubling as it grows): 200k records of ~250 bytes in one row exhausted
Spark's default 1 GiB heap. Each chunk is a partition, so a Spark task of its own: a big
batch is many short tasks, between which the FAIR scheduler gives a free core to another
task's pool (a batch split in as many tasks as there are cores would hold them all until it
ends, and other connectors' batches would wait for it in any scheduler mode)."""


def chunk_bounds(n: int, partitions: int) -> list[tuple[int, int]]:
    """[start, end) chunks of a batch: at least one per partition, at most MAX_CHUNK_RECORDS."""
    return split(n, max(partitions, -(-n // MAX_CHUNK_RECORDS)))


def split(n: int, parts: int) -> list[tuple[int, int]]:
    """``parts`` (at most ``n``) contiguous [start, end) ranges of near-equal size."""
    parts = max(1, min(n, parts))
    size, extra = divmod(n, parts)
    bounds, start = [], 0
    for i in range(parts):
        end = start + size + (1 if i < extra else 0)
        bounds.append((start, end))
        start = end
    return bounds


def dumps(obj: object) -> bytes:
    """Pickle a chunk; objects plain pickle cannot handle go through cloudpickle."""
    try:
        return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, AttributeError, TypeError):
        from pyspark import cloudpickle

        return bytes(cloudpickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


_MAX_PAYLOAD = 2**31 - 1
"""An Arrow ``binary`` value's offsets are 32-bit."""


def _row(chunk: int, payload: bytes) -> pa.RecordBatch:
    """One ``(chunk, payload)`` row, built from buffers (in the machine's byte order, as
    Arrow's are): the payload is not copied, and no ``pa.array`` runs over Python objects,
    since its first call in a process imports pandas (0.2 s in each new Python worker, so
    in the first batch after a minute idle)."""
    if len(payload) > _MAX_PAYLOAD:
        raise JobFailedError(
            f"A chunk of {len(payload):,} bytes is over Arrow's {_MAX_PAYLOAD:,}-byte limit"
        )
    ids = pa.Array.from_buffers(pa.int64(), 1, [None, pa.py_buffer(struct.pack("=q", chunk))])
    offsets = pa.py_buffer(struct.pack("=ii", 0, len(payload)))
    blobs = pa.Array.from_buffers(pa.binary(), 1, [None, offsets, pa.py_buffer(payload)])
    return pa.RecordBatch.from_arrays([ids, blobs], schema=_ARROW_SCHEMA)


def map_chunks(
    spec: JobSpec,
    token: str,
    batches: Iterator[pa.RecordBatch],
    order: SendOrder | None = None,
) -> Iterator[pa.RecordBatch]:
    """The mapInArrow function: one output row per input chunk row (runs in Python workers).
    With ``order``, source chunks' records are produced here (source_send.py), and the rows
    come once the task's records are all settled."""
    comps = components(spec, token)
    sending = None if order is None else Sending(order)
    started: list[tuple[int, str | None]] = []
    for batch in batches:
        ids = batch.column(0).to_pylist()
        payloads = batch.column(1)
        for row, chunk in enumerate(ids):
            blob = payloads[row].as_buffer()
            path = exchange.referenced(blob)  # on a local master: a file (exchange.py)
            with gc_paused():
                payload = pickle.loads(blob if path is None else exchange.read(path))
                result = run_chunk(comps, payload)
                if sending is not None:
                    sending.start(payload, result)
                    started.append((chunk, path))
                    continue
                out = dumps(result)
            del payload, result
            yield _row(chunk, out if path is None else exchange.put_result(path, out))
    if sending is not None:
        for (chunk, path), done in zip(started, sending.settle(), strict=True):
            out = dumps(done)
            yield _row(chunk, out if path is None else exchange.put_result(path, out))


def _rows(chunks: list[int], payloads: list[bytes]) -> pa.RecordBatch:
    """Several ``(chunk, payload)`` rows in one record batch (so in one partition, in order),
    built from buffers as ``_row`` builds one."""
    if len(chunks) == 1:
        return _row(chunks[0], payloads[0])
    ends = list(itertools.accumulate(map(len, payloads), initial=0))
    if ends[-1] > _MAX_PAYLOAD:
        raise JobFailedError(
            f"A partition of {ends[-1]:,} bytes is over Arrow's {_MAX_PAYLOAD:,}-byte limit"
        )
    n = len(chunks)
    ids = pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(struct.pack(f"={n}q", *chunks))])
    offsets = pa.py_buffer(struct.pack(f"={n + 1}i", *ends))
    blobs = pa.Array.from_buffers(pa.binary(), n, [None, offsets, pa.py_buffer(b"".join(payloads))])
    return pa.RecordBatch.from_arrays([ids, blobs], schema=_ARROW_SCHEMA)


def chunk_frame(
    engine: SparkEngine, payloads: list[bytes], partitions: list[int] | None = None
) -> DataFrame:
    """A DataFrame of (chunk, payload) rows, one Arrow record batch and so one partition per
    chunk (chunk_bounds makes at least as many chunks as Spark's default parallelism); with
    ``partitions`` (each chunk's partition, from 0 up), one per partition, holding its chunks
    in order, so that one Spark task runs them one after the other."""
    if partitions is None:
        batches = [_row(chunk, payload) for chunk, payload in enumerate(payloads)]
    else:
        members: dict[int, list[int]] = {}
        for chunk, partition in enumerate(partitions):
            members.setdefault(partition, []).append(chunk)
        batches = [
            _rows(chunks, [payloads[c] for c in chunks]) for _, chunks in sorted(members.items())
        ]
    return engine.session().createDataFrame(pa.Table.from_batches(batches, _ARROW_SCHEMA))


@dataclass(frozen=True)
class Layout:
    """How a batch runs as chunks: ``order`` lists the batch's positions in the order the
    chunks take them (None: as they are), ``bounds`` are the chunks' [start, end) in that
    order, and ``partitions`` each chunk's Spark partition (None: a partition each)."""

    order: list[int] | None
    bounds: list[tuple[int, int]]
    partitions: list[int] | None = None


def lane_layout(lanes: Sequence[Hashable], partitions: int) -> Layout:
    """A layout that keeps each lane's records together and in order: every lane is in one
    Spark partition (several chunks of at most MAX_CHUNK_RECORDS, run one after another), and
    the lanes are spread over at most ``partitions`` partitions, the largest first, each to
    the least loaded one."""
    n = len(lanes)
    members: dict[Hashable, list[int]] = {}
    for i, lane in enumerate(lanes):
        members.setdefault(lane, []).append(i)
    slots = max(1, min(partitions, len(members)))
    loads = [0] * slots
    assigned: list[list[int]] = [[] for _ in range(slots)]
    for positions in sorted(members.values(), key=len, reverse=True):
        slot = loads.index(min(loads))
        assigned[slot].extend(positions)
        loads[slot] += len(positions)
    order: list[int] = []
    bounds: list[tuple[int, int]] = []
    chunk_partitions: list[int] = []
    for slot, positions in enumerate(assigned):
        start = len(order)
        order.extend(positions)
        for a, b in split(len(positions), -(-len(positions) // MAX_CHUNK_RECORDS)):
            bounds.append((start + a, start + b))
            chunk_partitions.append(slot)
    same = all(i == p for i, p in enumerate(order))
    return Layout(None if same else order, bounds, chunk_partitions if n else None)


def map_typed_rows(
    layout: RowLayout, batches: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """The mapInArrow function that expands pickled chunks of records into typed rows, the
    input of a chain of column expressions (in Python workers, so in parallel)."""
    for batch in batches:
        payloads = batch.column(1)
        for row in range(batch.num_rows):
            with gc_paused():
                columns = pickle.loads(payloads[row].as_buffer())
                out = pa.RecordBatch.from_pydict(
                    typed_rows(columns, layout), schema=layout.arrow_schema
                )
            yield out


def map_source_rows(
    spec: JobSpec,
    token: str,
    schemas: dict[str, Schema | None],
    batches: Iterator[pa.RecordBatch],
    order: SendOrder | None = None,
) -> Iterator[pa.RecordBatch]:
    """The mapInArrow function after a chain of column expressions: typed rows in,
    converted records out (one output row per input batch, in Python workers). With
    ``order``, they are produced here (source_send.py)."""
    comps = components(spec, token)
    if order is not None:
        sending = Sending(order)
        for batch in batches:
            with gc_paused():
                sending.start(None, source_rows(comps, batch.to_pydict(), schemas))
        for n, done in enumerate(sending.settle()):
            yield _row(n, dumps(done))
        return
    for n, batch in enumerate(batches):
        with gc_paused():
            result = source_rows(comps, batch.to_pydict(), schemas)
            out = dumps(result)
        del result
        yield _row(n, out)


def map_sink_rows(
    spec: JobSpec, token: str, layout: RowLayout, batches: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """The mapInArrow function before a chain of column expressions: pickled chunks of
    consumed messages in, converted typed rows out (in Python workers)."""
    comps = components(spec, token)
    for batch in batches:
        payloads = batch.column(1)
        for row in range(batch.num_rows):
            with gc_paused():
                chunk = pickle.loads(payloads[row].as_buffer())
                columns = sink_rows(comps, chunk, layout)
                out = pa.RecordBatch.from_pydict(columns, schema=layout.arrow_schema)
            del columns
            yield out


def to_arrow(group: JobGroup, df: DataFrame) -> pa.Table:
    """Run the job of ``df`` in ``group``; a cancelled group raises JobCancelledError."""
    if group.cancelled:
        raise JobCancelledError(f"Job group {group.group_id} was cancelled")
    try:
        return df.toArrow()
    except Exception as e:
        if group.cancelled:
            raise JobCancelledError(f"Job group {group.group_id} was cancelled") from e
        raise JobFailedError(f"Spark job of {group.group_id} failed: {e}") from e


def collect_source_chunks(group: JobGroup, mapped: DataFrame) -> list[SourceChunk]:
    """Run the job of a mapped DataFrame of (chunk, payload) rows whose payloads are pickled
    SourceChunks (map_source_rows); the chunks, in any order."""
    result = to_arrow(group, mapped)
    return [pickle.loads(blob.as_buffer()) for blob in result.column("payload")]


def run_job(
    engine: SparkEngine,
    group: JobGroup,
    spec: JobSpec,
    token: str,
    payloads: list[bytes],
    partitions: list[int] | None = None,
    order: SendOrder | None = None,
) -> list[ChunkResult]:
    """Run one Spark job over the pickled ChunkInputs (``partitions``: see chunk_frame; with
    ``order``, source chunks are produced by the executors); their results, in chunk order."""
    files = None if engine.exchange is None else engine.exchange.put(payloads)
    try:
        df = chunk_frame(engine, payloads if files is None else files.rows, partitions)
        mapper = functools.partial(map_chunks, spec, token, order=order)
        mapped = df.mapInArrow(mapper, OUTPUT_SCHEMA)
        result = to_arrow(group, mapped)
        if result.num_rows != len(payloads):
            raise JobFailedError(f"Expected {len(payloads)} chunk results, got {result.num_rows}")
        chunks = result.column("chunk").to_pylist()
        blobs = result.column("payload")
        by_chunk: dict[int, ChunkResult] = {}
        for row, chunk in enumerate(chunks):
            blob = blobs[row].as_buffer()
            if engine.exchange is not None:
                blob = engine.exchange.resolve(blob)
            by_chunk[chunk] = pickle.loads(blob)
    finally:
        if files is not None:
            files.discard()
    return [by_chunk[chunk] for chunk in range(len(payloads))]


def _passed_through(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The warm-up job's function: its module, and so the batch job's code, is now imported."""
    yield from batches


def warm_up(engine: SparkEngine) -> None:
    """A tiny job with the batch jobs' shape (Arrow rows through ``mapInArrow``), one task per
    partition: Spark's Python workers start and import the batch job code before the first real
    batch needs them."""
    begin = time.monotonic()
    payloads = [b""] * engine.default_parallelism
    frame = chunk_frame(engine, payloads).mapInArrow(_passed_through, OUTPUT_SCHEMA)
    frame.toArrow()
    log.info("Spark's Python workers warmed up in %.1f s", time.monotonic() - begin)
