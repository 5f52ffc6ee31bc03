"""Cast: Kafka's CastTest cases, plus Java's casting rules (wrap-around, parsing, toString)."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pytest

from connect_lite.api import (
    ConfigError,
    DataError,
    Schema,
    SchemaBuilder,
    SchemaType,
    SinkRecord,
    SourceRecord,
    Struct,
    logical,
)
from connect_lite.plugins.registry import Plugins
from connect_lite.plugins.types import PluginType
from connect_lite.transforms.cast import (
    CastKey,
    CastValue,
    cast_value,
    format_java_date,
    java_double_str,
    java_float_str,
    to_float32,
)

DAY = dt.date(1970, 1, 2)


def value_xform(spec: str, **extra: str) -> CastValue:
    xform = CastValue()
    xform.configure({"spec": spec, **extra})
    return xform


def key_xform(spec: str) -> CastKey:
    xform = CastKey()
    xform.configure({"spec": spec})
    return xform


def value_record(schema: Schema | None, value: Any) -> SourceRecord:
    return SourceRecord(None, None, "topic", value, kafka_partition=0, value_schema=schema)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "Must specify at least one field to cast."),
        ("foo:faketype", "Invalid type found in casting spec: faketype"),
        ("foo:array", "Cast transformation does not support casting to ARRAY"),
        ("foo:bytes", "Cast transformation does not support casting to BYTES"),
        ("foo:int8:extra", "Invalid rename mapping: foo:int8:extra"),
        ("foo:int8,int32", "may ony specify a single cast in their spec"),
        ("faketype", "No enum constant org.apache.kafka.connect.data.Schema.Type.FAKETYPE"),
    ],
)
def test_config_errors(spec: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        key_xform(spec)


def test_config_error_lists_supported_types() -> None:
    with pytest.raises(ConfigError) as info:
        key_xform("foo:bytes")
    assert str(info.value) == (
        "Cast transformation does not support casting to BYTES; supported types are "
        "[INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]"
    )
    with pytest.raises(ConfigError, match='Missing required configuration "spec"'):
        CastValue().configure({})


def test_null_values_and_keys_pass_through() -> None:
    value = value_xform("foo:int64")
    with_schema = SourceRecord(
        None, None, "topic", None, "key", 0, Schema.STRING_SCHEMA, Schema.STRING_SCHEMA
    )
    assert value.apply(with_schema) is with_schema
    schemaless = SourceRecord(None, None, "topic", None, "key", 0, Schema.STRING_SCHEMA)
    assert value.apply(schemaless) is schemaless
    key = key_xform("foo:int64")
    null_key = SourceRecord(None, None, "topic", "value", None, 0, Schema.STRING_SCHEMA)
    assert key.apply(null_key) is null_key


def test_whole_key_with_schema() -> None:
    record = SourceRecord(
        None, None, "topic", "bogus", 42, 0, Schema.INT32_SCHEMA, Schema.STRING_SCHEMA
    )
    transformed = key_xform("int8").apply(record)
    assert transformed.key_schema.type is SchemaType.INT8
    assert transformed.key == 42
    assert transformed.value == "bogus"


@pytest.mark.parametrize(
    ("spec", "value", "expected_type", "expected"),
    [
        ("int8", 42, SchemaType.INT8, 42),
        ("int16", 42, SchemaType.INT16, 42),
        ("int32", 42, SchemaType.INT32, 42),
        ("int64", 42, SchemaType.INT64, 42),
        ("float32", 42, SchemaType.FLOAT32, 42.0),
        ("float64", 42, SchemaType.FLOAT64, 42.0),
        ("boolean", 42, SchemaType.BOOLEAN, True),
        ("boolean", 0, SchemaType.BOOLEAN, False),
        ("string", 42, SchemaType.STRING, "42"),
    ],
)
def test_whole_value_with_schema_and_schemaless(
    spec: str, value: int, expected_type: SchemaType, expected: Any
) -> None:
    xform = value_xform(spec)
    transformed = xform.apply(value_record(Schema.INT32_SCHEMA, value))
    assert transformed.value_schema.type is expected_type
    assert transformed.value == expected and type(transformed.value) is type(expected)
    schemaless = xform.apply(value_record(None, value))
    assert schemaless.value_schema is None
    assert schemaless.value == expected and type(schemaless.value) is type(expected)


def test_whole_logical_values_to_string() -> None:
    xform = value_xform("string")
    decimal_record = value_record(logical.decimal_schema(0), decimal.Decimal(42))
    assert xform.apply(decimal_record).value == "42"
    stamp = logical.millis_to_timestamp(86_400_001)
    transformed = xform.apply(value_record(logical.timestamp_schema(), stamp))
    assert transformed.value_schema.type is SchemaType.STRING
    # as Kafka's copySchemaBasics, the whole-value cast keeps the schema's name
    assert transformed.value_schema.name == logical.TIMESTAMP
    assert transformed.value == "1970-01-02T00:00:00.001Z"


def test_whole_value_default_is_cast() -> None:
    schema = SchemaBuilder(SchemaType.FLOAT32).default_value(-42.125).build()
    transformed = value_xform("int32").apply(value_record(schema, 42.125))
    assert transformed.value_schema.type is SchemaType.INT32
    assert transformed.value == 42
    assert transformed.value_schema.default == -42


def test_whole_value_unsupported_schemaless_types() -> None:
    with pytest.raises(DataError, match="does not support casting from ARRAY"):
        value_xform("int8").apply(value_record(None, ["foo"]))
    with pytest.raises(DataError, match="which is not supported by Connect's data API"):
        value_xform("int8").apply(value_record(None, dt.datetime(2020, 1, 1)))


def test_logical_to_primitive() -> None:
    spec = (
        "date_to_int32:int32,timestamp_to_int64:int64,time_to_int64:int64,"
        "decimal_to_int32:int32,timestamp_to_float64:float64,null_timestamp_to_int32:int32"
    )
    schema = (
        SchemaBuilder.struct()
        .field("date_to_int32", logical.date_schema())
        .field("timestamp_to_int64", logical.timestamp_schema())
        .field("time_to_int64", logical.time_schema())
        .field("decimal_to_int32", logical.decimal_schema(0))
        .field("timestamp_to_float64", logical.timestamp_schema())
        .field("null_timestamp_to_int32", logical.timestamp_schema(optional=True))
        .build()
    )
    value = Struct(
        schema,
        {
            "date_to_int32": DAY,
            "timestamp_to_int64": logical.millis_to_timestamp(0),
            "time_to_int64": dt.time(0, 0, 0, 1000),
            "decimal_to_int32": decimal.Decimal(2**31),
            "timestamp_to_float64": logical.millis_to_timestamp(253_402_300_799_999),
            "null_timestamp_to_int32": None,
        },
    )
    out = value_xform(spec).apply(value_record(schema, value)).value
    assert out["date_to_int32"] == 1
    assert out["timestamp_to_int64"] == 0
    assert out["time_to_int64"] == 1
    assert out["decimal_to_int32"] == -(2**31)  # Integer.MIN_VALUE, as Kafka
    assert out["timestamp_to_float64"] == 2.53402300799999e14
    assert out["null_timestamp_to_int32"] is None
    types = {f.name: f.schema.type for f in out.schema.fields}
    assert types == {
        "date_to_int32": SchemaType.INT32,
        "timestamp_to_int64": SchemaType.INT64,
        "time_to_int64": SchemaType.INT64,
        "decimal_to_int32": SchemaType.INT32,
        "timestamp_to_float64": SchemaType.FLOAT64,
        "null_timestamp_to_int32": SchemaType.INT32,
    }


def test_logical_to_string() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("date", logical.date_schema())
        .field("decimal", logical.decimal_schema(0))
        .field("time", logical.time_schema())
        .field("timestamp", logical.timestamp_schema())
        .build()
    )
    stamp = dt.datetime(2024, 5, 17, 8, 30, 15, 123456, tzinfo=dt.UTC)
    value = Struct(
        schema,
        {"date": DAY, "decimal": decimal.Decimal(1982), "time": dt.time(1), "timestamp": stamp},
    )
    out = value_xform("date:string,decimal:string,time:string,timestamp:string").apply(
        value_record(schema, value)
    )
    assert out.value.as_dict() == {
        "date": "1970-01-02",
        "decimal": "1982",
        "time": "01:00:00.000Z",
        "timestamp": "2024-05-17T08:30:15.123Z",
    }
    assert {f.schema.type for f in out.value_schema.fields} == {SchemaType.STRING}


def test_fields_with_schema() -> None:
    spec = (
        "int8:int16,int16:int32,int32:int64,int64:boolean,float32:float64,float64:boolean,"
        "boolean:int8,string:int32,bigdecimal:string,date:string,optional:int32,bytes:string"
    )
    schema = (
        SchemaBuilder.struct()
        .field("int8", Schema.INT8_SCHEMA)
        .field("int16", Schema.OPTIONAL_INT16_SCHEMA)
        .field("int32", SchemaBuilder(SchemaType.INT32).default_value(2).build())
        .field("int64", Schema.INT64_SCHEMA)
        .field("float32", Schema.FLOAT32_SCHEMA)
        .field("float64", SchemaBuilder(SchemaType.FLOAT64).default_value(-1.125).build())
        .field("boolean", Schema.BOOLEAN_SCHEMA)
        .field("string", Schema.STRING_SCHEMA)
        .field("bigdecimal", logical.decimal_schema(0))
        .field("date", logical.date_schema())
        .field("optional", Schema.OPTIONAL_FLOAT32_SCHEMA)
        .field("timestamp", logical.timestamp_schema())
        .field("bytes", Schema.BYTES_SCHEMA)
        .build()
    )
    epoch = logical.millis_to_timestamp(0)
    value = Struct(
        schema,
        {
            "int8": 8,
            "int16": 16,
            "int32": 32,
            "int64": 64,
            "float32": 32.0,
            "float64": -64.0,
            "boolean": True,
            "string": "42",
            "bigdecimal": decimal.Decimal(42),
            "date": DAY,
            "timestamp": epoch,
            "bytes": bytes([0xFE, 0xDC, 0xBA, 0x98, 0x76, 0x54, 0x32, 0x10]),
        },
    )
    out = value_xform(spec).apply(value_record(schema, value)).value
    assert out.as_dict() == {
        "int8": 8,
        "int16": 16,
        "int32": 32,
        "int64": True,
        "float32": 32.0,
        "float64": True,
        "boolean": 1,
        "string": 42,
        "bigdecimal": "42",
        "date": "1970-01-02",
        "optional": None,
        "timestamp": epoch,
        "bytes": "/ty6mHZUMhA=",
    }
    fields = {f.name: f.schema for f in out.schema.fields}
    assert fields["int16"].optional and fields["int16"].type is SchemaType.INT32
    assert fields["int32"].default == 2 and fields["int32"].type is SchemaType.INT64
    assert fields["float64"].default is True
    assert fields["optional"].type is SchemaType.INT32 and fields["optional"].optional
    assert fields["timestamp"] == logical.timestamp_schema()


def test_fields_schemaless() -> None:
    spec = (
        "int8:int16,int16:int32,int32:int64,int64:boolean,float32:float64,float64:boolean,"
        "boolean:int8,string:int32"
    )
    value = {
        "int8": 8,
        "int16": 16,
        "int32": 32,
        "int64": 64,
        "float32": 32.0,
        "float64": -64.0,
        "boolean": True,
        "string": "42",
    }
    transformed = value_xform(spec).apply(value_record(None, value))
    assert transformed.value_schema is None
    assert transformed.value == {
        "int8": 8,
        "int16": 16,
        "int32": 32,
        "int64": True,
        "float32": 32.0,
        "float64": True,
        "boolean": 1,
        "string": 42,
    }
    assert type(transformed.value["boolean"]) is int
    assert value["int64"] == 64  # the input is not modified


def test_schemaless_missing_field_becomes_null() -> None:
    assert value_xform("foo:int32").apply(value_record(None, {"a": 1})).value == {
        "a": 1,
        "foo": None,
    }


def test_replace_null_with_default() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("n", SchemaBuilder(SchemaType.INT32).optional().default_value(7).build())
        .build()
    )
    value = Struct(schema, {"n": None})
    assert value_xform("n:string").apply(value_record(schema, value)).value["n"] == "7"
    kept_null = value_xform("n:string", **{"replace.null.with.default": "false"})
    assert kept_null.apply(value_record(schema, value)).value.as_dict() == {"n": None}


def test_struct_required_for_field_casts_with_schema() -> None:
    with pytest.raises(DataError, match=r"Only Struct objects supported for \[cast types\]"):
        value_xform("foo:int8").apply(value_record(Schema.INT32_SCHEMA, 5))
    with pytest.raises(DataError, match=r"Only Map objects supported"):
        value_xform("foo:int8").apply(value_record(None, 5))


@pytest.mark.parametrize(
    ("value", "target", "expected"),
    [
        (300, SchemaType.INT8, 44),  # Java's (byte) 300
        (-129, SchemaType.INT8, 127),
        (70000, SchemaType.INT16, 4464),
        (2**31, SchemaType.INT32, -(2**31)),
        (2**63, SchemaType.INT64, -(2**63)),
        (3.99, SchemaType.INT32, 3),
        (-3.99, SchemaType.INT32, -3),
        (1e20, SchemaType.INT32, 2**31 - 1),  # float-to-int saturates
        (1e20, SchemaType.INT8, -1),  # ... then (byte) wraps
        (float("nan"), SchemaType.INT64, 0),
        (True, SchemaType.INT16, 1),
        ("-12", SchemaType.INT8, -12),
        ("+12", SchemaType.INT64, 12),
        (0.5, SchemaType.BOOLEAN, False),  # longValue() != 0
        ("TRUE", SchemaType.BOOLEAN, True),
        ("yes", SchemaType.BOOLEAN, False),
        ("1.5f", SchemaType.FLOAT64, 1.5),
        (" 2.5 ", SchemaType.FLOAT64, 2.5),
        ("Infinity", SchemaType.FLOAT64, float("inf")),
        (0.1, SchemaType.FLOAT32, to_float32(0.1)),
        (1e40, SchemaType.FLOAT32, float("inf")),
        (False, SchemaType.FLOAT64, 0.0),
        (1e10, SchemaType.STRING, "1.0E10"),
        (0.0001, SchemaType.STRING, "1.0E-4"),
        (123.5, SchemaType.STRING, "123.5"),
        (True, SchemaType.STRING, "true"),
        (b"\x00\x01", SchemaType.STRING, "AAE="),
    ],
)
def test_java_casting_rules(value: Any, target: SchemaType, expected: Any) -> None:
    result = cast_value(None, value, target)
    assert result == expected and type(result) is type(expected)


@pytest.mark.parametrize(
    "value",
    ["128", "1.5", " 1", "", "0x10", "\u0661"],
)
def test_unparseable_or_out_of_range_strings(value: str) -> None:
    with pytest.raises(DataError, match=r"was out of range for requested data type"):
        cast_value(None, value, SchemaType.INT8)


def test_decimal_casts_like_big_decimal() -> None:
    schema = logical.decimal_schema(1)
    assert cast_value(schema, decimal.Decimal("1.5"), SchemaType.BOOLEAN) is True
    assert cast_value(schema, decimal.Decimal("0.5"), SchemaType.BOOLEAN) is False
    assert cast_value(schema, b"\x0f", SchemaType.FLOAT64) == 1.5  # encoded unscaled bytes
    with pytest.raises(DataError, match=r"class java\.math\.BigDecimal which is not supported"):
        cast_value(None, decimal.Decimal(1), SchemaType.INT8)


def test_bytes_only_cast_to_string() -> None:
    with pytest.raises(DataError, match=r"Unexpected type in Cast transformation: class \[B"):
        cast_value(Schema.BYTES_SCHEMA, b"x", SchemaType.INT32)


def test_float32_values_keep_java_float_semantics() -> None:
    assert cast_value(Schema.FLOAT32_SCHEMA, 0.1, SchemaType.STRING) == "0.1"
    assert cast_value(Schema.FLOAT32_SCHEMA, 0.1, SchemaType.FLOAT64) == to_float32(0.1)
    assert java_float_str(to_float32(3.4e38)) == "3.4E38"
    assert java_double_str(-0.0) == "-0.0" and java_double_str(1234567.0) == "1234567.0"
    assert java_double_str(12345678.9) == "1.23456789E7"


def test_java_date_format_choice() -> None:
    assert format_java_date(0) == "00:00:00.000Z"  # before one day: a time
    assert format_java_date(86_400_000 * 3) == "1970-01-04"  # midnight: a date
    assert format_java_date(86_400_000 + 5) == "1970-01-02T00:00:00.005Z"


def test_sink_records_and_key_value_forms() -> None:
    record = SinkRecord("t", 0, 1, {"k": "5"}, {"v": "6"})
    assert key_xform("k:int32").apply(record).key == {"k": 5}
    assert value_xform("v:int32").apply(record).value == {"v": 6}


def test_registry_resolves_java_and_short_names() -> None:
    plugins = Plugins([])
    for name, cls in [
        ("org.apache.kafka.connect.transforms.Cast$Value", CastValue),
        ("Cast$Value", CastValue),
        ("org.apache.kafka.connect.transforms.Cast$Key", CastKey),
        ("Cast$Key", CastKey),
    ]:
        assert plugins.find(name, [PluginType.TRANSFORMATION]).cls is cls
