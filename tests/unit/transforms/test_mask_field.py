"""MaskField: ports of Kafka's MaskFieldTest (null values, replacements, their errors)."""

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
    Struct,
)
from connect_lite.api.logical import (
    EPOCH,
    date_schema,
    decimal_schema,
    time_schema,
    timestamp_schema,
)
from connect_lite.plugins.registry import Plugins
from connect_lite.plugins.types import PluginType
from connect_lite.transforms.mask_field import MaskFieldKey, MaskFieldValue

SCHEMA = (
    SchemaBuilder.struct()
    .field("magic", Schema.INT32_SCHEMA)
    .field("bool", Schema.BOOLEAN_SCHEMA)
    .field("byte", Schema.INT8_SCHEMA)
    .field("short", Schema.INT16_SCHEMA)
    .field("int", Schema.INT32_SCHEMA)
    .field("long", Schema.INT64_SCHEMA)
    .field("float", Schema.FLOAT32_SCHEMA)
    .field("double", Schema.FLOAT64_SCHEMA)
    .field("string", Schema.STRING_SCHEMA)
    .field("date", date_schema())
    .field("time", time_schema())
    .field("timestamp", timestamp_schema())
    .field("decimal", decimal_schema(0))
    .field("array", SchemaBuilder.array(Schema.INT32_SCHEMA).build())
    .field("map", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build())
    .field(
        "withDefault",
        SchemaBuilder.of(SchemaType.STRING).optional().default_value("default").build(),
    )
    .build()
)
NOW = dt.datetime(2024, 5, 6, 7, 8, 9, tzinfo=dt.UTC)
VALUES: dict[str, Any] = {
    "magic": 42,
    "bool": True,
    "byte": 42,
    "short": 42,
    "int": 42,
    "long": 42,
    "float": 42.0,
    "double": 42.0,
    "string": "55.121.20.20",
    "date": NOW,
    "bigint": 42,
    "bigdec": decimal.Decimal("42.0"),
    "list": [42],
    "map": {"key": "value"},
}
STRUCT_VALUES: dict[str, Any] = {
    "magic": 42,
    "bool": True,
    "byte": 42,
    "short": 42,
    "int": 42,
    "long": 42,
    "float": 42.0,
    "double": 42.0,
    "string": "hmm",
    "date": NOW.date(),
    "time": NOW.time(),
    "timestamp": NOW,
    "decimal": decimal.Decimal(42),
    "array": [1, 2, 3],
    "map": {"what": "what"},
    "withDefault": None,
}


def transform(fields: list[str], replacement: str | None = None, **extra: str) -> MaskFieldValue:
    xform = MaskFieldValue()
    props = {"fields": ",".join(fields), **extra}
    if replacement is not None:
        props["replacement"] = replacement
    xform.configure(props)
    return xform


def record(schema: Schema | None, value: Any) -> SinkRecord:
    return SinkRecord("", 0, 0, None, value, None, schema)


def masked_schemaless(fields: list[str], replacement: str | None = None) -> dict[str, Any]:
    return transform(fields, replacement).apply(record(None, dict(VALUES))).value


def masked_with_schema(fields: list[str], replacement: str | None = None) -> Struct:
    return transform(fields, replacement).apply(record(SCHEMA, Struct(SCHEMA, STRUCT_VALUES))).value


def test_schemaless() -> None:
    updated = masked_schemaless([k for k in VALUES if k != "magic"])
    assert updated == {
        "magic": 42,
        "bool": False,
        "byte": 0,
        "short": 0,
        "int": 0,
        "long": 0,
        "float": 0.0,
        "double": 0.0,
        "string": "",
        "date": EPOCH,
        "bigint": 0,
        "bigdec": decimal.Decimal(0),
        "list": [],
        "map": {},
    }
    assert isinstance(updated["float"], float) and updated["bool"] is False


def test_with_schema() -> None:
    updated = masked_with_schema([f.name for f in SCHEMA.fields if f.name != "magic"])
    assert updated.schema == SCHEMA
    assert updated.as_dict() == {
        "magic": 42,
        "bool": False,
        "byte": 0,
        "short": 0,
        "int": 0,
        "long": 0,
        "float": 0.0,
        "double": 0.0,
        "string": "",
        "date": dt.date(1970, 1, 1),
        "time": dt.time(0),
        "timestamp": EPOCH,
        "decimal": decimal.Decimal(0),
        "array": [],
        "map": {},
        "withDefault": "",  # null reads as its default ("default"), which is masked
    }


def test_with_schema_and_replace_null_with_default_off() -> None:
    xform = transform(["withDefault", "string"], **{"replace.null.with.default": "false"})
    updated = xform.apply(record(SCHEMA, Struct(SCHEMA, STRUCT_VALUES))).value
    assert updated.get("withDefault") is None and updated.get("string") == ""


def test_schemaless_missing_field_is_written_as_null() -> None:
    assert transform(["absent"]).apply(record(None, {"a": 1})).value == {"a": 1, "absent": None}


@pytest.mark.parametrize(
    ("field", "replacement", "expected"),
    [
        ("short", "123", 123),
        ("byte", "123", 123),
        ("int", "123", 123),
        ("long", "-123", -123),
        ("float", "123.0", 123.0),
        ("double", "123.45", 123.45),
        ("string", "123", "123"),
        ("bigint", "123", 123),
        ("bigdec", "123.0", decimal.Decimal("123.0")),
    ],
)
def test_schemaless_with_replacement(field: str, replacement: str, expected: Any) -> None:
    assert masked_schemaless([field], replacement)[field] == expected


@pytest.mark.parametrize(
    ("field", "replacement", "expected"),
    [
        ("short", "123", 123),
        ("byte", "123", 123),
        ("int", "123", 123),
        ("long", "123", 123),
        ("float", "123.0", 123.0),
        ("double", "123.0", 123.0),
        ("string", "123", "123"),
        ("decimal", "123.0", decimal.Decimal("123.0")),
        ("byte", "300", 44),  # Java's (byte) narrowing
        ("int", "12.9", 12),  # Values.convertToInteger truncates
    ],
)
def test_with_schema_and_replacement(field: str, replacement: str, expected: Any) -> None:
    assert masked_with_schema([field], replacement).get(field) == expected


@pytest.mark.parametrize(
    ("fields", "java_class"),
    [
        (["date"], "java.util.Date"),
        (["int", "date"], "java.util.Date"),
        (["bool"], "java.lang.Boolean"),
        (["list"], "java.util.ArrayList"),
        (["map"], "java.util.HashMap"),
    ],
)
def test_schemaless_unsupported_replacement_type(fields: list[str], java_class: str) -> None:
    with pytest.raises(DataError) as info:
        masked_schemaless(fields, "123")
    assert (
        str(info.value) == f"Cannot mask value of type class {java_class} with custom replacement."
    )


@pytest.mark.parametrize("field", ["time", "timestamp", "array"])
def test_with_schema_unsupported_replacement_type(field: str) -> None:
    with pytest.raises(DataError, match=r"^Cannot mask value of type class .* with custom"):
        masked_with_schema([field], "123")


@pytest.mark.parametrize(
    "field", ["byte", "short", "int", "long", "float", "double", "bigint", "bigdec"]
)
def test_replacement_type_mismatch(field: str) -> None:
    with pytest.raises(DataError) as info:
        masked_schemaless([field], "foo")
    assert str(info.value) == "Unable to convert foo (class java.lang.String) to number"


def test_replacement_type_mismatch_for_several_fields() -> None:
    with pytest.raises(DataError, match="Unable to convert foo"):
        masked_schemaless(["string", "int"], "foo")


@pytest.mark.parametrize("replacement", ["", "  "])
def test_empty_string_replacement_value(replacement: str) -> None:
    with pytest.raises(ConfigError) as info:
        transform(["short"], replacement)
    assert (
        str(info.value) == "Invalid value  for configuration replacement: String must be non-empty"
    )


def test_null_list_and_map_replacements_are_fresh() -> None:
    first = masked_with_schema(["array", "map"])
    second = masked_with_schema(["array", "map"])
    first.get("array").append(0)
    first.get("map")["k"] = "v"
    assert second.get("array") == [] and second.get("map") == {}


def test_unmaskable_types() -> None:
    schema = SchemaBuilder.struct().field("b", Schema.BYTES_SCHEMA).build()
    with pytest.raises(DataError, match=r"^Cannot mask value of type: class \[B$"):
        transform(["b"]).apply(record(schema, Struct(schema, {"b": b"\x01"})))


def test_null_field_stays_null() -> None:
    assert transform(["a"], "x").apply(record(None, {"a": None})).value == {"a": None}


def test_requires_map_or_struct() -> None:
    with pytest.raises(DataError, match=r"\[mask fields\], found: null"):
        transform(["a"]).apply(record(None, None))
    with pytest.raises(DataError, match=r"Only Struct objects supported for \[mask fields\]"):
        transform(["a"]).apply(record(Schema.INT32_SCHEMA, 5))


def test_key_form() -> None:
    xform = MaskFieldKey()
    xform.configure({"fields": "ssn", "replacement": "***"})
    out = xform.apply(SinkRecord("t", 0, 0, {"ssn": "123", "id": 1}, "v"))
    assert out.key == {"ssn": "***", "id": 1} and out.value == "v"


def test_config_validation() -> None:
    with pytest.raises(ConfigError, match='Missing required configuration "fields"'):
        MaskFieldValue().configure({})
    with pytest.raises(ConfigError, match=r"Configuration 'fields' values must not be empty\."):
        MaskFieldValue().configure({"fields": ""})


def test_registry_resolves_java_names_and_aliases() -> None:
    plugins = Plugins([])
    for name, cls in [
        ("org.apache.kafka.connect.transforms.MaskField$Key", MaskFieldKey),
        ("org.apache.kafka.connect.transforms.MaskField$Value", MaskFieldValue),
        ("MaskField$Key", MaskFieldKey),
        ("MaskField$Value", MaskFieldValue),
    ]:
        assert plugins.find(name, [PluginType.TRANSFORMATION]).cls is cls
