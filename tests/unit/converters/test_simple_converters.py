"""StringConverter, ByteArrayConverter and SimpleHeaderConverter."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest

from connect_lite.api import ConfigError, DataError, Schema, SchemaBuilder, Struct, logical
from connect_lite.converters.bytearray import ByteArrayConverter
from connect_lite.converters.simple_header import SimpleHeaderConverter
from connect_lite.converters.string import StringConverter
from connect_lite.converters.values import java_double

S = Schema


def test_string_converter_round_trip_and_java_strings() -> None:
    converter = StringConverter()
    converter.configure({}, is_key=True)
    assert converter.from_connect_data("t", S.STRING_SCHEMA, "héllo") == "héllo".encode()
    assert converter.to_connect_data("t", "héllo".encode()).value == "héllo"
    assert converter.to_connect_data("t", b"x").schema == S.OPTIONAL_STRING_SCHEMA
    assert converter.from_connect_data("t", None, True) == b"true"
    assert converter.from_connect_data("t", None, 1e20) == b"1.0E20"
    assert converter.from_connect_data("t", None, None) is None
    assert converter.to_connect_data("t", None).value is None
    assert converter.from_connect_header("t", "h", None, 5) == b"5"
    assert converter.to_connect_header("t", "h", b"5").value == "5"


def test_string_converter_encoding() -> None:
    converter = StringConverter()
    converter.configure({"converter.encoding": "UTF-16"})
    data = converter.from_connect_data("t", None, "ab")
    assert data == "ab".encode("utf-16")
    assert converter.to_connect_data("t", data).value == "ab"
    with pytest.raises(ConfigError):
        converter.configure({"converter.encoding": "no-such-charset"})


def test_byte_array_converter() -> None:
    converter = ByteArrayConverter()
    assert converter.from_connect_data("t", S.BYTES_SCHEMA, b"\x00\x01") == b"\x00\x01"
    assert converter.from_connect_data("t", None, bytearray(b"ab")) == b"ab"
    assert converter.from_connect_data("t", None, None) is None
    assert converter.to_connect_data("t", b"z").schema == S.OPTIONAL_BYTES_SCHEMA
    assert converter.to_connect_header("t", "h", b"z").value == b"z"
    with pytest.raises(DataError, match="Invalid schema type for ByteArrayConverter: STRING"):
        converter.from_connect_data("t", S.STRING_SCHEMA, b"x")
    with pytest.raises(DataError, match="not compatible with objects of type str"):
        converter.from_connect_data("t", None, "x")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.0, "1.0"),
        (100.5, "100.5"),
        (0.001, "0.001"),
        (12345678.0, "1.2345678E7"),
        (1.5e-7, "1.5E-7"),
        (-2e20, "-2.0E20"),
        (float("nan"), "NaN"),
    ],
)
def test_java_double(value: float, expected: str) -> None:
    assert java_double(value) == expected


HEADER_FORMS: list[tuple[Any, bytes]] = [
    ("plain text", b"plain text"),
    (True, b"true"),
    (42, b"42"),
    (2.5, b"2.5"),
    (Decimal("1.50"), b"1.50"),
    (b"\x01\x02", b"AQI="),
    ([1, 'a"b', None], b'[1,"a\\"b",null]'),
    ({"k": [True], "n": 1}, b'{"k":[true],"n":1}'),
    (dt.date(2024, 1, 31), b"2024-01-31"),
    (dt.time(13, 45, 0, 123000), b"13:45:00.123Z"),
    (dt.datetime(2024, 1, 31, 13, 45, tzinfo=dt.UTC), b"2024-01-31T13:45:00.000Z"),
]


@pytest.mark.parametrize(("value", "expected"), HEADER_FORMS)
def test_simple_header_converter_writes_values_string_form(value: Any, expected: bytes) -> None:
    assert SimpleHeaderConverter().from_connect_header("t", "h", None, value) == expected


def test_simple_header_converter_writes_structs_like_maps() -> None:
    schema = SchemaBuilder.struct().field("a", S.INT32_SCHEMA).field("b", S.STRING_SCHEMA).build()
    data = SimpleHeaderConverter().from_connect_header(
        "t", "h", schema, Struct(schema, {"a": 1, "b": "x"})
    )
    assert data == b'{"a":1,"b":"x"}'


@pytest.mark.parametrize(
    ("text", "schema", "value"),
    [
        (b"", S.STRING_SCHEMA, ""),
        (b"hello world", S.STRING_SCHEMA, "hello world"),
        (b"TRUE", S.BOOLEAN_SCHEMA, True),
        (b"null", None, None),
        (b"127", S.INT8_SCHEMA, 127),
        (b"128", S.INT16_SCHEMA, 128),
        (b"-40000", S.INT32_SCHEMA, -40000),
        (b"3000000000", S.INT64_SCHEMA, 3_000_000_000),
        (b"1.0", S.INT8_SCHEMA, 1),
        (b"2.5", S.FLOAT32_SCHEMA, 2.5),
        (b"1e300", S.FLOAT64_SCHEMA, 1e300),
        (b"1.5e300", S.FLOAT64_SCHEMA, 1.5e300),
        (b"2024-01-31", logical.date_schema(), dt.date(2024, 1, 31)),
        (b"13:45:00.123Z", logical.time_schema(), dt.time(13, 45, 0, 123000)),
        (
            b"2024-01-31T13:45:00.000Z",
            logical.timestamp_schema(),
            dt.datetime(2024, 1, 31, 13, 45, tzinfo=dt.UTC),
        ),
        (b"[1,2,3]", SchemaBuilder.array(S.INT8_SCHEMA).build(), [1, 2, 3]),
        (b'[1,"a"]', None, [1, "a"]),
        (b'{"a":true}', SchemaBuilder.map(S.STRING_SCHEMA, S.BOOLEAN_SCHEMA).build(), {"a": True}),
        (b"[not json", S.STRING_SCHEMA, "[not json"),
    ],
)
def test_simple_header_converter_parses_with_inference(
    text: bytes, schema: Schema | None, value: Any
) -> None:
    parsed = SimpleHeaderConverter().to_connect_header("t", "h", text)
    assert (parsed.schema, parsed.value) == (schema, value)


def test_simple_header_converter_round_trips_and_nulls() -> None:
    converter = SimpleHeaderConverter()
    for value in ("text", True, 7, -3.25, [1, 2], {"a": "b"}, dt.date(2000, 1, 1)):
        data = converter.from_connect_header("t", "h", None, value)
        assert converter.to_connect_header("t", "h", data).value == value
    assert converter.from_connect_header("t", "h", S.OPTIONAL_STRING_SCHEMA, None) is None
    assert converter.to_connect_header("t", "h", None).value is None
    with pytest.raises(DataError):
        converter.to_connect_header("t", "h", b"\xff\xfe")
