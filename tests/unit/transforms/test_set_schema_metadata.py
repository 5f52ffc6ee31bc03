"""SetSchemaMetadata: ports of Kafka's SetSchemaMetadataTest, KIP-1040 and aliases."""

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
from connect_lite.transforms.set_schema_metadata import (
    SetSchemaMetadataKey,
    SetSchemaMetadataValue,
    update_schema_in,
)


def value_xform(**props: str) -> SetSchemaMetadataValue:
    xform = SetSchemaMetadataValue()
    xform.configure(props)
    return xform


def empty_struct_record() -> SinkRecord:
    return SinkRecord("", 0, 0, None, None, None, SchemaBuilder.struct().build())


def assert_matching_schema(value: Struct, schema: Schema) -> None:
    assert value.schema is schema
    for field in schema.fields:
        assert value.schema.field(field.name) == field


def test_schema_name_update() -> None:
    out = value_xform(**{"schema.name": "foo"}).apply(empty_struct_record())
    assert out.value_schema.name == "foo" and out.value_schema.version is None


def test_schema_version_update() -> None:
    out = value_xform(**{"schema.version": "42"}).apply(empty_struct_record())
    assert out.value_schema.version == 42 and out.value_schema.name is None


def test_schema_name_and_version_update() -> None:
    out = value_xform(**{"schema.name": "foo", "schema.version": "42"}).apply(empty_struct_record())
    assert (out.value_schema.name, out.value_schema.version) == ("foo", 42)


def test_schema_name_and_version_update_with_struct() -> None:
    schema = (
        SchemaBuilder.struct()
        .name("my.orig.SchemaDefn")
        .field("f1", Schema.STRING_SCHEMA)
        .field("f2", Schema.INT32_SCHEMA)
        .build()
    )
    value = Struct(schema, {"f1": "value1", "f2": 1})
    xform = value_xform(**{"schema.name": "foo", "schema.version": "42"})
    out = xform.apply(SinkRecord("", 0, 0, None, value, None, schema))
    assert (out.value_schema.name, out.value_schema.version) == ("foo", 42)
    assert_matching_schema(out.value, out.value_schema)
    assert out.value.as_dict() == {"f1": "value1", "f2": 1}


def test_other_schema_parts_are_kept() -> None:
    schema = (
        SchemaBuilder.array(Schema.INT32_SCHEMA).optional().doc("d").parameter("p", "v").build()
    )
    out = value_xform(**{"schema.name": "arr"}).apply(SinkRecord("", 0, 0, None, [1], None, schema))
    assert out.value_schema.name == "arr"
    assert (out.value_schema.doc, out.value_schema.optional) == ("d", True)
    assert out.value_schema.params == {"p": "v"}
    assert out.value_schema.value_schema == Schema.INT32_SCHEMA
    assert out.value == [1]


def test_key_form() -> None:
    xform = SetSchemaMetadataKey()
    xform.configure({"schema.name": "k"})
    record = SinkRecord("", 0, 0, "key", "value", Schema.STRING_SCHEMA, Schema.STRING_SCHEMA)
    out = xform.apply(record)
    assert out.key_schema.name == "k" and out.value_schema.name is None


def test_update_schema_of_struct() -> None:
    schema = (
        SchemaBuilder.struct()
        .name("my.orig.SchemaDefn")
        .field("f1", Schema.STRING_SCHEMA)
        .field("f2", Schema.INT32_SCHEMA)
        .build()
    )
    new_schema = (
        SchemaBuilder.struct()
        .name("my.updated.SchemaDefn")
        .field("f1", Schema.STRING_SCHEMA)
        .field("f2", Schema.INT32_SCHEMA)
        .build()
    )
    updated = update_schema_in(Struct(schema, {"f1": "value1", "f2": 1}), new_schema)
    assert_matching_schema(updated, new_schema)


def test_update_schema_of_non_struct_and_null() -> None:
    value = [1]
    assert update_schema_in(value, Schema.INT32_SCHEMA) is value
    assert update_schema_in(None, Schema.INT32_SCHEMA) is None


def test_value_schema_required() -> None:
    with pytest.raises(DataError, match=r"^Schema required for \[updating schema metadata\]$"):
        value_xform(**{"schema.name": "foo"}).apply(SinkRecord("", 0, 0, None, 42))


def test_ignore_record_with_null_value_and_schema() -> None:
    record = SinkRecord("", 0, 0, None, None)
    assert value_xform(**{"schema.name": "foo"}).apply(record) is record


@pytest.mark.parametrize(("replace", "expected"), [("true", 42), ("false", None)])
def test_replace_null_with_default(replace: str, expected: int | None) -> None:
    magic = SchemaBuilder.of(SchemaType.INT64).optional().default_value(42).build()
    schema = SchemaBuilder.struct().field("magic", magic).build()
    record = SinkRecord("", 0, 0, None, Struct(schema, {"magic": None}), None, schema)
    out = value_xform(**{"schema.name": "n", "replace.null.with.default": replace}).apply(record)
    assert out.value.get("magic") == expected


def test_config_errors() -> None:
    with pytest.raises(ConfigError, match=r"^Neither schema name nor version configured$"):
        value_xform()
    with pytest.raises(ConfigError, match="Not a number of type INT"):
        value_xform(**{"schema.version": "x"})


def test_registry_resolves_java_names_and_aliases() -> None:
    plugins = Plugins([])
    for name, cls in [
        ("org.apache.kafka.connect.transforms.SetSchemaMetadata$Key", SetSchemaMetadataKey),
        ("org.apache.kafka.connect.transforms.SetSchemaMetadata$Value", SetSchemaMetadataValue),
        ("SetSchemaMetadata$Key", SetSchemaMetadataKey),
        ("SetSchemaMetadata$Value", SetSchemaMetadataValue),
    ]:
        assert plugins.find(name, [PluginType.TRANSFORMATION]).cls is cls
