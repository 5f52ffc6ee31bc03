"""Spark-native sources: a ``SourceTask.poll_dataframe`` batch, converted and produced by the
executors, with only each source partition's outcome coming back to the driver.

The driver checks and normalises the task's frame (``plan_frame``): its ``key`` and ``value``
types become Connect schemas (``connect_schema``), a missing ``topic`` is the connector's, and
a frame of several Spark partitions is repartitioned by source partition and sorted back into
its own order, so each source partition's rows run in one Spark task, in order. No row is
collected on the driver.

In the executors (``map_frame_rows``), each Arrow batch of rows becomes a chunk of source
records (chunk_work.source_chunk: transforms, then converters), which the Spark task's sender
produces (source_send.Sending). Each output row says, per source partition, the last source
offset the batch held: the driver commits it once the rows are acknowledged.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
import pickle
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from connect_lite.api import logical
from connect_lite.api.connector import FRAME_PARTITIONED_METADATA, FRAME_SCHEMA_METADATA
from connect_lite.api.data import Headers, Schema, SchemaBuilder, SchemaType, Struct
from connect_lite.api.errors import ConnectError
from connect_lite.api.records import canonical_json
from connect_lite.pipeline.chunk_work import SOURCE_FIELDS, SOURCE_RECORD_FIELDS, run_chunk
from connect_lite.pipeline.chunks import ChunkResult, SourceChunk, SourceInput
from connect_lite.pipeline.executor import components, gc_paused
from connect_lite.pipeline.record_errors import RecordError
from connect_lite.pipeline.source_send import Sending, SendOrder
from connect_lite.protocol.job_spec import JobSpec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

REQUIRED = ("key", "value", "source_partition", "source_offset")
OPTIONAL = ("topic", "partition", "timestamp", "headers")
FRAME_SCHEMA = "result binary"

_PRIMITIVES: dict[Any, SchemaType] = {
    pa.int8(): SchemaType.INT8,
    pa.int16(): SchemaType.INT16,
    pa.int32(): SchemaType.INT32,
    pa.int64(): SchemaType.INT64,
    pa.float32(): SchemaType.FLOAT32,
    pa.float64(): SchemaType.FLOAT64,
    pa.bool_(): SchemaType.BOOLEAN,
    pa.string(): SchemaType.STRING,
    pa.large_string(): SchemaType.STRING,
    pa.binary(): SchemaType.BYTES,
    pa.large_binary(): SchemaType.BYTES,
}


def connect_schema(kind: pa.DataType, where: str) -> Schema | None:
    """The optional Connect schema of an Arrow (so a Spark) column type; None for a column
    of nulls only. Decimals and other types Connect has no plain form for are refused."""
    if pa.types.is_null(kind):
        return None
    if kind in _PRIMITIVES:
        return SchemaBuilder.of(_PRIMITIVES[kind]).optional().build()
    if pa.types.is_timestamp(kind):
        return logical.timestamp_schema(optional=True)
    if pa.types.is_date(kind):
        return logical.date_schema(optional=True)
    if pa.types.is_struct(kind):
        builder = SchemaBuilder.struct().optional()
        for i in range(kind.num_fields):
            field = kind.field(i)
            schema = connect_schema(field.type, f"{where}.{field.name}")
            if schema is None:
                raise ConnectError(f"Column {where}.{field.name} holds only nulls: no schema")
            builder.field(field.name, schema)
        return builder.build()
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        item = connect_schema(kind.value_type, f"{where}[]")
        if item is None:
            raise ConnectError(f"Column {where} is an array of nulls only: no schema")
        return SchemaBuilder.array(item).optional().build()
    if pa.types.is_map(kind):
        key = connect_schema(kind.key_type, f"{where} keys")
        value = connect_schema(kind.item_type, f"{where} values")
        if key is None or value is None:
            raise ConnectError(f"Column {where} is a map of nulls only: no schema")
        return SchemaBuilder.map(key, value).optional().build()
    raise ConnectError(
        f"Column {where} has type {kind}, which has no Connect schema: use a string, binary, "
        "number, boolean, date, timestamp, struct, array or map"
    )


def declared_schema(inferred: Schema | None, node: Any, where: str) -> Schema | None:
    """``inferred`` (a column's schema), with the ``name``, ``version``, ``doc``,
    ``parameters`` and ``optional`` a ``connect.schema`` node declares, in JsonConverter's
    schema form (``fields``, ``items``, ``keys``, ``values`` for the parts). The types stay
    the column's: a ``type`` that differs, a field the column lacks, or a logical name on
    another type is refused."""
    if node is None:
        return inferred
    node = _json_node(node, where)
    if inferred is None:
        raise ConnectError(f"Column {where} holds only nulls: it has no schema to declare")
    kind = node.get("type")
    if kind is not None and kind != inferred.type.value:
        raise ConnectError(
            f"Column {where} is of Connect type {inferred.type.value}, but its "
            f"{FRAME_SCHEMA_METADATA} says {kind}"
        )
    changes = _metadata_changes(inferred, node, where)
    if inferred.type is SchemaType.STRUCT and "fields" in node:
        declared = {f.get("field"): f for f in node["fields"]}
        unknown = sorted(str(n) for n in set(declared) - {f.name for f in inferred.fields})
        if unknown:
            raise ConnectError(
                f"The {FRAME_SCHEMA_METADATA} of column {where} declares field(s) "
                f"{', '.join(unknown)}, which the column does not have"
            )
        changes["fields"] = tuple(
            dataclasses.replace(
                f, schema=_declared_part(f.schema, declared.get(f.name), f"{where}.{f.name}")
            )
            for f in inferred.fields
        )
    for key, attribute in _PARTS.get(inferred.type, ()):
        if key in node:
            part = getattr(inferred, attribute)
            changes[attribute] = _declared_part(part, node[key], f"{where} {key}")
    return dataclasses.replace(inferred, **changes)


_PARTS = {
    SchemaType.ARRAY: (("items", "value_schema"),),
    SchemaType.MAP: (("keys", "key_schema"), ("values", "value_schema")),
}


def _json_node(node: Any, where: str) -> dict[str, Any]:
    if isinstance(node, str):
        try:
            node = json.loads(node)
        except ValueError as error:
            raise ConnectError(
                f"The {FRAME_SCHEMA_METADATA} of column {where} is not JSON"
            ) from error
    if not isinstance(node, dict):
        raise ConnectError(f"The {FRAME_SCHEMA_METADATA} of column {where} must be a JSON object")
    return node


def _declared_part(inferred: Schema, node: Any, where: str) -> Schema:
    declared = declared_schema(inferred, node, where)
    assert declared is not None  # inferred is a schema
    return declared


def _metadata_changes(inferred: Schema, node: dict[str, Any], where: str) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    if "optional" in node:
        changes["optional"] = bool(node["optional"])
    if "name" in node:
        name = node["name"]
        if (name in logical.LOGICAL_NAMES or inferred.name in logical.LOGICAL_NAMES) and (
            name != inferred.name
        ):
            raise ConnectError(
                f"Column {where} is {inferred.name or inferred.type.value}: its "
                f"{FRAME_SCHEMA_METADATA} cannot name it {name}"
            )
        changes["name"] = name
    if "version" in node:
        changes["version"] = None if node["version"] is None else int(node["version"])
    if "doc" in node:
        changes["doc"] = node["doc"]
    if "parameters" in node:
        changes["parameters"] = tuple((str(k), str(v)) for k, v in node["parameters"].items())
    return changes


def connect_value(value: Any, schema: Schema | None) -> Any:
    """A plain value as Arrow gives it, as the Connect value of ``schema``."""
    if value is None or schema is None:
        return value
    kind = schema.type
    if schema.name == logical.TIMESTAMP:
        return value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)
    if kind is SchemaType.STRUCT:
        return Struct(
            schema, {f.name: connect_value(value[f.name], f.schema) for f in schema.fields}
        )
    if kind is SchemaType.ARRAY:
        return [connect_value(v, schema.value_schema) for v in value]
    if kind is SchemaType.MAP:
        return {
            connect_value(k, schema.key_schema): connect_value(v, schema.value_schema)
            for k, v in value
        }
    return value


@dataclass(frozen=True)
class FramePlan:
    """A task's frame, ready for its job: the normalised frame and its sides' schemas."""

    frame: DataFrame
    key_schema: Schema | None
    value_schema: Schema | None


def plan_frame(df: DataFrame, topic: str | None, partitions: int) -> FramePlan:
    """Check the task's frame and normalise it (no job runs): the columns of
    ``map_frame_rows``, each source partition's rows in one Spark partition, in order."""
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import to_arrow_type

    names = set(df.columns)
    missing = [c for c in REQUIRED if c not in names]
    if missing:
        raise ConnectError(
            f"poll_dataframe returned a frame without the column(s) {', '.join(missing)}: it "
            f"needs {', '.join(REQUIRED)}, and may have {', '.join(OPTIONAL)}"
        )
    if "topic" not in names and not topic:
        raise ConnectError(
            "poll_dataframe returned a frame without a topic column, and the connector has no "
            "'topic' setting"
        )
    schemas = {
        side: declared_schema(
            # The zone only names the Arrow type: connect_value reads its instants as UTC.
            connect_schema(to_arrow_type(df.schema[side].dataType, timezone="UTC"), side),
            df.schema[side].metadata.get(FRAME_SCHEMA_METADATA),
            side,
        )
        for side in ("key", "value")
    }
    default_topic = F.lit(topic).cast("string")
    columns = [
        F.col("key"),
        F.col("value"),
        F.coalesce(F.col("topic"), default_topic).alias("topic")
        if "topic" in names
        else default_topic.alias("topic"),
        F.col("partition").cast("int").alias("partition")
        if "partition" in names
        else F.lit(None).cast("int").alias("partition"),
        F.unix_millis(F.col("timestamp").cast("timestamp")).alias("timestamp")
        if "timestamp" in names
        else F.lit(None).cast("long").alias("timestamp"),
        F.col("headers")
        if "headers" in names
        else F.lit(None).cast("array<struct<key:string,value:binary>>").alias("headers"),
        F.col("source_partition").cast("string").alias("source_partition"),
        F.col("source_offset").cast("string").alias("source_offset"),
    ]
    frame = df.select(*columns)
    inputs = frame.rdd.getNumPartitions()
    if inputs > 1 and not df.schema["source_partition"].metadata.get(FRAME_PARTITIONED_METADATA):
        # One source partition per Spark task, in the frame's order (the id follows it). A
        # few source partitions hashed into as few Spark partitions often share one (two in
        # two: half the time), so a small frame gets up to four times as many.
        spread = max(1, partitions, min(4 * inputs, 4 * partitions))
        frame = (
            frame.withColumn("_seq", F.monotonically_increasing_id())
            .repartition(spread, "source_partition")
            .sortWithinPartitions("_seq")
            .drop("_seq")
        )
    return FramePlan(frame, schemas["key"], schemas["value"])


@dataclass(frozen=True)
class FrameChunk:
    """What one Arrow batch of a frame's rows gives the driver: its chunk result (positions
    count from the batch's first row), its rows, and per source partition (as JSON text) the
    last source offset it held (JSON text), with the Spark task and batch it came from."""

    task: int
    batch: int
    rows: int
    result: ChunkResult
    lasts: dict[str, str]


def map_frame_rows(
    spec: JobSpec,
    token: str,
    key_schema: Schema | None,
    value_schema: Schema | None,
    full: bool,
    order: SendOrder,
    batches: Iterator[pa.RecordBatch],
) -> Iterator[pa.RecordBatch]:
    """The mapInArrow function of a frame's job: each batch of rows converted (and with
    ``full`` transformed) and produced; one pickled FrameChunk per batch, once the Spark
    task's records are all settled."""
    from pyspark import TaskContext

    context = TaskContext.get()
    task = context.partitionId() if context is not None else 0
    comps = components(spec, token)
    sending = Sending(order)
    started: list[tuple[int, int, dict[str, str]]] = []
    for n, batch in enumerate(batches):
        with gc_paused():
            columns = _columns(batch, key_schema, value_schema)
            payload = _payload(columns, key_schema, value_schema, full)
            result = _with_headers(run_chunk(comps, payload), columns["headers"])
            sending.start(payload, result)
            lasts: dict[str, str] = {}
            for partition, offset in zip(
                columns["source_partition"], columns["source_offset"], strict=True
            ):
                if partition is not None and offset is not None:  # else nothing to commit
                    lasts[partition] = offset
            started.append((n, batch.num_rows, lasts))
    for (n, rows, lasts), done in zip(started, sending.settle(), strict=True):
        blob = pickle.dumps(FrameChunk(task, n, rows, done, lasts), pickle.HIGHEST_PROTOCOL)
        yield pa.RecordBatch.from_arrays([pa.array([blob], pa.binary())], names=["result"])


def _payload(
    columns: dict[str, list[Any]],
    key_schema: Schema | None,
    value_schema: Schema | None,
    full: bool,
) -> SourceInput:
    n = len(columns["topic"])
    if None in columns["topic"]:
        raise ConnectError(
            "A row of the frame has a null topic, and the connector has no 'topic' setting"
        )
    keys, values = columns["key"], columns["value"]
    key_schemas, value_schemas = [key_schema] * n, [value_schema] * n
    if not full:
        fields = {
            "topic": columns["topic"],
            "key": keys,
            "key_schema": key_schemas,
            "value": values,
            "value_schema": value_schemas,
            "headers": [None] * n,  # the frame's headers are bytes already: see _with_headers
        }
        return SourceInput(
            False,
            tuple(fields[name] for name in SOURCE_FIELDS),
            (columns["partition"], columns["timestamp"]),
        )
    fields = {
        "source_partition": [_json_or_none(p) for p in columns["source_partition"]],
        "source_offset": [_json_or_none(o) for o in columns["source_offset"]],
        "topic": columns["topic"],
        "value": values,
        "key": keys,
        "kafka_partition": columns["partition"],
        "key_schema": key_schemas,
        "value_schema": value_schemas,
        "timestamp": columns["timestamp"],
        "headers": [Headers()] * n,
    }
    return SourceInput(True, tuple(fields[name] for name in SOURCE_RECORD_FIELDS))


def _with_headers(result: ChunkResult, headers: list[Any]) -> ChunkResult:
    """The frame's headers (already bytes) on the records kept, as Kafka carries them."""
    if not isinstance(result, SourceChunk) or not any(headers):
        return result
    return dataclasses.replace(result, headers=[headers[i] for i in result.kept])


def _columns(
    batch: pa.RecordBatch, key_schema: Schema | None, value_schema: Schema | None
) -> dict[str, list[Any]]:
    """A batch's columns as Python lists, the key and value as Connect values and the headers
    as (key, bytes) pairs, built column by column (no dict per row)."""
    columns = {
        name: batch.column(name).to_pylist()
        for name in ("topic", "partition", "timestamp", "source_partition", "source_offset")
    }
    columns["key"] = column_values(batch.column("key"), key_schema)
    columns["value"] = column_values(batch.column("value"), value_schema)
    columns["headers"] = _header_lists(batch.column("headers"))
    return columns


def column_values(array: pa.Array, schema: Schema | None) -> list[Any]:
    """The Connect values of an Arrow column of ``schema`` (connect_value's, per column)."""
    if schema is None or pa.types.is_null(array.type):
        return array.to_pylist()
    if schema.type is SchemaType.STRUCT and pa.types.is_struct(array.type):
        assert isinstance(array, pa.StructArray)
        names = [f.name for f in schema.fields]
        children = [column_values(array.field(f.name), f.schema) for f in schema.fields]
        rows = zip(*children, strict=True) if children else ((),) * len(array)
        if not array.null_count:
            return [Struct(schema, dict(zip(names, row, strict=True))) for row in rows]
        valid = array.is_valid().to_pylist()
        return [
            Struct(schema, dict(zip(names, row, strict=True))) if ok else None
            for row, ok in zip(rows, valid, strict=True)
        ]
    plain = array.to_pylist()
    if schema.type.is_primitive and schema.name != logical.TIMESTAMP:
        return plain  # numbers, text, bytes, booleans, dates: as Arrow gives them
    return [connect_value(v, schema) for v in plain]


def _header_lists(array: pa.Array) -> list[Any]:
    """Each row's headers as (key, value) pairs, or None."""
    if array.null_count == len(array):
        return [None] * len(array)
    assert isinstance(array, pa.ListArray)
    entries = array.values
    pairs = list(
        zip(entries.field("key").to_pylist(), entries.field("value").to_pylist(), strict=True)
    )
    offsets = array.offsets.to_pylist()
    valid = array.is_valid().to_pylist()
    return [pairs[offsets[i] : offsets[i + 1]] if valid[i] else None for i in range(len(array))]


@dataclass
class FrameBatchResult:
    """The outcome of a frame's job: its rows, those the executors sent, the records they held
    back (new topics: ``rows``, as a SourceBatchResult's), the errors, and per source partition
    (canonical key) the partition and the last offset the frame held."""

    size: int = 0
    sent: int = 0
    sent_topics: set[str] = dataclasses.field(default_factory=set)
    send_failure: str | None = None
    rows: list[Any] = dataclasses.field(default_factory=list)
    errors: list[RecordError] = dataclasses.field(default_factory=list)
    retries: int = 0
    offsets: dict[str, tuple[dict[str, Any], dict[str, Any]]] = dataclasses.field(
        default_factory=dict
    )


def collect_frame(table: pa.Table) -> FrameBatchResult:
    """The FrameChunks of a frame's job, in each Spark task's order, as one result."""
    chunks: list[FrameChunk] = [pickle.loads(b.as_buffer()) for b in table.column("result")]
    chunks.sort(key=lambda c: (c.task, c.batch))
    out = FrameBatchResult()
    for chunk in chunks:
        base, result = out.size, chunk.result
        out.size += chunk.rows
        out.errors.extend(frame_errors(result.errors, base))
        out.retries += result.retries
        if isinstance(result, SourceChunk):
            sent = result.sent
            if sent is not None:
                out.sent += len(sent.positions)
                out.sent_topics.update(sent.topics)
                out.send_failure = out.send_failure or sent.failure
            headers = result.headers or [None] * len(result.kept)
            assert result.destinations is not None  # set by Sending for what it held back
            for k, i in enumerate(result.kept):
                topic, partition, stamp = result.destinations[k]
                out.rows.append(
                    (
                        base + i,
                        topic,
                        partition,
                        result.keys[k],
                        result.values[k],
                        headers[k],
                        stamp,
                    )
                )
        for lane, offset in chunk.lasts.items():
            parsed = _json(lane)
            out.offsets[canonical_json(parsed)] = (dict(parsed), dict(_json(offset)))
    return out


def _json_or_none(text: str | None) -> dict[str, Any] | None:
    return None if text is None else _json(text)


@functools.lru_cache(maxsize=1024)
def _json(text: str) -> dict[str, Any]:
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ConnectError(f"A source partition or offset must be a JSON object, not {text!r}")
    return value


def frame_errors(errors: list[RecordError], base: int) -> list[RecordError]:
    """A chunk's record errors, their positions counted from the frame's batch start."""
    return [e if e.index is None else dataclasses.replace(e, index=base + e.index) for e in errors]


__all__ = [
    "FRAME_SCHEMA",
    "FrameBatchResult",
    "FrameChunk",
    "FramePlan",
    "collect_frame",
    "connect_schema",
    "connect_value",
    "frame_errors",
    "map_frame_rows",
    "plan_frame",
]
