"""A poll_dataframe frame's key and value types as Connect schemas, and its values as Connect
values: what the converters then serialize."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pyarrow as pa
import pytest

from connect_lite.api import logical
from connect_lite.api.data import Schema, SchemaBuilder, SchemaType, Struct
from connect_lite.api.errors import ConnectError
from connect_lite.pipeline.source_frames import (
    column_values,
    connect_schema,
    connect_value,
    declared_schema,
)


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        (pa.string(), SchemaType.STRING),
        (pa.binary(), SchemaType.BYTES),
        (pa.int32(), SchemaType.INT32),
        (pa.int64(), SchemaType.INT64),
        (pa.float64(), SchemaType.FLOAT64),
        (pa.bool_(), SchemaType.BOOLEAN),
    ],
)
def test_plain_types_are_optional_schemas_of_their_kind(kind: pa.DataType, expected: Any) -> None:
    schema = connect_schema(kind, "value")
    assert schema is not None and schema.type is expected and schema.optional


def test_a_struct_with_nested_parts_and_logical_types() -> None:
    kind = pa.struct(
        [
            ("id", pa.int64()),
            ("at", pa.timestamp("us", tz="UTC")),
            ("day", pa.date32()),
            ("tags", pa.list_(pa.string())),
            ("counts", pa.map_(pa.string(), pa.int32())),
            ("inner", pa.struct([("x", pa.float64())])),
        ]
    )
    schema = connect_schema(kind, "value")
    assert schema is not None and schema.type is SchemaType.STRUCT
    fields = {f.name: f.schema for f in schema.fields}
    assert fields["at"].name == logical.TIMESTAMP and fields["day"].name == logical.DATE
    assert fields["tags"].type is SchemaType.ARRAY and fields["counts"].type is SchemaType.MAP
    at = dt.datetime(2026, 11, 28, 1, 2, 3)
    value = connect_value(
        {
            "id": 7,
            "at": at,
            "day": dt.date(2026, 11, 28),
            "tags": ["a"],
            "counts": [("k", 1)],
            "inner": {"x": 1.5},
        },
        schema,
    )
    assert isinstance(value, Struct) and value.get("id") == 7
    assert value.get("at") == at.replace(tzinfo=dt.UTC)  # Spark's timestamps are UTC
    assert value.get("counts") == {"k": 1} and value.get("inner").get("x") == 1.5


def test_a_column_of_nulls_has_no_schema_and_a_decimal_is_refused() -> None:
    assert connect_schema(pa.null(), "key") is None
    with pytest.raises(ConnectError, match=r"Column value\.price has type decimal"):
        connect_schema(pa.struct([("price", pa.decimal128(10, 2))]), "value")


def test_values_of_plain_schemas_pass_as_they_are() -> None:
    schema: Schema = SchemaBuilder.of(SchemaType.STRING).optional().build()
    assert connect_value("text", schema) == "text" and connect_value(None, schema) is None


def _user() -> Schema:
    kind = pa.struct([("id", pa.int64()), ("at", pa.timestamp("us", tz="UTC"))])
    schema = connect_schema(kind, "value")
    assert schema is not None
    return schema


def test_a_declared_schema_names_the_struct_and_makes_fields_required() -> None:
    node = {
        "type": "struct",
        "name": "com.example.User",
        "version": 2,
        "optional": False,
        "fields": [{"field": "id", "optional": False, "doc": "the id"}],
    }
    schema = declared_schema(_user(), node, "value")
    assert schema is not None
    assert (schema.name, schema.version, schema.optional) == ("com.example.User", 2, False)
    fields = {f.name: f.schema for f in schema.fields}
    assert not fields["id"].optional and fields["id"].doc == "the id"
    assert fields["at"].optional and fields["at"].name == logical.TIMESTAMP  # undeclared: as is
    assert declared_schema(_user(), json.dumps(node), "value") == schema  # JSON text too
    assert declared_schema(_user(), None, "value") == _user()


@pytest.mark.parametrize(
    ("node", "message"),
    [
        ({"type": "string"}, r"Column value is of Connect type struct, but .* says string"),
        ({"fields": [{"field": "nope"}]}, r"declares field\(s\) nope, which the column"),
        (
            {"fields": [{"field": "id", "name": logical.TIMESTAMP}]},
            r"Column value\.id is int64: its connect\.schema cannot name it",
        ),
        (
            {"fields": [{"field": "at", "name": "x"}]},
            r"Column value\.at is org\.apache\.kafka\.connect\.data\.Timestamp",
        ),
        ("{", r"The connect\.schema of column value is not JSON"),
        ([1], r"must be a JSON object"),
    ],
)
def test_a_declared_schema_cannot_change_types(node: Any, message: str) -> None:
    with pytest.raises(ConnectError, match=message):
        declared_schema(_user(), node, "value")


def test_a_declared_schema_reaches_array_items_and_map_values() -> None:
    kind = pa.struct(
        [("tags", pa.list_(pa.string())), ("counts", pa.map_(pa.string(), pa.int32()))]
    )
    node = {
        "fields": [
            {"field": "tags", "items": {"optional": False}},
            {"field": "counts", "keys": {"optional": False}, "values": {"doc": "n"}},
        ]
    }
    schema = declared_schema(connect_schema(kind, "value"), node, "value")
    assert schema is not None
    fields = {f.name: f.schema for f in schema.fields}
    assert fields["tags"].value_schema is not None and not fields["tags"].value_schema.optional
    counts = fields["counts"]
    assert counts.key_schema is not None and not counts.key_schema.optional
    assert counts.value_schema is not None and counts.value_schema.doc == "n"


def test_column_values_are_connect_values_row_by_row() -> None:
    kind = pa.struct(
        [
            ("id", pa.int64()),
            ("at", pa.timestamp("us", tz="UTC")),
            ("tags", pa.list_(pa.string())),
            ("inner", pa.struct([("x", pa.float64())])),
        ]
    )
    at = dt.datetime(2026, 11, 28, 1, 2, 3)
    rows = [
        {"id": 1, "at": at, "tags": ["a"], "inner": {"x": 1.5}},
        None,
        {"id": 3, "at": None, "tags": None, "inner": None},
    ]
    array = pa.array(rows, kind)
    schema = connect_schema(kind, "value")
    got = column_values(array, schema)
    assert got == [connect_value(row, schema) for row in array.to_pylist()]
    assert got[1] is None and got[0].get("at") == at.replace(tzinfo=dt.UTC)
    assert got[0].get("inner").get("x") == 1.5 and got[2].get("inner") is None
    empty = pa.array([{}, {}], pa.struct([]))
    assert [v.as_dict() for v in column_values(empty, connect_schema(empty.type, "key"))] == [
        {},
        {},
    ]
    assert column_values(pa.array([None, None]), None) == [None, None]
