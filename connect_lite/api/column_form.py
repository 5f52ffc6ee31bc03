"""A transform's column form: what it does to a whole batch, described without Spark.

When every record of a batch shares its key and value schemas, the framework can run a
chain of transforms as one Spark ``select`` instead of calling ``apply`` per record. A
transformation takes part by returning a :class:`ColumnFrame` from
``Transformation.column_form``, and a predicate by returning an :class:`Expr` from
``Predicate.column_condition``. Both are written only against this module: the data plane
compiles the expressions to Spark columns, and a transform never imports pyspark.

A column form must give exactly the records ``apply`` gives. When it cannot (a value it
cannot express, a case where Java and Spark would differ), it returns None, and the batch
runs ``apply`` in Spark's Python workers instead (the Arrow form). An expression the engine
cannot compute exactly (see :class:`KafkaCast` and :class:`FormatMillis`) has the same
effect. A subclass defined in another module than its ``column_form`` does not inherit the
column form: it must define its own, since it may change what ``apply`` does.

The record is a row of columns, named by :data:`ROW_COLUMNS`; ``key`` and ``value`` are
there only when that side has a column type (:attr:`ColumnFrame.schemas` says which).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from connect_lite.api.data import Schema, SchemaType

ROW_COLUMNS = {
    "topic": "the topic (string)",
    "partition": "the Kafka partition (int, may be null)",
    "offset": "the Kafka offset (long; null for a source record)",
    "timestamp": "the record's timestamp in epoch milliseconds (long, may be null)",
    "key": "the key, typed by its schema (a struct for a Struct)",
    "value": "the value, typed by its schema",
    "header_keys": "the names of the record's headers (array of strings)",
    "value_null": "whether the value is null (boolean), also when it has no column",
}
"""The columns a chain starts from, and what each holds."""


class Expr:
    """A column expression. Build one from the classes below (or these shortcuts)."""

    def field(self, name: str) -> Expr:
        """A field of this struct."""
        return GetField(self, name)

    def is_null(self) -> Expr:
        return IsNull(self)

    def __invert__(self) -> Expr:
        return Not(self)


@dataclass(frozen=True)
class Col(Expr):
    """One of the record's :data:`ROW_COLUMNS`."""

    name: str


@dataclass(frozen=True)
class Lit(Expr):
    """A constant: None, a bool, a number or a string. With ``schema``, of that schema's
    column type (a number masked to an INT16 field stays a short)."""

    value: Any
    schema: Schema | None = None


@dataclass(frozen=True)
class GetField(Expr):
    """The field ``name`` of a struct (null when the struct is null)."""

    of: Expr
    name: str


@dataclass(frozen=True)
class StructOf(Expr):
    """A struct of the given fields, in order."""

    fields: tuple[tuple[str, Expr], ...]


@dataclass(frozen=True)
class IsNull(Expr):
    of: Expr


@dataclass(frozen=True)
class Not(Expr):
    of: Expr


@dataclass(frozen=True)
class When(Expr):
    """``then`` where ``condition`` is true, else ``otherwise``."""

    condition: Expr
    then: Expr
    otherwise: Expr


@dataclass(frozen=True)
class KafkaCast(Expr):
    """Kafka's Cast of a value of schema ``before`` to schema ``after``, with Java's rules
    (the same schema: the value unchanged). The engine computes only the pairs where its own
    cast agrees with Java's for every input (ints widening, ints and booleans to strings,
    ...); for any other pair the chain has no column form."""

    of: Expr
    before: Schema
    after: Schema


@dataclass(frozen=True)
class Matches(Expr):
    """Whether the whole string matches a Java regular expression (``Matcher.matches``)."""

    of: Expr
    regex: str


@dataclass(frozen=True)
class ReplaceMatch(Expr):
    """The string replaced by ``replacement`` (with ``$n`` group references) where the whole
    string matches the Java regular expression ``regex``; unchanged otherwise."""

    of: Expr
    regex: str
    replacement: str


@dataclass(frozen=True)
class ReplaceText(Expr):
    """Java's ``String.replace``: every occurrence of ``search`` in the string replaced."""

    of: Expr
    search: str
    replacement: Expr


@dataclass(frozen=True)
class FormatMillis(Expr):
    """Epoch milliseconds formatted with a SimpleDateFormat pattern, in UTC. The engine
    computes only patterns its own formatter renders the same way, in a UTC session."""

    of: Expr
    pattern: str


@dataclass(frozen=True)
class Contains(Expr):
    """Whether an array holds ``item``."""

    of: Expr
    item: str


TRUE: Expr = Lit(True)


@dataclass(frozen=True)
class ColumnFrame:
    """The record as column expressions, with the Connect schemas of key and value.

    ``keep`` says whether the chain keeps the record; ``touched`` names the sides
    (``"key"``, ``"value"``) whose values the chain changed, which must then be non-null
    for the column form to hold (Kafka keeps a null's schema); ``needs_timestamp`` says that
    a record without a timestamp fails the chain."""

    cols: Mapping[str, Expr]
    schemas: Mapping[str, Schema | None]
    keep: Expr = TRUE
    touched: frozenset[str] = frozenset()
    needs_timestamp: bool = False

    @staticmethod
    def side(is_key: bool) -> str:
        return "key" if is_key else "value"

    def with_side(self, side: str, column: Expr, schema: Schema | None) -> ColumnFrame:
        """The frame with ``side`` changed to ``column`` of ``schema``."""
        return dataclasses.replace(
            self,
            cols={**self.cols, side: column},
            schemas={**self.schemas, side: schema},
            touched=self.touched | {side},
        )

    def with_column(self, name: str, column: Expr) -> ColumnFrame:
        """The frame with a row column (``topic``, ...) changed."""
        return dataclasses.replace(self, cols={**self.cols, name: column})

    def struct_side(self, is_key: bool) -> tuple[str, Expr, Schema] | None:
        """The side's name, column and Struct schema; None unless it is a typed Struct."""
        side = self.side(is_key)
        schema = self.schemas.get(side)
        if side not in self.cols or schema is None or schema.type is not SchemaType.STRUCT:
            return None
        return side, self.cols[side], schema


def fields_of(column: Expr, schema: Schema) -> dict[str, Expr]:
    """Each field of a Struct column, by name."""
    return {f.name: column.field(f.name) for f in schema.fields}


def struct_of(columns: Mapping[str, Expr], schema: Schema) -> Expr:
    """A Struct column of ``schema`` whose fields are ``columns[name]``."""
    return StructOf(tuple((f.name, columns[f.name]) for f in schema.fields))


def out_schema(is_key: bool, record: Any) -> Schema | None:
    """The key or value schema of a record (the probe's output, for a transform)."""
    return record.key_schema if is_key else record.value_schema


__all__ = [
    "ROW_COLUMNS",
    "TRUE",
    "Col",
    "ColumnFrame",
    "Contains",
    "Expr",
    "FormatMillis",
    "GetField",
    "IsNull",
    "KafkaCast",
    "Lit",
    "Matches",
    "Not",
    "ReplaceMatch",
    "ReplaceText",
    "StructOf",
    "When",
    "fields_of",
    "out_schema",
    "struct_of",
]
