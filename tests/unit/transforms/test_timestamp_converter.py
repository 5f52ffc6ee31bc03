"""TimestampConverter: Kafka's TimestampConverterTest cases, schemaless and with schemas."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from connect_lite.api import (
    ConfigError,
    ConnectError,
    DataError,
    Schema,
    SchemaBuilder,
    SourceRecord,
    Struct,
    logical,
)
from connect_lite.plugins.registry import Plugins
from connect_lite.plugins.types import PluginType
from connect_lite.transforms.timestamp_converter import (
    TimestampConverterKey,
    TimestampConverterValue,
)

UTC = dt.UTC
EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)
TIME = dt.time(0, 0, 1, 234000)
DATE = dt.date(1970, 1, 2)
DATE_PLUS_TIME = dt.datetime(1970, 1, 2, 0, 0, 1, 234000, tzinfo=UTC)
DATE_PLUS_TIME_UNIX = 86_401_234
DATE_PLUS_TIME_UNIX_MICROS = DATE_PLUS_TIME_UNIX * 1000 + 123
DATE_PLUS_TIME_UNIX_NANOS = DATE_PLUS_TIME_UNIX_MICROS * 1000 + 456
DATE_PLUS_TIME_UNIX_SECONDS = 86_401
STRING_DATE_FMT = "yyyy MM dd HH mm ss SSS z"
DATE_PLUS_TIME_STRING = "1970 01 02 00 00 01 234 UTC"

OPTIONAL_DATE = logical.date_schema(optional=True)
OPTIONAL_TIME = logical.time_schema(optional=True)
OPTIONAL_TIMESTAMP = logical.timestamp_schema(optional=True)


def value_xform(target: str, **extra: str) -> TimestampConverterValue:
    xform = TimestampConverterValue()
    xform.configure({"target.type": target, **{k.replace("_", "."): v for k, v in extra.items()}})
    return xform


def record(schema: Schema | None, value: Any) -> SourceRecord:
    return SourceRecord(None, None, "topic", value, kafka_partition=0, value_schema=schema)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({}, 'Missing required configuration "target.type"'),
        ({"target.type": "invalid"}, "String must be one of: string, unix, Date, Time, Timestamp"),
        ({"target.type": "unix", "unix.precision": "invalid"}, "String must be one of"),
        ({"target.type": "string"}, "requires format option to be specified"),
        ({"target.type": "string", "format": "  "}, "requires format option to be specified"),
        (
            {"target.type": "string", "format": "bad-format"},
            "TimestampConverter requires a SimpleDateFormat-compatible pattern for string "
            "timestamps: bad-format",
        ),
        ({"target.type": "string", "format": "YYYY"}, "not supported by connect-lite"),
        ({"target.type": "unix", "field.syntax.version": "V3"}, "field.syntax.version"),
    ],
)
def test_config_errors(config: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        TimestampConverterValue().configure(config)


def test_config_valid() -> None:
    xform = value_xform("unix", unix_precision="seconds")
    assert xform.settings["unix.precision"] == "seconds"
    assert xform.settings["replace.null.with.default"] is True
    assert xform.settings["field.syntax.version"] == "V1"


# schemaless: Timestamp -> other types


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("Timestamp", DATE_PLUS_TIME),
        ("Date", DATE),
        ("Time", TIME),
        ("unix", DATE_PLUS_TIME_UNIX),
        ("string", DATE_PLUS_TIME_STRING),
    ],
)
def test_schemaless_timestamp_to(target: str, expected: Any) -> None:
    transformed = value_xform(target, format=STRING_DATE_FMT).apply(record(None, DATE_PLUS_TIME))
    assert transformed.value_schema is None
    assert transformed.value == expected and type(transformed.value) is type(expected)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (DATE, dt.datetime(1970, 1, 2, tzinfo=UTC)),
        (TIME, dt.datetime(1970, 1, 1, 0, 0, 1, 234000, tzinfo=UTC)),
        (DATE_PLUS_TIME_UNIX, DATE_PLUS_TIME),
        (DATE_PLUS_TIME_STRING, DATE_PLUS_TIME),
    ],
)
def test_schemaless_to_timestamp(value: Any, expected: dt.datetime) -> None:
    transformed = value_xform("Timestamp", format=STRING_DATE_FMT).apply(record(None, value))
    assert transformed.value_schema is None
    assert transformed.value == expected


# with schema: Timestamp -> other types, other types -> Timestamp


@pytest.mark.parametrize(
    ("target", "schema", "expected"),
    [
        ("Timestamp", logical.timestamp_schema(), DATE_PLUS_TIME),
        ("Date", logical.date_schema(), DATE),
        ("Time", logical.time_schema(), TIME),
        ("unix", Schema.INT64_SCHEMA, DATE_PLUS_TIME_UNIX),
        ("string", Schema.STRING_SCHEMA, DATE_PLUS_TIME_STRING),
    ],
)
def test_with_schema_timestamp_to(target: str, schema: Schema, expected: Any) -> None:
    xform = value_xform(target, format=STRING_DATE_FMT)
    transformed = xform.apply(record(logical.timestamp_schema(), DATE_PLUS_TIME))
    assert transformed.value_schema == schema
    assert transformed.value == expected


@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        (logical.date_schema(), DATE, dt.datetime(1970, 1, 2, tzinfo=UTC)),
        (logical.time_schema(), TIME, dt.datetime(1970, 1, 1, 0, 0, 1, 234000, tzinfo=UTC)),
        (Schema.INT64_SCHEMA, DATE_PLUS_TIME_UNIX, DATE_PLUS_TIME),
        (Schema.STRING_SCHEMA, DATE_PLUS_TIME_STRING, DATE_PLUS_TIME),
        (logical.date_schema(), 1, dt.datetime(1970, 1, 2, tzinfo=UTC)),  # encoded days
    ],
)
def test_with_schema_to_timestamp(schema: Schema, value: Any, expected: dt.datetime) -> None:
    transformed = value_xform("Timestamp", format=STRING_DATE_FMT).apply(record(schema, value))
    assert transformed.value_schema == logical.timestamp_schema()
    assert transformed.value == expected


TARGET_SCHEMAS = {
    "Timestamp": OPTIONAL_TIMESTAMP,
    "unix": Schema.OPTIONAL_INT64_SCHEMA,
    "Time": OPTIONAL_TIME,
    "Date": OPTIONAL_DATE,
    "string": Schema.OPTIONAL_STRING_SCHEMA,
}
SOURCE_SCHEMAS = [
    Schema.OPTIONAL_INT64_SCHEMA,
    OPTIONAL_TIME,
    OPTIONAL_DATE,
    Schema.OPTIONAL_STRING_SCHEMA,
    OPTIONAL_TIMESTAMP,
]


@pytest.mark.parametrize("target", list(TARGET_SCHEMAS))
def test_schemaless_null_value_and_field(target: str) -> None:
    for extra in ({}, {"field": "ts"}):
        xform = value_xform(target, format=STRING_DATE_FMT, **extra)
        transformed = xform.apply(record(None, None))
        assert transformed.value_schema is None and transformed.value is None


@pytest.mark.parametrize("target", list(TARGET_SCHEMAS))
@pytest.mark.parametrize("source", SOURCE_SCHEMAS)
def test_with_schema_null_value(target: str, source: Schema) -> None:
    transformed = value_xform(target, format=STRING_DATE_FMT).apply(record(source, None))
    assert transformed.value_schema == TARGET_SCHEMAS[target]
    assert transformed.value is None


@pytest.mark.parametrize("target", list(TARGET_SCHEMAS))
@pytest.mark.parametrize("source", SOURCE_SCHEMAS)
def test_with_schema_null_field(target: str, source: Schema) -> None:
    xform = value_xform(target, format=STRING_DATE_FMT, field="ts")
    struct = SchemaBuilder.struct().field("ts", source).field("other", Schema.STRING_SCHEMA)
    expected = (
        SchemaBuilder.struct()
        .field("ts", TARGET_SCHEMAS[target])
        .field("other", Schema.STRING_SCHEMA)
    )
    original = Struct(struct.build(), {"ts": None, "other": "test"})
    transformed = xform.apply(record(struct.build(), original))
    assert transformed.value_schema == expected.build()
    assert transformed.value.get("ts") is None
    # the entire Struct is null
    transformed = xform.apply(record(struct.optional().build(), None))
    assert transformed.value_schema == expected.optional().build()
    assert transformed.value is None


def test_schemaless_field_conversion() -> None:
    xform = value_xform("Date", field="ts")
    original = {"ts": DATE_PLUS_TIME, "other": 1}
    transformed = xform.apply(record(None, original))
    assert transformed.value_schema is None
    assert transformed.value == {"ts": DATE, "other": 1}
    assert original["ts"] == DATE_PLUS_TIME


@pytest.mark.parametrize(
    ("precision", "unix", "expected"),
    [
        ("milliseconds", DATE_PLUS_TIME_UNIX, DATE_PLUS_TIME),
        ("microseconds", DATE_PLUS_TIME_UNIX_MICROS, DATE_PLUS_TIME),
        ("nanoseconds", DATE_PLUS_TIME_UNIX_NANOS, DATE_PLUS_TIME),
        ("seconds", DATE_PLUS_TIME_UNIX_SECONDS, dt.datetime(1970, 1, 2, 0, 0, 1, tzinfo=UTC)),
    ],
)
def test_with_schema_field_conversion(precision: str, unix: int, expected: dt.datetime) -> None:
    xform = value_xform("Timestamp", field="ts", unix_precision=precision)
    schema = (
        SchemaBuilder.struct()
        .field("ts", Schema.INT64_SCHEMA)
        .field("other", Schema.STRING_SCHEMA)
        .build()
    )
    transformed = xform.apply(record(schema, Struct(schema, {"ts": unix, "other": "test"})))
    assert transformed.value_schema == (
        SchemaBuilder.struct()
        .field("ts", logical.timestamp_schema())
        .field("other", Schema.STRING_SCHEMA)
        .build()
    )
    assert transformed.value.as_dict() == {"ts": expected, "other": "test"}


@pytest.mark.parametrize(
    ("precision", "expected"),
    [
        ("microseconds", 86_401_234_000),
        ("nanoseconds", 86_401_234_000_000),
        ("seconds", 86_401),
        ("milliseconds", 86_401_234),
    ],
)
def test_schemaless_string_to_unix(precision: str, expected: int) -> None:
    xform = value_xform("unix", unix_precision=precision, format=STRING_DATE_FMT)
    transformed = xform.apply(record(None, DATE_PLUS_TIME_STRING))
    assert transformed.value_schema is None
    assert transformed.value == expected


def test_unix_precision_uses_java_arithmetic() -> None:
    micros = value_xform("unix", unix_precision="microseconds")
    # sub-millisecond parts are truncated toward zero, as Java's TimeUnit
    assert micros.apply(record(None, -1500)).value == -1000
    seconds = value_xform("unix", unix_precision="seconds")
    assert seconds.apply(record(None, dt.datetime(1969, 12, 31, 23, 59, 58, 500000))).value == -1
    nanos = value_xform("unix", unix_precision="nanoseconds")
    assert nanos.apply(record(None, 2**62)).value == 2**62 // 1_000_000 * 1_000_000


def test_key_form() -> None:
    xform = TimestampConverterKey()
    xform.configure({"target.type": "Timestamp"})
    original = SourceRecord(
        None, None, "topic", "v", DATE_PLUS_TIME_UNIX, 0, Schema.INT64_SCHEMA, Schema.STRING_SCHEMA
    )
    transformed = xform.apply(original)
    assert transformed.key_schema == logical.timestamp_schema()
    assert transformed.key == DATE_PLUS_TIME
    assert transformed.value == "v" and transformed.value_schema == Schema.STRING_SCHEMA


def test_replace_null_with_default() -> None:
    ts_schema = SchemaBuilder.of(Schema.INT64_SCHEMA.type).optional().default_value(0).build()
    schema = SchemaBuilder.struct().field("ts", ts_schema).build()
    value = Struct(schema, {"ts": None})
    assert value_xform("Timestamp", field="ts").apply(record(schema, value)).value["ts"] == EPOCH
    keep_null = value_xform("Timestamp", field="ts", **{"replace.null.with.default": "false"})
    assert keep_null.apply(record(schema, value)).value.as_dict() == {"ts": None}


def test_struct_default_is_converted() -> None:
    inner = SchemaBuilder.struct().field("ts", Schema.INT64_SCHEMA)
    schema = inner.optional().default_value(Struct(inner.build(), {"ts": 1000})).build()
    transformed = value_xform("Timestamp", field="ts").apply(record(schema, None))
    assert transformed.value is None
    assert transformed.value_schema.optional
    assert transformed.value_schema.default.get("ts") == EPOCH + dt.timedelta(seconds=1)


def test_nested_field_with_syntax_v2() -> None:
    inner = SchemaBuilder.struct().field("ts", Schema.INT64_SCHEMA).build()
    schema = SchemaBuilder.struct().field("a", inner).field("b", Schema.INT32_SCHEMA).build()
    value = Struct(schema, {"a": Struct(inner, {"ts": 0}), "b": 1})
    xform = value_xform("Date", field="a.ts", **{"field.syntax.version": "V2"})
    transformed = xform.apply(record(schema, value))
    assert transformed.value_schema.field("a").schema.field("ts").schema == logical.date_schema()
    assert transformed.value["a"]["ts"] == dt.date(1970, 1, 1)
    assert transformed.value["b"] == 1
    schemaless = xform.apply(record(None, {"a": {"ts": 86_400_000}, "b": 1}))
    assert schemaless.value == {"a": {"ts": DATE}, "b": 1}
    # V1 reads the dotted name as one root field
    v1 = value_xform("Date", field="a.ts").apply(record(None, {"a.ts": 0}))
    assert v1.value == {"a.ts": dt.date(1970, 1, 1)}


def test_errors() -> None:
    with pytest.raises(DataError, match=r"does not support class java\.lang\.Double objects"):
        value_xform("unix").apply(record(None, 1.5))
    with pytest.raises(DataError, match="Expected Unix timestamp to be a Long, but found"):
        value_xform("Date").apply(record(Schema.INT64_SCHEMA, "x"))
    with pytest.raises(DataError, match=r"Expected Timestamp to be a java\.util\.Date"):
        value_xform("unix").apply(record(logical.timestamp_schema(), "x"))
    with pytest.raises(ConnectError, match=r"Schema Schema\{INT32\} does not correspond"):
        value_xform("unix").apply(record(Schema.INT32_SCHEMA, 5))
    with pytest.raises(DataError) as info:
        value_xform("unix", format="yyyy-MM-dd").apply(record(None, "20200101"))
    assert str(info.value) == (
        "Could not parse timestamp: a string of 8 characters does not match pattern (yyyy-MM-dd)"
    )
    with pytest.raises(DataError, match="requires format option"):
        value_xform("unix").apply(record(None, "2020-01-01"))


def test_registry_resolves_java_and_short_names() -> None:
    plugins = Plugins([])
    for name, cls in [
        ("org.apache.kafka.connect.transforms.TimestampConverter$Value", TimestampConverterValue),
        ("TimestampConverter$Value", TimestampConverterValue),
        ("org.apache.kafka.connect.transforms.TimestampConverter$Key", TimestampConverterKey),
        ("TimestampConverter$Key", TimestampConverterKey),
    ]:
        assert plugins.find(name, [PluginType.TRANSFORMATION]).cls is cls
