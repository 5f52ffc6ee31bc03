"""A converted and transformed sink batch as Spark DataFrames, for ``SinkTask.put_dataframe``.

The batch job's job has already run the converters, transforms and predicates in the Python
workers; the driver holds the batch as SinkRecords. This builds, per run of consecutive
records with the same key and value schema, one Arrow table and one DataFrame over it:

- ``topic`` string, ``partition`` int, ``offset`` long, ``timestamp`` timestamp (UTC);
- ``key`` and ``value``: typed by the schema when the converter gave one (a struct for a
  STRUCT schema; Connect's Timestamp, Date and Decimal as Spark's timestamp, date and
  decimal(38, scale); Time as its milliseconds). A schemaless side is its JSON text, plus
  ``key_struct`` / ``value_struct``: the type Arrow infers from the values (a struct for
  maps), when one can be inferred (not when a field's values disagree in type). A schema
  without a column form (a map keyed by structs, an empty struct) travels as a schemaless
  side does;
- ``headers``: array<struct<key string, value binary>>, each value serialized by the
  task's header converter.

The plugin's writes then read the DataFrame in Spark's executors.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from connect_lite.api import logical
from connect_lite.api.components import HeaderConverter
from connect_lite.api.connector import FRAME_SCHEMA_METADATA
from connect_lite.api.data import Schema, SchemaType, Struct, schema_json_form
from connect_lite.api.records import SinkRecord
from connect_lite.pipeline.session import SparkEngine

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

_HEADER = pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())])
_BASE = [
    pa.field("topic", pa.string(), nullable=False),
    pa.field("partition", pa.int32(), nullable=False),
    pa.field("offset", pa.int64(), nullable=False),
    pa.field("timestamp", pa.timestamp("ms", tz="UTC")),
]
_PRIMITIVES: dict[SchemaType, pa.DataType] = {
    SchemaType.INT8: pa.int8(),
    SchemaType.INT16: pa.int16(),
    SchemaType.INT32: pa.int32(),
    SchemaType.INT64: pa.int64(),
    SchemaType.FLOAT32: pa.float32(),
    SchemaType.FLOAT64: pa.float64(),
    SchemaType.BOOLEAN: pa.bool_(),
    SchemaType.STRING: pa.string(),
    SchemaType.BYTES: pa.binary(),
}
_LOGICAL: dict[str, Callable[[Schema], pa.DataType]] = {
    logical.TIMESTAMP: lambda _: pa.timestamp("ms", tz="UTC"),
    logical.DATE: lambda _: pa.date32(),
    logical.TIME: lambda _: pa.int32(),
    logical.DECIMAL: lambda s: pa.decimal128(38, logical.scale_of(s)),
}


def frame_type(schema: Schema) -> pa.DataType | None:
    """The Arrow (and so Spark) type of a column of ``schema``, or None without one."""
    if schema.name in _LOGICAL:
        return _LOGICAL[schema.name](schema)
    if schema.type in _PRIMITIVES:
        return _PRIMITIVES[schema.type]
    if schema.type is SchemaType.ARRAY and schema.value_schema is not None:
        item = frame_type(schema.value_schema)
        return None if item is None else pa.list_(item)
    if schema.type is SchemaType.MAP and schema.key_schema and schema.value_schema:
        if schema.key_schema.type in (SchemaType.STRUCT, SchemaType.MAP, SchemaType.ARRAY):
            return None
        key, value = frame_type(schema.key_schema), frame_type(schema.value_schema)
        return None if key is None or value is None else pa.map_(key, value)
    if schema.type is SchemaType.STRUCT and schema.fields:
        fields = [(f.name, frame_type(f.schema)) for f in schema.fields]
        if any(t is None for _, t in fields):
            return None
        return pa.struct([pa.field(name, t) for name, t in fields])
    return None


def frame_value(value: Any, schema: Schema) -> Any:
    """A Connect value as the Python value Arrow takes for ``frame_type(schema)``."""
    if value is None:
        return None
    if schema.name == logical.TIMESTAMP:
        return logical.timestamp_to_millis(value)
    if schema.name == logical.TIME:
        return logical.time_to_millis(value)
    if schema.name == logical.DATE:
        return logical.date_to_days(value)
    if schema.name == logical.DECIMAL:
        return logical.decimal_rescale(schema, value)
    kind = schema.type
    if kind is SchemaType.STRUCT:
        get = value.get if isinstance(value, Struct) else dict(value).get
        return {f.name: frame_value(get(f.name), f.schema) for f in schema.fields}
    if kind is SchemaType.ARRAY:
        assert schema.value_schema is not None
        return [frame_value(v, schema.value_schema) for v in value]
    if kind is SchemaType.MAP:
        ks, vs = schema.key_schema, schema.value_schema
        assert ks is not None and vs is not None
        return [(frame_value(k, ks), frame_value(v, vs)) for k, v in dict(value).items()]
    return value


def json_text(value: Any) -> str | None:
    """A schemaless value as JSON text (None stays null)."""
    if value is None:
        return None
    return json.dumps(_jsonable(value), separators=(",", ":"), ensure_ascii=False, default=str)


def _jsonable(value: Any) -> Any:
    if isinstance(value, Struct):
        return {k: _jsonable(v) for k, v in value.as_dict().items()}
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


_ARROW_ERRORS = (pa.ArrowException, TypeError, ValueError, OverflowError)


def _json_texts(values: Sequence[Any]) -> tuple[list[str | None], bool]:
    """Each value's JSON text, and whether every value was plain JSON data (dicts with string
    keys, lists, strings, numbers, booleans, None), which Arrow takes as it is."""
    texts: list[str | None] = []
    plain = True
    dumps = json.dumps
    for value in values:
        if value is None:
            texts.append(None)
            continue
        if plain:
            try:
                texts.append(dumps(value, separators=(",", ":"), ensure_ascii=False))
                continue
            except (TypeError, ValueError):
                plain = False
        texts.append(json_text(value))
    return texts, plain


def _array(values: Sequence[Any], plain: bool, kind: pa.DataType | None = None) -> pa.Array:
    """The values as an Arrow array (of ``kind``, else of the type they imply); values that
    are not plain JSON data go as ``json_text`` would write them. Raises what Arrow raises."""
    if plain:
        try:
            return pa.array(values, type=kind)
        except _ARROW_ERRORS:  # e.g. a dict keyed by ints: as JSON, its keys are strings
            pass
    return pa.array([_jsonable(v) for v in values], type=kind)


def _guessed(values: Sequence[Any], plain: bool) -> pa.Array | None:
    """The values as the array their types imply, nulls kept; None when no type fits all."""
    try:
        return _array(values, plain)
    except _ARROW_ERRORS:
        return None


def inferred(values: Sequence[Any], plain: bool = False) -> pa.Array | None:
    """The values as the Arrow array their types imply (null-only fields as strings), or None
    when no one type fits them all. ``plain``: every value is plain JSON data."""
    guessed = _guessed(values, plain)
    if guessed is None or pa.types.is_null(guessed.type):
        return None
    fixed = _without_nulls(guessed.type)
    if fixed == guessed.type:
        return guessed
    try:
        return _array(values, plain, fixed)
    except _ARROW_ERRORS:
        return None


def _without_nulls(kind: pa.DataType) -> pa.DataType:
    """``kind`` with every null type (a field that was always null) as a string: Spark's
    file writers have no column of type void."""
    if pa.types.is_null(kind):
        return pa.string()
    if pa.types.is_struct(kind):
        return pa.struct(
            [
                pa.field(kind.field(i).name, _without_nulls(kind.field(i).type))
                for i in range(kind.num_fields)
            ]
        )
    if pa.types.is_list(kind):
        return pa.list_(_without_nulls(kind.value_type))
    return kind


def schema_runs(records: Sequence[SinkRecord]) -> list[list[int]]:
    """Positions of consecutive records with the same key and value schema, in order."""
    runs: list[list[int]] = []
    last: tuple[Schema | None, Schema | None] | None = None
    for i, record in enumerate(records):
        schemas = (record.key_schema, record.value_schema)
        if not runs or schemas != last:
            runs.append([])
        runs[-1].append(i)
        last = schemas
    return runs


StructTypes = dict[str, "pa.DataType | None"]
"""Per schemaless side (``key``, ``value``), the type of its ``<side>_struct`` column (None:
no such column). Without it, a table infers the type from its own values."""


def _side(
    name: str,
    schema: Schema | None,
    values: list[Any],
    struct_types: StructTypes | None,
    guess: bool = False,
) -> list[tuple[pa.Field, pa.Array]]:
    kind = None if schema is None else frame_type(schema)
    if schema is not None and kind is not None:
        typed = [frame_value(v, schema) for v in values]
        return [(pa.field(name, kind), pa.array(typed, type=kind))]
    texts, plain = _json_texts(values)
    out = [(pa.field(name, pa.string()), pa.array(texts, type=pa.string()))]
    if guess:
        guessed = _guessed(values, plain)
    elif struct_types is None:
        guessed = inferred(values, plain)
    else:
        fixed = struct_types.get(name)
        guessed = None if fixed is None else _array(values, plain, fixed)
    if guessed is not None:
        out.append((pa.field(f"{name}_struct", guessed.type), guessed))
    return out


def guessed_types(
    table: pa.Table, key_schema: Schema | None, value_schema: Schema | None
) -> StructTypes:
    """The struct column types of a table made with ``guess``, per schemaless side (None
    where the values implied none)."""
    names = table.schema.names
    return {
        side: table.schema.field(f"{side}_struct").type if f"{side}_struct" in names else None
        for side in schemaless_sides(key_schema, value_schema)
    }


def unified_type(types: Sequence[pa.DataType | None]) -> pa.DataType | None:
    """One struct column type for values of all these guessed types (a struct's fields merged,
    ints promoted to floats, nulls to anything, fields always null as strings), or None when
    there is none (some values had no guessed type, two disagree, or all were null)."""
    if not types or any(t is None for t in types):
        return None
    try:
        schemas = [pa.schema([pa.field("v", t)]) for t in types]
        merged = pa.unify_schemas(schemas, promote_options="permissive").field("v").type
    except (pa.ArrowException, TypeError, ValueError):
        return None
    return None if pa.types.is_null(merged) else _without_nulls(merged)


def _headers(records: Sequence[SinkRecord], converter: HeaderConverter | None) -> pa.Array:
    rows: list[list[dict[str, Any]]] = []
    for record in records:
        row = []
        for header in record.headers or ():
            value = header.value
            if converter is not None:
                value = converter.from_connect_header(
                    record.topic, header.key, header.schema, header.value
                )
            elif value is not None and not isinstance(value, bytes):
                value = str(value).encode()
            row.append({"key": header.key, "value": value})
        rows.append(row)
    return pa.array(rows, type=pa.list_(_HEADER))


def frame_table(
    records: Sequence[SinkRecord],
    converter: HeaderConverter | None,
    struct_types: StructTypes | None = None,
    guess: bool = False,
) -> pa.Table:
    """The Arrow table of records that share one key and one value schema."""
    first = records[0]
    return columns_table(
        [r.topic for r in records],
        [r.kafka_partition for r in records],
        [r.kafka_offset for r in records],
        [r.timestamp for r in records],
        (first.key_schema, [r.key for r in records]),
        (first.value_schema, [r.value for r in records]),
        _headers(records, converter),
        struct_types,
        guess,
    )


def columns_table(
    topics: list[str],
    partitions: list[int],
    offsets: list[int],
    timestamps: list[int | None],
    key: tuple[Schema | None, list[Any]],
    value: tuple[Schema | None, list[Any]],
    headers: pa.Array,
    struct_types: StructTypes | None = None,
    guess: bool = False,
) -> pa.Table:
    """``frame_table`` from its columns: records' fields, each side as (schema, values), and
    the headers already as their column. With ``guess`` a schemaless side's struct column
    has the type its values imply, nulls kept (``unified_type`` merges such types)."""
    fields: list[pa.Field] = list(_BASE)
    arrays: list[pa.Array] = [
        pa.array(topics, pa.string()),
        pa.array(partitions, pa.int32()),
        pa.array(offsets, pa.int64()),
        pa.array(timestamps, pa.timestamp("ms", tz="UTC")),
    ]
    for name, (schema, values) in (("key", key), ("value", value)):
        for field, array in _side(name, schema, values, struct_types, guess):
            fields.append(field)
            arrays.append(array)
    fields.append(pa.field("headers", pa.list_(_HEADER)))
    arrays.append(headers)
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def no_headers(count: int) -> pa.Array:
    """The headers column of ``count`` records without headers."""
    return pa.array([[]] * count, type=pa.list_(_HEADER))


def frame_schema(
    key_schema: Schema | None, value_schema: Schema | None, struct_types: StructTypes
) -> pa.Schema:
    """The Arrow schema of ``frame_table`` for records of these schemas, with these struct
    types for their schemaless sides."""
    fields: list[pa.Field] = list(_BASE)
    for name, schema in (("key", key_schema), ("value", value_schema)):
        kind = None if schema is None else frame_type(schema)
        if schema is not None and kind is not None:
            fields.append(pa.field(name, kind))
            continue
        fields.append(pa.field(name, pa.string()))
        fixed = struct_types.get(name)
        if fixed is not None:
            fields.append(pa.field(f"{name}_struct", fixed))
    fields.append(pa.field("headers", pa.list_(_HEADER)))
    return pa.schema(fields)


def schema_form(schema: Schema) -> dict[str, Any]:
    """``schema`` in JsonConverter's schema form, with the defaults that are JSON scalars (not
    those of logical types): the ``connect.schema`` metadata of a frame's typed key or value
    column, so that a sink sees what the column's Spark type cannot say (required fields,
    logical names, defaults)."""
    return schema_json_form(schema, _scalar_default)


def _scalar_default(schema: Schema) -> Any:
    default = schema.default
    if schema.name in logical.LOGICAL_NAMES or not isinstance(default, str | int | float | bool):
        return None
    return default


def frame_metadata(key_schema: Schema | None, value_schema: Schema | None) -> dict[str, str]:
    """Column name -> its ``connect.schema`` metadata (JSON text), for each typed side."""
    return {
        name: json.dumps(schema_form(schema))
        for name, schema in (("key", key_schema), ("value", value_schema))
        if schema is not None and frame_type(schema) is not None
    }


def schemaless_sides(key_schema: Schema | None, value_schema: Schema | None) -> list[str]:
    """The sides of records with these schemas that travel as JSON text (and maybe a struct)."""
    return [
        name
        for name, schema in (("key", key_schema), ("value", value_schema))
        if schema is None or frame_type(schema) is None
    ]


def sink_frame(
    engine: SparkEngine, records: Sequence[SinkRecord], header_converter: HeaderConverter | None
) -> DataFrame:
    """A DataFrame of records that share one key and one value schema (see schema_runs)."""
    first = records[0] if records else None
    frame = engine.session().createDataFrame(frame_table(records, header_converter))
    if first is None:
        return frame
    for name, form in frame_metadata(first.key_schema, first.value_schema).items():
        frame = frame.withMetadata(name, {FRAME_SCHEMA_METADATA: form})
    return frame


__all__ = [
    "StructTypes",
    "columns_table",
    "frame_metadata",
    "frame_schema",
    "frame_table",
    "frame_type",
    "guessed_types",
    "inferred",
    "json_text",
    "no_headers",
    "schema_form",
    "schema_runs",
    "schemaless_sides",
    "sink_frame",
    "unified_type",
]
