"""ReplaceField: ports of Kafka's ReplaceFieldTest, KIP-1040, rename parsing and aliases."""

from __future__ import annotations

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
from connect_lite.plugins.registry import Plugins
from connect_lite.plugins.types import PluginType
from connect_lite.transforms.base import java_split
from connect_lite.transforms.replace_field import (
    ReplaceFieldKey,
    ReplaceFieldValue,
    parse_rename_mappings,
)


def value_xform(**props: str) -> ReplaceFieldValue:
    xform = ReplaceFieldValue()
    xform.configure(props)
    return xform


def test_tombstone_schemaless() -> None:
    record = SinkRecord("test", 0, 0, None, None)
    out = value_xform(include="abc,foo", renames="abc:xyz,foo:bar").apply(record)
    assert out.value is None and out.value_schema is None


def test_tombstone_with_schema() -> None:
    schema = SchemaBuilder.struct().field("dont", Schema.STRING_SCHEMA).build()
    record = SinkRecord("test", 0, 0, None, None, None, schema)
    out = value_xform(include="abc,foo", renames="abc:xyz,foo:bar").apply(record)
    assert out.value is None and out.value_schema == schema


def test_schemaless() -> None:
    value = {"dont": "whatever", "abc": 42, "foo": True, "etc": "etc"}
    out = value_xform(exclude="dont", renames="abc:xyz,foo:bar").apply(
        SinkRecord("test", 0, 0, None, value)
    )
    assert out.value == {"xyz": 42, "bar": True, "etc": "etc"}
    assert out.value_schema is None


def test_with_schema() -> None:
    schema = (
        SchemaBuilder.struct()
        .name("n")
        .version(3)
        .field("dont", Schema.STRING_SCHEMA)
        .field("abc", Schema.INT32_SCHEMA)
        .field("foo", Schema.BOOLEAN_SCHEMA)
        .field("etc", Schema.STRING_SCHEMA)
        .build()
    )
    value = Struct(schema, {"dont": "whatever", "abc": 42, "foo": True, "etc": "etc"})
    out = value_xform(include="abc,foo", renames="abc:xyz,foo:bar").apply(
        SinkRecord("test", 0, 0, None, value, None, schema)
    )
    assert [f.name for f in out.value_schema.fields] == ["xyz", "bar"]
    assert (out.value_schema.name, out.value_schema.version) == ("n", 3)
    assert out.value.get("xyz") == 42 and out.value.get("bar") is True
    assert out.value.schema is out.value_schema


def test_exclude_takes_precedence_over_include() -> None:
    value = {"abc": 1, "foo": 2, "bar": 3}
    out = value_xform(include="abc,foo", exclude="abc").apply(SinkRecord("t", 0, 0, None, value))
    assert out.value == {"foo": 2}


def test_key_form() -> None:
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).field("b", Schema.INT32_SCHEMA)
    key_schema = schema.build()
    xform = ReplaceFieldKey()
    xform.configure({"exclude": "b", "renames": "a:id"})
    out = xform.apply(SinkRecord("t", 0, 0, Struct(key_schema, {"a": 1, "b": 2}), "v", key_schema))
    assert out.key.as_dict() == {"id": 1} and out.value == "v"


@pytest.mark.parametrize(("replace", "expected"), [("true", 42), ("false", None)])
def test_replace_null_with_default(replace: str, expected: int | None) -> None:
    magic = SchemaBuilder.of(SchemaType.INT64).optional().default_value(42).build()
    schema = SchemaBuilder.struct().field("magic", magic).build()
    out = value_xform(renames="magic:m", **{"replace.null.with.default": replace}).apply(
        SinkRecord("t", 0, 0, None, Struct(schema, {"magic": None}), None, schema)
    )
    assert out.value_schema.field("m").schema == magic
    assert out.value.get("m") == expected


def test_rename_collision_with_schema_is_a_data_error() -> None:
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).field("b", Schema.INT32_SCHEMA)
    built = schema.build()
    with pytest.raises(DataError, match="duplication b"):
        value_xform(renames="a:b").apply(SinkRecord("t", 0, 0, None, Struct(built), None, built))


def test_non_map_value_fails() -> None:
    with pytest.raises(DataError, match=r"\[field replacement\]"):
        value_xform(exclude="a").apply(SinkRecord("t", 0, 0, None, "text"))


def test_rename_mappings_follow_java_split() -> None:
    assert java_split("a:b:", ":") == ["a", "b"]
    assert java_split(":b", ":") == ["", "b"]
    assert java_split("ab", ":") == ["ab"]
    assert java_split("::", ":") == []
    assert parse_rename_mappings(["a:b", "c:d:"]) == {"a": "b", "c": "d"}


def test_invalid_rename_mapping() -> None:
    with pytest.raises(ConfigError) as info:
        value_xform(renames="abc:xyz,foo")
    assert str(info.value) == (
        "Invalid value [abc:xyz, foo] for configuration renames: Invalid rename mapping: foo"
    )
    assert "renames" in info.value.errors
    with pytest.raises(ConfigError, match="Invalid rename mapping: a:b:c"):
        value_xform(renames="a:b:c")


def test_deprecated_whitelist_and_blacklist_are_gone_in_kafka_4() -> None:
    names = ReplaceFieldValue().config().names()
    assert names == ["exclude", "include", "renames", "replace.null.with.default"]
    out = value_xform(blacklist="a", whitelist="b").apply(
        SinkRecord("t", 0, 0, None, {"a": 1, "b": 2, "c": 3})
    )
    assert out.value == {"a": 1, "b": 2, "c": 3}


def test_registry_resolves_java_names_and_aliases() -> None:
    plugins = Plugins([])
    for name, cls in [
        ("org.apache.kafka.connect.transforms.ReplaceField$Key", ReplaceFieldKey),
        ("org.apache.kafka.connect.transforms.ReplaceField$Value", ReplaceFieldValue),
        ("ReplaceField$Key", ReplaceFieldKey),
        ("ReplaceField$Value", ReplaceFieldValue),
    ]:
        assert plugins.find(name, [PluginType.TRANSFORMATION]).cls is cls
