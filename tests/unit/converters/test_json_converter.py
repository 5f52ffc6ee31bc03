"""JsonConverter: Kafka's exact bytes for known cases, and round trips for every schema type."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any

import pytest

from connect_lite.api import (
    ConfigError,
    DataError,
    Schema,
    SchemaBuilder,
    SchemaType,
    Struct,
    logical,
)
from connect_lite.converters.json import JsonConverter

S = Schema


def _converter(**config: str) -> JsonConverter:
    converter = JsonConverter()
    converter.configure(dict(config), is_key=False)
    return converter


ADDRESS = SchemaBuilder.struct().name("Address").field("city", S.STRING_SCHEMA).build()
PERSON = (
    SchemaBuilder.struct()
    .name("com.example.Person")
    .version(3)
    .field("name", S.STRING_SCHEMA)
    .field("age", S.OPTIONAL_INT32_SCHEMA)
    .field("tags", SchemaBuilder.array(S.STRING_SCHEMA).build())
    .field("homes", SchemaBuilder.array(ADDRESS).optional().build())
    .field("scores", SchemaBuilder.map(S.STRING_SCHEMA, S.FLOAT64_SCHEMA).build())
    .field("by_id", SchemaBuilder.map(S.INT64_SCHEMA, ADDRESS).optional().build())
    .field("photo", S.OPTIONAL_BYTES_SCHEMA)
    .build()
)
PERSON_VALUE = Struct(
    PERSON,
    {
        "name": "Ann",
        "age": 41,
        "tags": ["a", "b"],
        "homes": [Struct(ADDRESS, {"city": "Oslo"})],
        "scores": {"x": 1.5},
        "by_id": {7: Struct(ADDRESS, {"city": "Rome"})},
        "photo": b"\x00\xff",
    },
)

ROUND_TRIPS: list[tuple[Schema, Any]] = [
    (S.INT8_SCHEMA, -128),
    (S.INT16_SCHEMA, 32767),
    (S.INT32_SCHEMA, -(2**31)),
    (S.INT64_SCHEMA, 2**63 - 1),
    (S.FLOAT32_SCHEMA, 1.5),
    (S.FLOAT64_SCHEMA, -2.25e100),
    (S.BOOLEAN_SCHEMA, True),
    (S.STRING_SCHEMA, 'häll"o\n'),
    (S.BYTES_SCHEMA, bytes(range(256))),
    (S.OPTIONAL_STRING_SCHEMA, None),
    (SchemaBuilder.array(S.OPTIONAL_INT32_SCHEMA).build(), [1, None, 3]),
    (SchemaBuilder.map(S.STRING_SCHEMA, S.BOOLEAN_SCHEMA).build(), {"a": True}),
    (SchemaBuilder.map(S.INT32_SCHEMA, S.STRING_SCHEMA).build(), {1: "one", 2: "two"}),
    (logical.decimal_schema(2), Decimal("-12345678901234567890123.45")),
    (logical.date_schema(), dt.date(2024, 2, 29)),
    (logical.time_schema(), dt.time(23, 59, 58, 123000)),
    (logical.timestamp_schema(), dt.datetime(2024, 1, 2, 3, 4, 5, 6000, tzinfo=dt.UTC)),
    (PERSON, PERSON_VALUE),
]


@pytest.mark.parametrize(("schema", "value"), ROUND_TRIPS)
@pytest.mark.parametrize("decimal_format", ["BASE64", "NUMERIC"])
def test_round_trip_with_schema(schema: Schema, value: Any, decimal_format: str) -> None:
    converter = _converter(**{"decimal.format": decimal_format})
    data = converter.from_connect_data("t", schema, value)
    assert data is not None
    back = _converter().to_connect_data("t", data)  # a fresh instance: no shared cache
    assert back.schema == schema
    assert back.value == value
    assert converter.to_connect_data("t", data) == back  # again, through the cached path


@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        (S.STRING_SCHEMA, "hi", b'{"schema":{"type":"string","optional":false},"payload":"hi"}'),
        (S.OPTIONAL_INT32_SCHEMA, 42, b'{"schema":{"type":"int32","optional":true},"payload":42}'),
        (
            S.OPTIONAL_STRING_SCHEMA,
            None,
            b'{"schema":{"type":"string","optional":true},"payload":null}',
        ),
        (
            S.BYTES_SCHEMA,
            b"hello",
            b'{"schema":{"type":"bytes","optional":false},"payload":"aGVsbG8="}',
        ),
        (None, {"a": [1, 2.5, None]}, b'{"schema":null,"payload":{"a":[1,2.5,null]}}'),
        (S.FLOAT64_SCHEMA, 2.5, b'{"schema":{"type":"double","optional":false},"payload":2.5}'),
        (
            SchemaBuilder.array(S.OPTIONAL_FLOAT32_SCHEMA).build(),
            [1.5],
            b'{"schema":{"type":"array","items":{"type":"float","optional":true},'
            b'"optional":false},"payload":[1.5]}',
        ),
        (
            logical.decimal_schema(2),
            Decimal("1.56"),
            b'{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.'
            b'Decimal","version":1,"parameters":{"scale":"2"}},"payload":"AJw="}',
        ),
        (
            SchemaBuilder.struct().name("ksql.users").field("id", S.INT64_SCHEMA).build(),
            None,
            None,
        ),
    ],
)
def test_known_kafka_bytes(schema: Schema | None, value: Any, expected: bytes | None) -> None:
    if expected is None:  # a required struct cannot be null
        with pytest.raises(DataError, match="null value for field that is required"):
            _converter().from_connect_data("t", schema, value)
        return
    assert _converter().from_connect_data("t", schema, value) == expected


def test_struct_and_metadata_keys_come_in_kafkas_order() -> None:
    number = (
        SchemaBuilder.of(SchemaType.INT32)
        .optional()
        .name("n")
        .version(2)
        .doc("d")
        .parameter("p", "v")
        .default_value(5)
        .build()
    )
    schema = SchemaBuilder.struct().name("rec").field("n", number).build()
    data = _converter().from_connect_data("t", schema, Struct(schema, {"n": 7}))
    assert data == (
        b'{"schema":{"type":"struct","fields":[{"type":"int32","optional":true,"name":"n",'
        b'"version":2,"doc":"d","parameters":{"p":"v"},"default":5,"field":"n"}],'
        b'"optional":false,"name":"rec"},"payload":{"n":7}}'
    )
    assert _converter().to_connect_data("t", data).schema == schema


def test_decimal_numeric_and_logical_payloads() -> None:
    numeric = _converter(**{"decimal.format": "numeric"})
    data = numeric.from_connect_data("t", logical.decimal_schema(2), Decimal("1.5"))
    assert data is not None and data.endswith(b',"payload":1.50}')
    date = b'{"schema":{"type":"int32","name":"org.apache.kafka.connect.data.Date","version":1},'
    assert _converter().to_connect_data("t", date + b'"payload":10000}').value == dt.date(
        1997, 5, 19
    )
    stamp = _converter().from_connect_data("t", logical.timestamp_schema(), dt.datetime(1970, 1, 2))
    assert stamp is not None and stamp.endswith(b',"payload":86400000}')


def test_schemaless_writes_plain_json_and_reads_without_schema() -> None:
    plain = _converter(**{"schemas.enable": "false"})
    value = {"s": "x", "n": 1, "f": 0.5, "b": False, "l": [1, "a"], "none": None}
    data = plain.from_connect_data("t", None, value)
    assert data == b'{"s":"x","n":1,"f":0.5,"b":false,"l":[1,"a"],"none":null}'
    assert plain.to_connect_data("t", data).schema is None
    assert plain.to_connect_data("t", data).value == value
    assert plain.from_connect_data("t", None, {1: "a"}) == b'[[1,"a"]]'
    assert plain.from_connect_data("t", S.STRING_SCHEMA, "x") == b'"x"'
    assert plain.from_connect_data("t", None, None) is None
    assert plain.to_connect_data("t", None).value is None


def test_null_and_default_handling() -> None:
    with_default = SchemaBuilder.of(SchemaType.STRING).optional().default_value("dflt").build()
    assert _converter().from_connect_data("t", with_default, None).endswith(b'"payload":"dflt"}')
    keep = _converter(**{"replace.null.with.default": "false"})
    assert keep.from_connect_data("t", with_default, None).endswith(b'"payload":null}')
    envelope = b'{"schema":{"type":"string","optional":true,"default":"dflt"},"payload":null}'
    assert _converter().to_connect_data("t", envelope).value == "dflt"
    assert keep.to_connect_data("t", envelope).value is None
    with pytest.raises(DataError, match="Invalid null value for required STRING field"):
        _converter().to_connect_data("t", b'{"schema":{"type":"string"},"payload":null}')
    assert _converter().from_connect_data("t", None, None) is None
    assert _converter().to_connect_data("t", None).schema is None


def test_bad_input_is_a_data_error() -> None:
    converter = _converter()
    with pytest.raises(DataError, match='requires "schema" and "payload" fields'):
        converter.to_connect_data("t", b'{"a":1}')
    with pytest.raises(DataError, match="serialization error"):
        converter.to_connect_data("t", b"{not json")
    with pytest.raises(DataError, match="Unknown schema type: nope"):
        converter.to_connect_data("t", b'{"schema":{"type":"nope"},"payload":1}')
    with pytest.raises(DataError, match="Invalid type for INT32"):
        converter.from_connect_data("t", S.INT32_SCHEMA, "1")
    with pytest.raises(DataError, match="Mismatching schema"):
        converter.from_connect_data("t", PERSON, Struct(ADDRESS, {"city": "x"}))
    with pytest.raises(DataError, match="mismatching scale"):
        converter.from_connect_data("t", logical.decimal_schema(1), Decimal("1.25"))
    with pytest.raises(ConfigError):
        _converter(**{"decimal.format": "HEX"})


def test_envelope_fast_path_rejects_bytes_that_only_share_the_prefix() -> None:
    converter = _converter()
    first = converter.from_connect_data("t", S.STRING_SCHEMA, "a")
    assert first is not None
    assert converter.to_connect_data("t", first).value == "a"
    extra = first[:-1] + b',"extra":1}'
    with pytest.raises(DataError, match='requires "schema" and "payload"'):
        converter.to_connect_data("t", extra)


def test_equal_schemas_built_per_record_share_one_cache_entry() -> None:
    converter = _converter()
    outputs = {
        converter.from_connect_data(
            "t",
            SchemaBuilder.struct().field("a", S.INT8_SCHEMA).build(),
            Struct(SchemaBuilder.struct().field("a", S.INT8_SCHEMA).build(), {"a": i}),
        )
        for i in range(3)
    }
    assert len(outputs) == 3
    assert len(converter._by_schema) == 1


def test_a_second_equal_schema_object_is_compared_once_not_per_record(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The records of a new batch carry a new (equal) schema object: it is looked up by value
    once, then by identity, with the first object's entry."""
    converter = _converter()
    built = [SchemaBuilder.struct().field("a", S.INT8_SCHEMA).build() for _ in range(2)]
    other = SchemaBuilder.struct().field("b", S.INT8_SCHEMA).build()
    compared: list[Any] = []
    by_equal = converter._by_equal_schema
    monkeypatch.setattr(
        converter, "_by_equal_schema", lambda schema: compared.append(schema) or by_equal(schema)
    )
    for schema in (*built, other):
        for i in range(3):
            converter.from_connect_data("t", schema, Struct(schema, {schema.fields[0].name: i}))
    assert compared == [built[0], built[1], other]  # each object once
    assert converter.from_connect_data("t", built[1], Struct(built[1], {"a": 7})) == (
        b'{"schema":{"type":"struct","fields":[{"type":"int8","optional":false,"field":"a"}],'
        b'"optional":false},"payload":{"a":7}}'
    )
    assert compared == [built[0], built[1], other]
    read = converter.to_connect_data(
        "t", converter.from_connect_data("t", other, Struct(other, {"b": 1}))
    )
    assert read.value.get("b") == 1  # reading resets what the last write found
    assert converter.from_connect_data("t", built[0], Struct(built[0], {"a": 1})) is not None


def test_header_converter_methods_use_the_same_format() -> None:
    converter = JsonConverter()
    converter.configure({"converter.type": "header"})
    data = converter.from_connect_header("t", "h", S.INT64_SCHEMA, 5)
    assert data == b'{"schema":{"type":"int64","optional":false},"payload":5}'
    assert converter.to_connect_header("t", "h", data).value == 5
    assert json.loads(data)["payload"] == 5
