"""ValueToKey: ports of Kafka's ValueToKeyTest, KIP-1040, config validation and aliases."""

from __future__ import annotations

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
)
from connect_lite.plugins.registry import Plugins
from connect_lite.plugins.types import PluginType
from connect_lite.transforms.value_to_key import ValueToKey


def xform(**props: str) -> ValueToKey:
    transform = ValueToKey()
    transform.configure(props)
    return transform


def test_schemaless() -> None:
    value = {"a": 1, "b": 2, "c": 3}
    out = xform(fields="a,b").apply(SinkRecord("", 0, 0, None, value))
    assert out.key_schema is None
    assert out.key == {"a": 1, "b": 2}
    assert out.value == value


def test_schemaless_missing_field_is_null() -> None:
    out = xform(fields="a,z").apply(SinkRecord("", 0, 0, None, {"a": 1}))
    assert out.key == {"a": 1, "z": None}


def test_with_schema() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("a", Schema.INT32_SCHEMA)
        .field("b", Schema.INT32_SCHEMA)
        .field("c", Schema.INT32_SCHEMA)
        .build()
    )
    value = Struct(schema, {"a": 1, "b": 2, "c": 3})
    out = xform(fields="a,b").apply(SinkRecord("", 0, 0, None, value, None, schema))
    expected_schema = (
        SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).field("b", Schema.INT32_SCHEMA)
    ).build()
    assert out.key_schema == expected_schema
    assert out.key == Struct(expected_schema, {"a": 1, "b": 2})
    assert out.value is value and out.value_schema == schema


def test_fields_order_comes_from_config() -> None:
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).field("b", Schema.STRING_SCHEMA)
    built = schema.build()
    record = SourceRecord(None, None, "t", Struct(built, {"a": 1, "b": "x"}), value_schema=built)
    out = xform(fields="b,a").apply(record)
    assert [f.name for f in out.key_schema.fields] == ["b", "a"]


def test_non_existent_field_with_schema_fails() -> None:
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    record = SinkRecord("", 0, 0, None, Struct(schema, {"a": 1}), None, schema)
    with pytest.raises(DataError, match=r"^Field does not exist: not_exist$"):
        xform(fields="not_exist").apply(record)


def test_null_value_fails_as_in_kafka() -> None:
    with pytest.raises(DataError, match=r"\[copying fields from value to key\], found: null"):
        xform(fields="a").apply(SinkRecord("", 0, 0, "k", None))
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).optional().build()
    with pytest.raises(DataError, match=r"Only Struct objects supported"):
        xform(fields="a").apply(SinkRecord("", 0, 0, "k", None, None, schema))


@pytest.mark.parametrize(("replace", "expected"), [("true", 42), ("false", None)])
def test_replace_null_with_default(replace: str, expected: int | None) -> None:
    magic = SchemaBuilder.of(SchemaType.INT64).optional().default_value(42).build()
    schema = SchemaBuilder.struct().field("magic", magic).build()
    record = SinkRecord("", 0, 0, None, Struct(schema, {"magic": None}), None, schema)
    out = xform(fields="magic", **{"replace.null.with.default": replace}).apply(record)
    assert out.key.get("magic") == expected


def test_config_validation() -> None:
    with pytest.raises(ConfigError, match='Missing required configuration "fields"'):
        xform()
    with pytest.raises(ConfigError, match=r"Configuration 'fields' values must not be empty\."):
        xform(fields="")
    with pytest.raises(ConfigError, match="Configuration 'fields' values must not be dup"):
        xform(fields="a,a")


def test_registry_resolves_java_name_and_alias() -> None:
    plugins = Plugins([])
    for name in ("org.apache.kafka.connect.transforms.ValueToKey", "ValueToKey"):
        assert plugins.find(name, [PluginType.TRANSFORMATION]).cls is ValueToKey
