"""Transform chains compiled to Spark column expressions: the engine of the column form.

When a batch has a schema (every record shares its key and value schemas), a chain whose
transforms and predicates all have a column form (``Transformation.column_form``,
``Predicate.column_condition``, written against :mod:`connect_lite.api.column_form`)
becomes one ``select`` over a DataFrame of the batch: the record is a row (topic,
partition, offset, timestamp, key, value) and each transform rewrites some of those
columns. The JVM evaluates the whole chain; no Python runs per record for it.

Output schemas come from running the chain once, record-at-a-time, on the batch's first
record (the probe): Kafka's transforms derive their output schema from the input schema
only. A step without an exact column form, or an expression Spark does not compute as Java
does (:class:`~connect_lite.api.column_form.KafkaCast`,
:class:`~connect_lite.api.column_form.FormatMillis`), leaves the batch to the Arrow form,
which runs ``apply`` itself. Both give the same records: the shared test table in
tests/integration/pipeline/test_transform_forms.py compares them, and ``apply``.

column_plan.py turns a compiled chain into a batch's select and runs it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_type
from pyspark.sql.types import DataType

from connect_lite.api.column_form import (
    Col,
    ColumnFrame,
    Contains,
    Expr,
    FormatMillis,
    GetField,
    IsNull,
    KafkaCast,
    Lit,
    Matches,
    Not,
    ReplaceMatch,
    ReplaceText,
    StructOf,
    When,
)
from connect_lite.api.components import Predicate, Transformation
from connect_lite.api.data import Schema, SchemaType
from connect_lite.api.records import SinkRecord, SourceRecord
from connect_lite.pipeline.columns import arrow_type
from connect_lite.protocol.job_spec import Chain

Record = SourceRecord | SinkRecord


class _NoColumn(Exception):
    """An expression Spark cannot compute exactly as Kafka does: the chain has no column form."""


def _own(component: object, name: str) -> Callable[..., Any] | None:
    """``component``'s ``column_form`` or ``column_condition``, if it has its own.

    Not the API's default, and not one inherited from a class of another module: a subclass
    elsewhere may change what ``apply`` or ``test`` does, so it must write its own."""
    klass = type(component)
    owner = next((k for k in klass.__mro__ if name in vars(k)), None)
    if owner is None or owner in (Transformation, Predicate):
        return None
    if owner.__module__ != klass.__module__:
        return None
    method: Callable[..., Any] = getattr(component, name)
    return method


def chain_has_columns(chain: Chain) -> bool:
    """Whether every transform and predicate of the chain has a column form of its own."""
    return all(
        _own(t, "column_form") is not None
        and (p is None or _own(p, "column_condition") is not None)
        for t, p, _ in chain
    )


@dataclass(frozen=True)
class Compiled:
    """A chain as one select: the output columns, whether a row is kept, the output schemas."""

    cols: dict[str, Column]
    keep: Column
    schemas: dict[str, Schema | None]
    sides: frozenset[str]  # the sides the chain changes
    needs_timestamp: bool  # a record without a timestamp fails the chain


def compile_chain(
    chain: Chain, probe: Record, columns: Iterable[str], schemas: Mapping[str, Schema | None]
) -> Compiled | None:
    """The chain over the row ``columns`` (key and value with ``schemas``), or None when a
    step has no exact column form. Needs a live SparkContext."""
    frame = ColumnFrame({name: Col(name) for name in columns}, dict(schemas))
    record = probe
    for transform, predicate, negate in chain:
        column_form = _own(transform, "column_form")
        if column_form is None:
            return None
        try:
            out = transform.apply(record)
        except Exception:
            return None  # the Arrow form reports the error against the right record
        produced = out if out is not None else record
        step: ColumnFrame | None = column_form(frame, produced)
        if step is None:
            return None
        if predicate is not None:
            step = _guarded(frame, step, predicate, negate, record, produced)
            if step is None:
                return None
        frame, record = step, produced
    try:
        return Compiled(
            {name: _compile(e) for name, e in frame.cols.items()},
            _compile(frame.keep),
            dict(frame.schemas),
            frozenset(frame.touched),
            frame.needs_timestamp,
        )
    except _NoColumn:
        return None


def _guarded(
    before: ColumnFrame,
    step: ColumnFrame,
    predicate: object,
    negate: bool,
    record: Record,
    produced: Record,
) -> ColumnFrame | None:
    """``step`` where the predicate holds (or, negated, does not), ``before`` elsewhere."""
    column_condition = _own(predicate, "column_condition")
    if column_condition is None:
        return None
    condition: Expr | None = column_condition(before)
    same_schemas = (
        produced.key_schema == record.key_schema and produced.value_schema == record.value_schema
    )
    if condition is None or not same_schemas or not step.cols.keys() <= before.cols.keys():
        return None
    if negate:
        condition = Not(condition)
    cols = {k: When(condition, v, before.cols[k]) for k, v in step.cols.items()}
    keep = When(condition, step.keep, before.keep)
    return dataclasses.replace(step, cols=cols, keep=keep)


def _compile(e: Expr) -> Column:
    """The Spark column of an expression; _NoColumn when Spark would differ from Kafka."""
    match e:
        case Col(name):
            return F.col(name)
        case Lit(value, schema):
            literal = F.lit(value)
            return literal if schema is None else literal.cast(_spark_type(schema))
        case GetField(of, name):
            return _compile(of).getField(name)
        case StructOf(fields):
            return F.struct(*[_compile(c).alias(name) for name, c in fields])
        case IsNull(of):
            return _compile(of).isNull()
        case Not(of):
            return ~_compile(of)
        case When(condition, then, otherwise):
            return F.when(_compile(condition), _compile(then)).otherwise(_compile(otherwise))
        case KafkaCast(of, before, after):
            return _cast(_compile(of), before, after)
        case Matches(of, regex):
            return _compile(of).rlike(_whole(regex))
        case ReplaceMatch(of, regex, replacement):
            return F.regexp_replace(_compile(of), F.lit(_whole(regex)), F.lit(replacement))
        case ReplaceText(of, search, replacement):
            return F.replace(_compile(of), F.lit(search), _compile(replacement))
        case FormatMillis(of, pattern):
            return _format_millis(_compile(of), pattern)
        case Contains(of, item):
            return F.array_contains(_compile(of), item)
    raise _NoColumn(f"No column for {type(e).__name__}")


_INTS = (SchemaType.INT8, SchemaType.INT16, SchemaType.INT32, SchemaType.INT64)
_SAME_IN_JAVA_AND_SPARK = {
    **{(a, b): True for a in _INTS for b in _INTS if _INTS.index(a) <= _INTS.index(b)},
    **{(a, SchemaType.STRING): True for a in (*_INTS, SchemaType.BOOLEAN)},
    **{(a, SchemaType.BOOLEAN): True for a in _INTS},
    **{(SchemaType.BOOLEAN, b): True for b in _INTS},
}
"""Casts whose results agree between Kafka's Cast and Spark's cast for every input."""


def _cast(column: Column, before: Schema, after: Schema) -> Column:
    if before.type is after.type and before.name == after.name:
        return column
    if before.name or after.name or (before.type, after.type) not in _SAME_IN_JAVA_AND_SPARK:
        raise _NoColumn(f"Spark's cast of {before.type} to {after.type} is not Java's")
    return column.cast(_spark_type(after))


_UTC_ZONES = frozenset(("UTC", "Etc/UTC", "GMT", "Z", "+00:00"))
_SAME_PATTERN = re.compile(r"(?:yyyy|yy|M{1,2}|d{1,2}|H{1,2}|m{1,2}|s{1,2}|[-_./: ]|\d)++")
"""SimpleDateFormat patterns that Spark's date_format renders the same way. Possessive: each
run of a letter splits only one way, and retrying the others took exponential time."""


def _format_millis(millis: Column, pattern: str) -> Column:
    spark = SparkSession.getActiveSession()
    if spark is None or spark.conf.get("spark.sql.session.timeZone") not in _UTC_ZONES:
        raise _NoColumn("Kafka formats in UTC; Spark formats in the session's time zone")
    if not _SAME_PATTERN.fullmatch(pattern):
        raise _NoColumn("Spark's date_format renders this pattern otherwise")
    return F.date_format(F.timestamp_millis(millis), pattern)


def _whole(regex: str) -> str:
    """A Java regex that must match the whole string, as ``Matcher.matches``."""
    return f"\\A(?:{regex})\\z"


def _spark_type(schema: Schema) -> DataType:
    """The Spark type of a schema's column: Spark's reading of its Arrow type."""
    kind = arrow_type(schema)
    if kind is None:
        raise _NoColumn(f"No column type for {schema}")
    return from_arrow_type(kind)


__all__ = ["Compiled", "chain_has_columns", "compile_chain"]
