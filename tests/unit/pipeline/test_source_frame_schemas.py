"""A poll_dataframe frame's key and value types as Connect schemas, and its values as Connect
values: what the converters then serialize."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa
import pytest

from connect_lite.api import logical
from connect_lite.api.data import Schema, SchemaBuilder, SchemaType, Struct
from connect_lite.api.errors import ConnectError
from connect_lite.pipeline.source_frames import connect_schema, connect_value


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
