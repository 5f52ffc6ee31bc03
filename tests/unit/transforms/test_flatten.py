"""Flatten: Kafka's FlattenTest cases, schemaless and with schemas, key and value forms."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from connect_lite.api import (
    DataError,
    Schema,
    SchemaBuilder,
    SchemaType,
    SourceRecord,
    Struct,
)
from connect_lite.plugins.registry import Plugins
from connect_lite.plugins.types import PluginType
from connect_lite.transforms.flatten import FlattenKey, FlattenValue


def value_xform(**config: str) -> FlattenValue:
    xform = FlattenValue()
    xform.configure(config)
    return xform


def value_record(schema: Schema | None, value: Any) -> SourceRecord:
    return SourceRecord(None, None, "topic", value, kafka_partition=0, value_schema=schema)


SUPPORTED = (
    SchemaBuilder.struct()
    .field("int8", Schema.INT8_SCHEMA)
    .field("int16", Schema.INT16_SCHEMA)
    .field("int32", Schema.INT32_SCHEMA)
    .field("int64", Schema.INT64_SCHEMA)
    .field("float32", Schema.FLOAT32_SCHEMA)
    .field("float64", Schema.FLOAT64_SCHEMA)
    .field("boolean", Schema.BOOLEAN_SCHEMA)
    .field("string", Schema.STRING_SCHEMA)
    .field("bytes", Schema.BYTES_SCHEMA)
    .build()
)
SUPPORTED_VALUES = {
    "int8": 8,
    "int16": 16,
    "int32": 32,
    "int64": 64,
    "float32": 32.0,
    "float64": 64.0,
    "boolean": True,
    "string": "stringy",
    "bytes": b"bytes",
}


def test_top_level_struct_or_map_required() -> None:
    with pytest.raises(DataError, match=r"Only Struct objects supported for \[flattening\]"):
        value_xform().apply(value_record(Schema.INT32_SCHEMA, 42))
    with pytest.raises(DataError, match=r"Only Map objects supported .* \[flattening\]"):
        value_xform().apply(value_record(None, 42))


def test_nested_struct() -> None:
    one = SchemaBuilder.struct().field("B", SUPPORTED).build()
    two = SchemaBuilder.struct().field("A", one).build()
    value = Struct(two, {"A": Struct(one, {"B": Struct(SUPPORTED, SUPPORTED_VALUES)})})
    transformed = value_xform().apply(value_record(two, value))
    assert transformed.value_schema.type is SchemaType.STRUCT
    flat = transformed.value
    assert len(flat.schema.fields) == 9
    assert flat.as_dict() == {f"A.B.{k}": v for k, v in SUPPORTED_VALUES.items()}
    assert flat.schema.field("A.B.int8").schema == Schema.INT8_SCHEMA


def test_nested_map_with_delimiter() -> None:
    value = {"A": {"B": dict(SUPPORTED_VALUES)}}
    transformed = value_xform(delimiter="#").apply(value_record(None, value))
    assert transformed.value_schema is None
    assert transformed.value == {f"A#B#{k}": v for k, v in SUPPORTED_VALUES.items()}


def test_optional_field_struct() -> None:
    inner = SchemaBuilder.struct().field("opt_int32", Schema.OPTIONAL_INT32_SCHEMA).build()
    outer = SchemaBuilder.struct().field("B", inner).build()
    value = Struct(outer, {"B": Struct(inner, {"opt_int32": None})})
    flat = value_xform().apply(value_record(outer, value)).value
    assert flat.as_dict() == {"B.opt_int32": None}


def test_optional_struct_null_value_passes_through() -> None:
    schema = (
        SchemaBuilder.struct().optional().field("opt_int32", Schema.OPTIONAL_INT32_SCHEMA).build()
    )
    record = value_record(schema, None)
    transformed = value_xform().apply(record)
    assert transformed.value_schema.type is SchemaType.STRUCT
    assert transformed.value is None


def test_optional_nested_struct() -> None:
    inner = (
        SchemaBuilder.struct().optional().field("opt_int32", Schema.OPTIONAL_INT32_SCHEMA).build()
    )
    outer = SchemaBuilder.struct().field("B", inner).build()
    flat = value_xform().apply(value_record(outer, Struct(outer, {"B": None}))).value
    assert flat.get("B.opt_int32") is None
    assert flat.schema.field("B.opt_int32").schema.optional


def test_optional_field_map() -> None:
    transformed = value_xform().apply(value_record(None, {"B": {"opt_int32": None}}))
    assert transformed.value == {"B.opt_int32": None}


def test_nulls_in_map_do_not_stop_flattening() -> None:
    value = {"a": None, "b": {"c": 1}, "d": "x"}
    assert value_xform().apply(value_record(None, value)).value == {
        "a": None,
        "b.c": 1,
        "d": "x",
    }


def test_key() -> None:
    xform = FlattenKey()
    xform.configure({})
    record = SourceRecord(None, None, "topic", None, {"A": {"B": 12}})
    transformed = xform.apply(record)
    assert transformed.key_schema is None
    assert transformed.key == {"A.B": 12}


def test_arrays_are_kept_as_is() -> None:
    assert value_xform().apply(value_record(None, {"foo": {"bar": ["a", "b"]}})).value == {
        "foo.bar": ["a", "b"]
    }
    array = SchemaBuilder.array(Schema.STRING_SCHEMA).build()
    inner = SchemaBuilder.struct().field("bar", array).build()
    outer = SchemaBuilder.struct().field("foo", inner).build()
    value = Struct(outer, {"foo": Struct(inner, {"bar": ["a", "b"]})})
    flat = value_xform().apply(value_record(outer, value)).value
    assert flat.as_dict() == {"foo.bar": ["a", "b"]}
    assert flat.schema.field("foo.bar").schema == array


def test_unsupported_types() -> None:
    with pytest.raises(DataError, match="not supported by Connect's data API"):
        value_xform().apply(value_record(None, {"foo": dt.datetime(2020, 1, 1)}))
    inner = SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataError, match="for record without schemas \\(for field foo\\)"):
        value_xform().apply(value_record(None, {"foo": Struct(inner, {"x": 1})}))
    map_schema = SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build()
    schema = SchemaBuilder.struct().field("m", map_schema).build()
    with pytest.raises(DataError) as info:
        value_xform().apply(value_record(schema, Struct(schema, {"m": {}})))
    assert str(info.value) == (
        "Flatten transformation does not support MAP for record with schemas (for field m)."
    )


def test_optional_and_default_values_nested() -> None:
    builder = (
        SchemaBuilder.struct()
        .optional()
        .field("req_field", Schema.STRING_SCHEMA)
        .field(
            "opt_field",
            SchemaBuilder(SchemaType.STRING).optional().default_value("child_default").build(),
        )
    )
    child_default = Struct(builder.build(), {"req_field": "req_default"})
    schema = builder.default_value(child_default).build()
    transformed = value_xform().apply(value_record(schema, Struct(schema)))
    fields = transformed.value_schema.fields
    assert len(fields) == 2
    assert transformed.value_schema.field("req_field").schema == (
        SchemaBuilder(SchemaType.STRING).optional().default_value("req_default").build()
    )
    assert transformed.value_schema.field("opt_field").schema == (
        SchemaBuilder(SchemaType.STRING).optional().default_value("child_default").build()
    )


def test_nested_parent_default_reaches_children() -> None:
    child = SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA)
    default = Struct(child.build(), {"x": 5})
    child_schema = child.optional().default_value(default).build()
    schema = SchemaBuilder.struct().field("c", child_schema).build()
    flat = value_xform().apply(value_record(schema, Struct(schema, {"c": None}))).value
    x = flat.schema.field("c.x").schema
    assert x.optional and x.default == 5
    # a null child struct reads as its default, as Kafka's Struct.get does
    assert flat.as_dict() == {"c.x": 5}


def test_tombstones_pass_through() -> None:
    schemaless = value_record(None, None)
    assert value_xform().apply(schemaless) is schemaless
    schema = (
        SchemaBuilder.struct()
        .name("name")
        .version(1)
        .doc("doc")
        .field("magic", Schema.OPTIONAL_INT64_SCHEMA)
        .build()
    )
    transformed = value_xform().apply(value_record(schema, None))
    assert transformed.value is None and transformed.value_schema == schema


def test_schema_basics_are_kept() -> None:
    inner = SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA).build()
    schema = SchemaBuilder.struct().name("n").version(3).doc("d").field("a", inner).build()
    out = value_xform(delimiter="_").apply(value_record(schema, Struct(schema, {"a": None})))
    assert (out.value_schema.name, out.value_schema.version, out.value_schema.doc) == (
        "n",
        3,
        "d",
    )
    assert [f.name for f in out.value_schema.fields] == ["a_x"]


def test_duplicate_flattened_names_fail() -> None:
    inner = SchemaBuilder.struct().field("b", Schema.INT32_SCHEMA).build()
    schema = SchemaBuilder.struct().field("a", inner).field("a.b", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataError, match=r"field name duplication a\.b"):
        value_xform().apply(value_record(schema, Struct(schema, {"a": None, "a.b": 1})))


def test_config() -> None:
    xform = value_xform()
    assert xform.settings == {"delimiter": "."}
    assert xform.config().keys["delimiter"].default == "."
    assert value_xform(delimiter="__").settings == {"delimiter": "__"}


def test_registry_resolves_java_and_short_names() -> None:
    plugins = Plugins([])
    for name, cls in [
        ("org.apache.kafka.connect.transforms.Flatten$Value", FlattenValue),
        ("Flatten$Value", FlattenValue),
        ("org.apache.kafka.connect.transforms.Flatten$Key", FlattenKey),
        ("Flatten$Key", FlattenKey),
    ]:
        assert plugins.find(name, [PluginType.TRANSFORMATION]).cls is cls
