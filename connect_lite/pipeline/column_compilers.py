"""Kafka's built-in transforms and predicates compiled to Spark column expressions.

When a batch has a schema (every record shares its key and value schemas), a chain of
built-ins becomes one ``select`` over a DataFrame of the batch: the record is a row
(topic, partition, offset, timestamp, key, value) and each transform rewrites some of
those columns. The JVM evaluates the whole chain; no Python runs per record for it.

Output schemas come from running the chain once, record-at-a-time, on the batch's first
record (the probe): Kafka's transforms derive their output schema from the input schema
only. Anything a compiler cannot express exactly (a third-party transform, headers,
Decimal fields, default values, a tombstone where the chain changes a value, a cast or a
date pattern whose Java and Spark results differ) leaves the batch to the Arrow form,
which runs ``apply`` itself. Both give the same records: the shared test table in
tests/integration/pipeline/test_transform_forms.py compares them, and ``apply``.

column_plan.py turns a compiled chain into a batch's select and runs it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_type
from pyspark.sql.types import DataType

from connect_lite.api import logical
from connect_lite.api.data import Schema, SchemaType
from connect_lite.api.field_path import FIELD_SYNTAX_VERSION, FieldPath
from connect_lite.api.records import SinkRecord, SourceRecord
from connect_lite.pipeline.columns import arrow_type
from connect_lite.protocol.job_spec import Chain


@dataclass
class Frame:
    """The record as Spark columns, with the Connect schemas of key and value."""

    cols: dict[str, Column]
    schemas: dict[str, Schema | None]
    keep: Column = field(default_factory=lambda: F.lit(True))
    touched: set[str] = field(default_factory=set)  # "key"/"value": must not be null
    needs_timestamp: bool = False  # a record without a timestamp fails the chain

    def side(self, t: object) -> str:
        return "key" if getattr(t, "is_key", False) else "value"

    def with_side(self, side: str, column: Column, schema: Schema | None) -> Frame:
        cols = dict(self.cols, **{side: column})
        schemas = dict(self.schemas, **{side: schema})
        return dataclasses.replace(self, cols=cols, schemas=schemas, touched=self.touched | {side})


class BuiltIn(Protocol):
    """A built-in transform or predicate as a compiler reads it: its parsed config."""

    settings: dict[str, Any]


class _Masking(BuiltIn, Protocol):
    def masked(self, value: Any, schema_type: SchemaType | None = None) -> Any: ...


Record = SourceRecord | SinkRecord

Compiler = Callable[[BuiltIn, Frame, Record], "Frame | None"]
"""(configured transform, input frame, probe output record) -> output frame or None."""


def _struct_side(t: object, frame: Frame) -> tuple[str, Column, Schema] | None:
    side = frame.side(t)
    schema = frame.schemas.get(side)
    if side not in frame.cols or schema is None or schema.type is not SchemaType.STRUCT:
        return None
    return side, frame.cols[side], schema


def _out_schema(t: object, record: Record) -> Schema | None:
    return record.key_schema if getattr(t, "is_key", False) else record.value_schema


def _struct_of(columns: dict[str, Column], schema: Schema) -> Column:
    return F.struct(*[columns[f.name].alias(f.name) for f in schema.fields])


def _fields(column: Column, schema: Schema) -> dict[str, Column]:
    return {f.name: column.getField(f.name) for f in schema.fields}


def _insert_field(t: BuiltIn, frame: Frame, out: Record) -> Frame | None:
    found, schema = _struct_side(t, frame), _out_schema(t, out)
    if found is None or schema is None:
        return None
    side, column, _ = found
    columns = _fields(column, found[2])
    sources = {
        "topic.field": frame.cols["topic"],
        "partition.field": frame.cols["partition"],
        "offset.field": frame.cols.get("offset"),
        "timestamp.field": frame.cols["timestamp"],
        "static.field": F.lit(t.settings.get("static.value")),
    }
    for key, source in sources.items():
        spec = t.settings.get(key)
        if spec:
            if source is None:
                return None
            columns[str(spec).rstrip("!?")] = source
    if any(f.name not in columns for f in schema.fields):
        return None
    return frame.with_side(side, _struct_of(columns, schema), schema)


def _replace_field(t: BuiltIn, frame: Frame, out: Record) -> Frame | None:
    found, schema = _struct_side(t, frame), _out_schema(t, out)
    if found is None or schema is None:
        return None
    side, column, _ = found
    renames = {}
    for pair in t.settings.get("renames") or []:
        old, _, new = str(pair).partition(":")
        renames[new] = old
    columns = {f.name: column.getField(renames.get(f.name, f.name)) for f in schema.fields}
    return frame.with_side(side, _struct_of(columns, schema), schema)


_SAMPLES = {
    SchemaType.INT8: 1,
    SchemaType.INT16: 1,
    SchemaType.INT32: 1,
    SchemaType.INT64: 1,
    SchemaType.FLOAT32: 1.0,
    SchemaType.FLOAT64: 1.0,
    SchemaType.BOOLEAN: True,
    SchemaType.STRING: "x",
}
"""A non-null value of each type whose masked form is the same for every value."""


def _mask_field(t: BuiltIn, frame: Frame, out: Record) -> Frame | None:
    found, schema = _struct_side(t, frame), _out_schema(t, out)
    if found is None or schema is None:
        return None
    side, column, _ = found
    columns = _fields(column, schema)
    for name in t.settings.get("fields") or []:
        f = schema.field(name)
        if f is None or f.schema.name or f.schema.default is not None:
            return None
        if f.schema.type not in _SAMPLES:
            return None
        try:  # null stays null; any other value masks to one constant per type
            masked = cast(_Masking, t).masked(_SAMPLES[f.schema.type], f.schema.type)
        except Exception:
            return None
        literal = F.lit(masked).cast(_spark_type(f.schema))
        columns[name] = F.when(columns[name].isNull(), F.lit(None)).otherwise(literal)
    return frame.with_side(side, _struct_of(columns, schema), schema)


def _path(t: BuiltIn, key: str) -> FieldPath:
    return FieldPath.parse(
        str(t.settings.get(key)), str(t.settings.get(FIELD_SYNTAX_VERSION, "V1"))
    )


def _extract_field(t: BuiltIn, frame: Frame, out: Record) -> Frame | None:
    found, schema = _struct_side(t, frame), _out_schema(t, out)
    if found is None or schema is None or schema.optional:
        return None  # an optional field may be null, and a null changes the next schemas
    side, column, struct = found
    steps = _path(t, "field").steps
    for step in steps[:-1]:  # nor may any struct on the way be null
        inner = struct.field(step)
        if inner is None or inner.schema.optional or inner.schema.type is not SchemaType.STRUCT:
            return None
        struct = inner.schema
    for step in steps:
        column = column.getField(step)
    return frame.with_side(side, column, schema)


def _hoist_field(t: BuiltIn, frame: Frame, out: Record) -> Frame | None:
    side = frame.side(t)
    schema = _out_schema(t, out)
    if side not in frame.cols or frame.schemas.get(side) is None or schema is None:
        return None
    column = F.struct(frame.cols[side].alias(str(t.settings["field"])))
    return frame.with_side(side, column, schema)


def _value_to_key(t: BuiltIn, frame: Frame, out: Record) -> Frame | None:
    found = _struct_side(_VALUE, frame)
    if found is None or out.key_schema is None:
        return None
    column = _struct_of(_fields(found[1], found[2]), out.key_schema)
    moved = frame.with_side("key", column, out.key_schema)
    moved.touched.add("value")
    return moved


def _set_schema_metadata(t: BuiltIn, frame: Frame, out: Record) -> Frame | None:
    side = frame.side(t)
    if side not in frame.cols:
        return None
    return frame.with_side(side, frame.cols[side], _out_schema(t, out))


def _flatten(t: BuiltIn, frame: Frame, out: Record) -> Frame | None:
    found, schema = _struct_side(t, frame), _out_schema(t, out)
    if found is None or schema is None:
        return None
    side, column, in_schema = found
    delimiter = str(t.settings.get("delimiter", "."))
    columns: dict[str, Column] = {}

    def walk(col: Column, struct: Schema, prefix: str) -> None:
        for f in struct.fields:
            name = prefix + f.name
            if f.schema.type is SchemaType.STRUCT:
                walk(col.getField(f.name), f.schema, name + delimiter)
            else:
                columns[name] = col.getField(f.name)

    walk(column, in_schema, "")
    if set(columns) != {f.name for f in schema.fields}:
        return None
    return frame.with_side(side, _struct_of(columns, schema), schema)


_INTS = (SchemaType.INT8, SchemaType.INT16, SchemaType.INT32, SchemaType.INT64)
_SAME_IN_JAVA_AND_SPARK = {
    **{(a, b): True for a in _INTS for b in _INTS if _INTS.index(a) <= _INTS.index(b)},
    **{(a, SchemaType.STRING): True for a in (*_INTS, SchemaType.BOOLEAN)},
    **{(a, SchemaType.BOOLEAN): True for a in _INTS},
    **{(SchemaType.BOOLEAN, b): True for b in _INTS},
}
"""Casts whose results agree between Kafka's Cast and Spark's cast for every input."""


def _cast(t: BuiltIn, frame: Frame, out: Record) -> Frame | None:
    side = frame.side(t)
    in_schema, schema = frame.schemas.get(side), _out_schema(t, out)
    if side not in frame.cols or in_schema is None or schema is None:
        return None
    column = frame.cols[side]
    if in_schema.type is not SchemaType.STRUCT:
        cast = _cast_column(column, in_schema, schema)
        return None if cast is None else frame.with_side(side, cast, schema)
    columns = {}
    for f in schema.fields:
        before = in_schema.field(f.name)
        if before is None:
            return None
        cast = _cast_column(column.getField(f.name), before.schema, f.schema)
        if cast is None:
            return None
        columns[f.name] = cast
    return frame.with_side(side, _struct_of(columns, schema), schema)


def _cast_column(column: Column, before: Schema, after: Schema) -> Column | None:
    if before.type is after.type and before.name == after.name:
        return column
    if before.name or after.name or (before.type, after.type) not in _SAME_IN_JAVA_AND_SPARK:
        return None
    return column.cast(_spark_type(after))


def _regex_router(t: BuiltIn, frame: Frame, out: Record) -> Frame | None:
    pattern = _full(str(t.settings["regex"]))
    topic = frame.cols["topic"]
    renamed = F.regexp_replace(topic, F.lit(pattern), F.lit(str(t.settings["replacement"])))
    cols = dict(frame.cols, topic=F.when(topic.rlike(pattern), renamed).otherwise(topic))
    return dataclasses.replace(frame, cols=cols)


_UTC_ZONES = frozenset(("UTC", "Etc/UTC", "GMT", "Z", "+00:00"))
_SAME_PATTERN = re.compile(r"(?:yyyy|yy|M{1,2}|d{1,2}|H{1,2}|m{1,2}|s{1,2}|[-_./: ]|\d)++")
"""SimpleDateFormat patterns that Spark's date_format renders the same way. Possessive: each
run of a letter splits only one way, and retrying the others took exponential time."""


def _timestamp_router(t: BuiltIn, frame: Frame, out: Record) -> Frame | None:
    pattern = str(t.settings["timestamp.format"])
    spark = SparkSession.getActiveSession()
    if spark is None or spark.conf.get("spark.sql.session.timeZone") not in _UTC_ZONES:
        return None  # Kafka formats in UTC; Spark formats in the session's time zone
    if not _SAME_PATTERN.fullmatch(pattern):
        return None
    formatted = F.date_format(F.timestamp_millis(frame.cols["timestamp"]), pattern)
    # Java's String.replace, twice, in Kafka's order: ${topic} first, then ${timestamp}.
    topic = F.replace(
        F.lit(str(t.settings["topic.format"])), F.lit("${topic}"), frame.cols["topic"]
    )
    topic = F.replace(topic, F.lit("${timestamp}"), formatted)
    return dataclasses.replace(frame, cols=dict(frame.cols, topic=topic), needs_timestamp=True)


def _timestamp_converter(t: BuiltIn, frame: Frame, out: Record) -> Frame | None:
    """Only millisecond unix times to Timestamps and back: the same INT64, a new schema."""
    side = frame.side(t)
    in_schema, schema = frame.schemas.get(side), _out_schema(t, out)
    if side not in frame.cols or in_schema is None or schema is None:
        return None
    if t.settings.get("unix.precision") != "milliseconds":
        return None
    name = t.settings.get("field") or ""
    if not name:
        if not _same_millis(in_schema, schema):
            return None
        return frame.with_side(side, frame.cols[side], schema)
    found = _struct_side(t, frame)
    path = _path(t, "field")
    if found is None or not path.is_root or schema.type is not SchemaType.STRUCT:
        return None
    before, after = in_schema.field(path.name), schema.field(path.name)
    if before is None or after is None or not _same_millis(before.schema, after.schema):
        return None
    columns = _fields(found[1], in_schema)
    if set(columns) != {f.name for f in schema.fields}:
        return None
    return frame.with_side(side, _struct_of(columns, schema), schema)


def _same_millis(before: Schema, after: Schema) -> bool:
    """A Timestamp to or from a plain INT64 of milliseconds: the data does not change."""
    kinds = {before.name, after.name}
    return (
        before.type is after.type is SchemaType.INT64
        and kinds <= {None, logical.TIMESTAMP}
        and len(kinds) == 2
    )


def _filter(t: BuiltIn, frame: Frame, out: Record) -> Frame | None:
    return dataclasses.replace(frame, keep=F.lit(False))


def _full(regex: str) -> str:
    """A Java regex that must match the whole string, as ``Matcher.matches``."""
    return f"\\A(?:{regex})\\z"


class _Value:
    is_key = False


_VALUE = _Value()

TRANSFORMS: dict[str, Compiler] = {
    "InsertField": _insert_field,
    "ReplaceField": _replace_field,
    "MaskField": _mask_field,
    "ExtractField": _extract_field,
    "HoistField": _hoist_field,
    "ValueToKey": _value_to_key,
    "SetSchemaMetadata": _set_schema_metadata,
    "Flatten": _flatten,
    "Cast": _cast,
    "RegexRouter": _regex_router,
    "TimestampRouter": _timestamp_router,
    "TimestampConverter": _timestamp_converter,
    "Filter": _filter,
}
"""Built-in transform families with a column form (the class name without Key/Value)."""


PREDICATES = ("TopicNameMatches", "HasHeaderKey", "RecordIsTombstone")


def _predicate(p: BuiltIn, frame: Frame) -> Column | None:
    name = _family(p)
    if name == "TopicNameMatches":
        return frame.cols["topic"].rlike(_full(str(p.settings["pattern"])))
    if name == "HasHeaderKey":
        return F.array_contains(frame.cols["header_keys"], str(p.settings["name"]))
    if name == "RecordIsTombstone":  # the value as the chain has it so far, if typed
        return frame.cols["value"].isNull() if "value" in frame.cols else frame.cols["value_null"]
    return None


def _family(component: object) -> str | None:
    klass = type(component)
    if not klass.__module__.startswith("connect_lite.transforms."):
        return None
    name = klass.__name__
    for suffix in ("Key", "Value"):
        if name.endswith(suffix) and name[: -len(suffix)] in TRANSFORMS:
            return name[: -len(suffix)]
    return name


@dataclass(frozen=True)
class Compiled:
    """A chain as one select: the kept rows' columns and the output schemas."""

    frame: Frame
    sides: frozenset[str]

    @property
    def needs_timestamp(self) -> bool:
        return self.frame.needs_timestamp


def compile_chain(chain: Chain, probe: Record, base: Frame) -> Compiled | None:
    """The chain over ``base`` columns, or None when a step has no exact column form."""
    frame, record = base, probe
    for transform, predicate, negate in chain:
        family = _family(transform)
        compiler = TRANSFORMS.get(family or "")
        if compiler is None:
            return None
        try:
            out = transform.apply(record)
        except Exception:
            return None  # the Arrow form reports the error against the right record
        produced = out if out is not None else record
        # Only built-ins have a family, and they keep their parsed config in ``settings``.
        step = compiler(cast(BuiltIn, transform), frame, produced)
        if step is None:
            return None
        if predicate is not None:
            condition = _predicate(cast(BuiltIn, predicate), frame)
            same_schemas = (
                produced.key_schema == record.key_schema
                and produced.value_schema == record.value_schema
            )
            if condition is None or not same_schemas:
                return None
            if negate:
                condition = ~condition
            cols = {k: F.when(condition, v).otherwise(frame.cols[k]) for k, v in step.cols.items()}
            keep = F.when(condition, step.keep).otherwise(frame.keep)
            step = dataclasses.replace(step, cols=cols, keep=keep)
        frame, record = step, produced
    return Compiled(frame, frozenset(frame.touched))


def chain_has_columns(chain: Chain) -> bool:
    """Whether every transform and predicate of the chain is a built-in with a column form."""
    return all(
        _family(t) in TRANSFORMS and (p is None or _family(p) in PREDICATES) for t, p, _ in chain
    )


def _spark_type(schema: Schema) -> DataType:
    """The Spark type of a schema's column: Spark's reading of its Arrow type."""
    kind = arrow_type(schema)
    if kind is None:
        raise ValueError(f"No column type for {schema}")
    return from_arrow_type(kind)


__all__ = [
    "PREDICATES",
    "TRANSFORMS",
    "Compiled",
    "Frame",
    "chain_has_columns",
    "compile_chain",
]
