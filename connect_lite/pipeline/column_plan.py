"""A batch's column form: the compiled chain as one select over typed rows, planned and run.

The batch jobs run a plan in one job (source_job.py, sink_job.py): a source batch's typed
rows go through the select and then the converters; a sink batch's converters emit typed
rows for the select.

The driver never builds typed rows itself: it pickles the batch into one chunk per
partition (as the Arrow form does), and Python workers expand the chunks into typed
Arrow rows (mapInArrow) that feed the select. The typed data so lives in executor tasks,
streamed, instead of in a local relation on the driver's JVM heap.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_type

from connect_lite.api.data import Schema
from connect_lite.api.records import SinkRecord, SourceRecord
from connect_lite.pipeline.chunks import MessageRow, RecordColumns, SinkInput
from connect_lite.pipeline.column_compilers import Compiled, compile_chain
from connect_lite.pipeline.columns import arrow_type
from connect_lite.pipeline.session import SparkEngine
from connect_lite.pipeline.transfer import (
    Layout,
    chunk_bounds,
    chunk_frame,
    dumps,
    map_typed_rows,
)
from connect_lite.pipeline.typed_rows import RowLayout
from connect_lite.protocol.job_spec import Chain

_ROW_FIELDS = [
    ("idx", pa.int64()),
    ("topic", pa.string()),
    ("partition", pa.int32()),
    ("offset", pa.int64()),
    ("timestamp", pa.int64()),
    ("value_null", pa.bool_()),
    ("header_keys", pa.list_(pa.string())),
    ("headers", pa.binary()),
]


DEFAULTS_READ_AS_VALUES = "_column_form_reads_defaults"
"""A built-in transform's class attribute: its column form is exact where an unset field
reads as its schema's default (as the columns hold it, and as ``Struct.get`` and equality
read it)."""


def _typed_sides(given: dict[str, Schema | None], chain: Chain) -> set[str]:
    """The sides with a column form. Not one with default values inside, unless every step
    of the chain reads them as the columns hold them (``DEFAULTS_READ_AS_VALUES``): most
    transforms tell an unset field (its default) from a null one, a column cannot."""
    defaults_read = all(
        getattr(t, DEFAULTS_READ_AS_VALUES, False) and p is None for t, p, _ in chain
    )
    return {
        s
        for s, sch in given.items()
        if sch is not None
        and arrow_type(sch) is not None
        and (defaults_read or not _has_defaults(sch))
    }


def _has_defaults(schema: Schema) -> bool:
    if schema.default is not None:
        return True
    inner = [f.schema for f in schema.fields] + [
        s for s in (schema.key_schema, schema.value_schema) if s is not None
    ]
    return any(_has_defaults(s) for s in inner)


def _side_fields(given: dict[str, Schema | None], typed: set[str]) -> list[tuple[str, pa.DataType]]:
    return [
        (side, arrow_type(schema)) if side in typed and schema is not None else
        (f"{side}_raw", pa.binary())
        for side, schema in given.items()
    ]  # fmt: skip


def _select(
    source: DataFrame, chain: Compiled, typed: set[str], *extra: str, kept: bool = False
) -> DataFrame:
    """The chain's output columns (typed sides changed by the chain, the rest as they came),
    with ``kept`` a boolean column that says whether the chain keeps the row."""
    return source.select(
        F.col("idx"),
        chain.cols["topic"].alias("topic"),
        chain.cols["partition"].alias("partition"),
        chain.cols["timestamp"].alias("timestamp"),
        *[chain.cols[s].alias(s) for s in ("key", "value") if s in typed],
        *[F.col(name) for name in extra],
        *([chain.keep.alias("kept")] if kept else []),
    )


def _types_agree(
    selected: DataFrame, schemas: dict[str, Schema | None], sides: frozenset[str]
) -> bool:
    """A compiler bug must not reach a record: the select's types must be the schemas'."""
    for side in sides:
        schema = schemas[side]
        expected = None if schema is None else arrow_type(schema)
        got = to_arrow_type(selected.schema[side].dataType)
        if expected is None or not _same_type(got, expected):
            return False
    return True


def _chunks(
    engine: SparkEngine,
    n: int,
    payload: Callable[[int, int], object],
    layout: Layout | None = None,
) -> DataFrame:
    """A DataFrame of the batch's pickled chunks: ``payload(start, end)`` of each, cut and
    placed by ``layout`` (else chunk_bounds, a partition each)."""
    if layout is None:
        return chunk_frame(
            engine, [dumps(payload(a, b)) for a, b in chunk_bounds(n, engine.default_parallelism)]
        )
    payloads = [dumps(payload(a, b)) for a, b in layout.bounds]
    return chunk_frame(engine, payloads, layout.partitions)


@dataclass
class Plan:
    """A batch's chain as one select over typed rows, not yet run."""

    selected: DataFrame  # idx, topic, partition, timestamp, typed key/value, headers
    schemas: dict[str, Schema | None]  # key and value schemas after the chain
    sides: frozenset[str]  # the sides the chain changes
    typed: frozenset[str]  # the sides that travel as typed columns


def _compile(
    engine: SparkEngine,
    chain: Chain,
    first: SourceRecord | SinkRecord,
    given: dict[str, Schema | None],
    typed: set[str],
) -> Compiled | None:
    """The chain compiled against the batch's schemas. Column expressions need a live
    SparkContext, so this waits for the session (a first batch may come before it exists)."""
    engine.session()
    columns = [name for name, _ in _ROW_FIELDS] + sorted(typed)
    schemas = {side: schema if side in typed else None for side, schema in given.items()}
    return compile_chain(chain, first, columns, schemas)


def plan(
    engine: SparkEngine,
    chain: Chain,
    records: Sequence[SourceRecord | SinkRecord],
    chunking: Layout | None = None,
) -> Plan | None:
    """The chain over ``records`` as Spark columns, or None when the batch or the chain has
    no column form (the caller then runs the Arrow form). Runs no job. ``chunking`` cuts the
    records into chunks and places them (see transfer.lane_layout); the select keeps each
    partition's rows in order.

    A side without a typed column travels pickled (``key_raw``/``value_raw``)."""
    if not records:
        return None
    first = records[0]
    given = {"key": first.key_schema, "value": first.value_schema}
    if given["key"] is None and given["value"] is None:
        return None
    for r in records:
        if r.key_schema is not given["key"] and r.key_schema != given["key"]:
            return None
        if r.value_schema is not given["value"] and r.value_schema != given["value"]:
            return None
    typed = _typed_sides(given, chain)
    compiled = _compile(engine, chain, first, given, typed)
    if compiled is None:
        return None
    for side in compiled.sides:
        if side not in typed or any(getattr(r, side) is None for r in records):
            return None  # a null key or value keeps its schema in Kafka; no column form
    if compiled.needs_timestamp and any(r.timestamp is None for r in records):
        return None  # the Arrow form reports those records
    fields = _ROW_FIELDS + _side_fields(given, typed)
    layout = RowLayout(
        given["key"], given["value"], frozenset(typed), compiled.sides, pa.schema(fields)
    )
    chunks = _chunks(engine, len(records), lambda a, b: RecordColumns.of(a, records[a:b]), chunking)
    rows = chunks.mapInArrow(
        functools.partial(map_typed_rows, layout), from_arrow_schema(layout.arrow_schema)
    )
    raw = [f"{s}_raw" for s in ("key", "value") if s not in typed]
    selected = _select(rows.where(compiled.keep), compiled, typed, *raw, "headers")
    schemas = {s: compiled.schemas[s] if s in typed else given[s] for s in given}
    if not _types_agree(selected, schemas, compiled.sides):
        return None
    return Plan(selected, schemas, compiled.sides, frozenset(typed))


@dataclass
class SinkPlan:
    """A sink batch as one job: messages, converters in mapInArrow, then the chain's select."""

    selected: DataFrame
    layout: RowLayout
    schemas: dict[str, Schema | None]  # key and value schemas after the chain


def plan_sink(
    engine: SparkEngine,
    chain: Chain,
    probe: SinkRecord,
    rows: Sequence[MessageRow],
    converters: Callable[[RowLayout], Callable[[Iterator[pa.RecordBatch]], Iterator[Any]]],
) -> SinkPlan | None:
    """The chain over a sink batch whose first message converts to ``probe``, or None.

    ``converters(layout)`` is the mapInArrow function that converts pickled chunks of
    ``rows`` (SinkInputs) to typed rows (plus ``rest``, ``retries`` and the untyped sides,
    pickled)."""
    given = {"key": probe.key_schema, "value": probe.value_schema}
    typed = _typed_sides(given, chain)
    if not typed:
        return None
    compiled = _compile(engine, chain, probe, given, typed)
    if compiled is None or not compiled.sides <= typed:
        return None
    if compiled.needs_timestamp and any(r.timestamp is None for r in rows):
        return None  # the Arrow form reports those records
    fields = _ROW_FIELDS + _side_fields(given, typed)
    fields += [("rest", pa.binary()), ("retries", pa.int64())]
    layout = RowLayout(
        given["key"], given["value"], frozenset(typed), compiled.sides, pa.schema(fields)
    )
    chunks = _chunks(engine, len(rows), lambda a, b: SinkInput.of(rows[a:b], a))
    mapped = chunks.mapInArrow(converters(layout), from_arrow_schema(layout.arrow_schema))
    raw = [f"{s}_raw" for s in ("key", "value") if s not in typed]
    selected = _select(mapped, compiled, typed, *raw, "headers", "rest", "retries", kept=True)
    schemas = {s: compiled.schemas[s] if s in typed else given[s] for s in given}
    if not _types_agree(selected, schemas, compiled.sides):
        return None
    return SinkPlan(selected, layout, schemas)


def _same_type(a: pa.DataType, b: pa.DataType) -> bool:
    """Arrow types equal up to field nullability."""
    if pa.types.is_struct(a) and pa.types.is_struct(b):
        return a.num_fields == b.num_fields and all(
            a.field(i).name == b.field(i).name and _same_type(a.field(i).type, b.field(i).type)
            for i in range(a.num_fields)
        )
    if pa.types.is_list(a) and pa.types.is_list(b):
        return _same_type(a.value_type, b.value_type)
    if pa.types.is_map(a) and pa.types.is_map(b):
        return _same_type(a.key_type, b.key_type) and _same_type(a.item_type, b.item_type)
    return bool(a == b)


__all__ = ["Plan", "SinkPlan", "plan", "plan_sink"]
