"""ExtractField: ports of Kafka's ExtractFieldTest (V1 and V2 paths, KIP-1040), plus aliases."""

from __future__ import annotations

from typing import Any

import pytest

from connect_lite.api import DataError, Schema, SchemaBuilder, SchemaType, SinkRecord, Struct
from connect_lite.plugins.registry import Plugins
from connect_lite.plugins.types import PluginType
from connect_lite.transforms.base import struct_get
from connect_lite.transforms.extract_field import ExtractFieldKey, ExtractFieldValue


def key_xform(field: str, **extra: str) -> ExtractFieldKey:
    xform = ExtractFieldKey()
    xform.configure({"field": field, **extra})
    return xform


def key_record(key: Any, key_schema: Schema | None = None) -> SinkRecord:
    return SinkRecord("test", 0, 0, key, None, key_schema)


def test_schemaless() -> None:
    out = key_xform("magic").apply(key_record({"magic": 42}))
    assert out.key_schema is None and out.key == 42


def test_schemaless_and_nested_path() -> None:
    xform = key_xform("magic.foo", **{"field.syntax.version": "V2"})
    out = xform.apply(key_record({"magic": {"foo": 42}}))
    assert out.key_schema is None and out.key == 42


def test_null_schemaless() -> None:
    out = key_xform("magic").apply(key_record(None))
    assert out.key_schema is None and out.key is None


def test_with_schema() -> None:
    schema = SchemaBuilder.struct().field("magic", Schema.INT32_SCHEMA).build()
    out = key_xform("magic").apply(key_record(Struct(schema, {"magic": 42}), schema))
    assert out.key_schema == Schema.INT32_SCHEMA and out.key == 42


def test_with_schema_and_nested_path() -> None:
    foo = SchemaBuilder.struct().field("foo", Schema.INT32_SCHEMA).build()
    schema = SchemaBuilder.struct().field("magic", foo).build()
    key = Struct(schema, {"magic": Struct(foo, {"foo": 42})})
    out = key_xform("magic.foo", **{"field.syntax.version": "v2"}).apply(key_record(key, schema))
    assert out.key_schema == Schema.INT32_SCHEMA and out.key == 42


def test_null_with_schema() -> None:
    schema = SchemaBuilder.struct().field("magic", Schema.INT32_SCHEMA).optional().build()
    out = key_xform("magic").apply(key_record(None, schema))
    assert out.key_schema == Schema.INT32_SCHEMA and out.key is None


def test_non_existent_field_schemaless_returns_null() -> None:
    out = key_xform("nonexistent").apply(key_record({"magic": 42}))
    assert out.key_schema is None and out.key is None


def test_non_existent_nested_field_schemaless_returns_null() -> None:
    out = key_xform("magic.nonexistent").apply(key_record({"magic": {"foo": 42}}))
    assert out.key is None
    v2 = key_xform("magic.nonexistent", **{"field.syntax.version": "V2"})
    assert v2.apply(key_record({"magic": {"foo": 42}})).key is None
    assert v2.apply(key_record({"other": 1})).key is None


def test_non_map_in_the_middle_of_a_path_fails() -> None:
    v2 = key_xform("magic.foo", **{"field.syntax.version": "V2"})
    with pytest.raises(DataError, match=r"\[nested field access\]"):
        v2.apply(key_record({"magic": "not a map"}))


def test_non_existent_field_with_schema_fails() -> None:
    schema = SchemaBuilder.struct().field("magic", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataError) as info:
        key_xform("nonexistent").apply(key_record(Struct(schema, {"magic": 42}), schema))
    assert str(info.value) == "Unknown field: SingleFieldPath{version=V1, path=nonexistent}"


def test_non_existent_nested_field_with_schema_fails() -> None:
    foo = SchemaBuilder.struct().field("foo", Schema.INT32_SCHEMA).build()
    schema = SchemaBuilder.struct().field("magic", foo).build()
    key = Struct(schema, {"magic": Struct(foo, {"foo": 42})})
    with pytest.raises(DataError) as info:
        key_xform("magic.nonexistent").apply(key_record(key, schema))
    assert str(info.value) == "Unknown field: SingleFieldPath{version=V1, path=magic.nonexistent}"
    with pytest.raises(DataError) as info:
        key_xform("magic.nonexistent", **{"field.syntax.version": "V2"}).apply(
            key_record(key, schema)
        )
    assert str(info.value) == "Unknown field: SingleFieldPath{version=V2, path=magic.nonexistent}"


def test_non_map_value_fails() -> None:
    with pytest.raises(DataError, match=r"in absence of schema for \[field extraction\]"):
        key_xform("magic").apply(key_record("plain"))


@pytest.mark.parametrize(("replace", "expected"), [("true", 42), ("false", None)])
def test_replace_null_with_default(replace: str, expected: int | None) -> None:
    magic = SchemaBuilder.of(SchemaType.INT64).optional().default_value(42).build()
    schema = SchemaBuilder.struct().field("magic", magic).build()
    xform = ExtractFieldValue()
    xform.configure({"field": "magic", "replace.null.with.default": replace})
    record = SinkRecord("t", 0, 0, None, Struct(schema, {"magic": None}), None, schema)
    out = xform.apply(record)
    assert out.value_schema == magic and out.value == expected


def test_struct_get_matches_kafka_get_and_get_without_default() -> None:
    field_schema = SchemaBuilder.of(SchemaType.STRING).optional().default_value("d").build()
    schema = SchemaBuilder.struct().field("s", field_schema).build()
    unset, null, present = Struct(schema), Struct(schema, {"s": None}), Struct(schema, {"s": "x"})
    assert [struct_get(s, "s") for s in (unset, null, present)] == ["d", "d", "x"]
    assert [struct_get(s, "s", False) for s in (unset, null, present)] == [None, None, "x"]
    with pytest.raises(DataError, match="nope is not a valid field name"):
        struct_get(present, "nope")


def test_value_form_and_settings() -> None:
    xform = ExtractFieldValue()
    xform.configure({"field": "a"})
    assert xform.settings == {
        "field": "a",
        "replace.null.with.default": True,
        "field.syntax.version": "V1",
    }
    record = SinkRecord("t", 0, 0, "k", {"a": [1]})
    out = xform.apply(record)
    assert out.value == [1] and out.key == "k"


def test_registry_resolves_java_names_and_aliases() -> None:
    plugins = Plugins([])
    for name, cls in [
        ("org.apache.kafka.connect.transforms.ExtractField$Key", ExtractFieldKey),
        ("org.apache.kafka.connect.transforms.ExtractField$Value", ExtractFieldValue),
        ("ExtractField$Key", ExtractFieldKey),
        ("ExtractField$Value", ExtractFieldValue),
    ]:
        assert plugins.find(name, [PluginType.TRANSFORMATION]).cls is cls
