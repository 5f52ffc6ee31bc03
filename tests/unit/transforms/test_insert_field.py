"""InsertField: ports of Kafka's InsertFieldTest, plus offsets, config errors and aliases."""

from __future__ import annotations

import datetime as dt
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
)
from connect_lite.api.logical import timestamp_schema
from connect_lite.plugins.registry import Plugins
from connect_lite.plugins.types import PluginType
from connect_lite.transforms.insert_field import InsertFieldKey, InsertFieldValue

ALL_FIELDS = {
    "topic.field": "topic_field!",
    "partition.field": "partition_field",
    "timestamp.field": "timestamp_field?",
    "static.field": "instance_id",
    "static.value": "my-instance-id",
}


def value_xform(**overrides: Any) -> InsertFieldValue:
    xform = InsertFieldValue()
    xform.configure({**ALL_FIELDS, **overrides})
    return xform


def key_xform() -> InsertFieldKey:
    xform = InsertFieldKey()
    xform.configure(dict(ALL_FIELDS))
    return xform


SIMPLE = SchemaBuilder.struct().name("name").version(1).doc("doc")
SIMPLE_SCHEMA = SIMPLE.field("magic", Schema.OPTIONAL_INT64_SCHEMA).build()


def test_top_level_struct_required() -> None:
    xform = InsertFieldValue()
    xform.configure({"topic.field": "topic_field"})
    with pytest.raises(DataError, match=r"Only Struct objects supported for \[field insertion\]"):
        xform.apply(
            SourceRecord(None, None, "", 42, kafka_partition=0, value_schema=Schema.INT32_SCHEMA)
        )


def test_copy_schema_and_insert_configured_fields() -> None:
    struct = Struct(SIMPLE_SCHEMA, {"magic": 42})
    record = SourceRecord(
        None, None, "test", struct, kafka_partition=0, value_schema=SIMPLE_SCHEMA, timestamp=789
    )
    out = value_xform().apply(record)
    schema = out.value_schema
    assert (schema.name, schema.version, schema.doc) == ("name", 1, "doc")
    assert schema.field("magic").schema == Schema.OPTIONAL_INT64_SCHEMA
    assert out.value.get("magic") == 42
    assert schema.field("topic_field").schema == Schema.STRING_SCHEMA
    assert out.value.get("topic_field") == "test"
    assert schema.field("partition_field").schema == Schema.OPTIONAL_INT32_SCHEMA
    assert out.value.get("partition_field") == 0
    assert schema.field("timestamp_field").schema == timestamp_schema(optional=True)
    assert out.value.get("timestamp_field") == dt.datetime(1970, 1, 1, 0, 0, 0, 789000, dt.UTC)
    assert schema.field("instance_id").schema == Schema.OPTIONAL_STRING_SCHEMA
    assert out.value.get("instance_id") == "my-instance-id"
    assert [f.name for f in schema.fields] == [
        "magic",
        "topic_field",
        "partition_field",
        "timestamp_field",
        "instance_id",
    ]
    again = value_xform().apply(
        SourceRecord(
            None, None, "test", Struct(SIMPLE_SCHEMA), kafka_partition=1, value_schema=SIMPLE_SCHEMA
        )
    )
    assert again.value_schema == schema
    assert again.value.get("timestamp_field") is None  # the record has no timestamp


def test_schemaless_insert_configured_fields() -> None:
    record = SourceRecord(None, None, "test", {"magic": 42}, kafka_partition=0, timestamp=123)
    out = value_xform().apply(record)
    assert out.value == {
        "magic": 42,
        "topic_field": "test",
        "partition_field": 0,
        "timestamp_field": 123,
        "instance_id": "my-instance-id",
    }
    assert out.value_schema is None
    assert record.value == {"magic": 42}  # the input is not modified


def test_tombstone_without_schema_left_unchanged() -> None:
    record = SourceRecord(None, None, "test", None, kafka_partition=0)
    out = value_xform().apply(record)
    assert out.value is None and out.value_schema is None


def test_tombstone_with_schema_left_unchanged() -> None:
    record = SourceRecord(None, None, "test", None, kafka_partition=0, value_schema=SIMPLE_SCHEMA)
    out = value_xform().apply(record)
    assert out.value is None and out.value_schema == SIMPLE_SCHEMA


def test_insert_key_fields_into_tombstone_event() -> None:
    record = SourceRecord(None, None, "test", None, key={"magic": 42}, kafka_partition=0)
    out = key_xform().apply(record)
    assert out.key == {
        "magic": 42,
        "topic_field": "test",
        "partition_field": 0,
        "instance_id": "my-instance-id",
    }
    assert out.value is None


def test_insert_into_null_key_leaves_record_unchanged() -> None:
    record = SourceRecord(None, None, "test", {"magic": 42}, kafka_partition=0)
    assert key_xform().apply(record) is record


@pytest.mark.parametrize(("replace", "expected"), [("false", None), ("true", 42)])
def test_unset_optional_field(replace: str, expected: int | None) -> None:
    magic = SchemaBuilder.of(SchemaType.INT64).optional().default_value(42).build()
    schema = SchemaBuilder.struct().name("name").field("magic_with_default", magic).build()
    struct = Struct(schema, {"magic_with_default": None})
    record = SourceRecord(None, None, "test", struct, kafka_partition=0, value_schema=schema)
    out = value_xform(**{"replace.null.with.default": replace}).apply(record)
    assert out.value_schema.field("magic_with_default").schema == magic
    assert out.value.get("magic_with_default") == expected


def test_offset_field_on_sink_records_only() -> None:
    xform = InsertFieldValue()
    xform.configure({"offset.field": "offset!", "partition.field": "partition"})
    sink = SinkRecord("t", 3, 17, None, {"a": 1})
    assert xform.apply(sink).value == {"a": 1, "offset": 17, "partition": 3}
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    with_schema = xform.apply(SinkRecord("t", 3, 17, None, Struct(schema, {"a": 1}), None, schema))
    assert with_schema.value_schema.field("offset").schema == Schema.INT64_SCHEMA
    assert with_schema.value.get("offset") == 17
    with pytest.raises(DataError, match=r"Only SinkRecord supported for \[field insertion\]"):
        xform.apply(SourceRecord(None, None, "t", {"a": 1}, kafka_partition=0))


def test_source_record_without_partition() -> None:
    xform = InsertFieldValue()
    xform.configure({"partition.field": "p", "topic.field": "t"})
    out = xform.apply(SourceRecord(None, None, "orders", {"a": 1}))
    assert out.value == {"a": 1, "t": "orders"}


def test_key_form_with_schema_keeps_value() -> None:
    schema = SchemaBuilder.struct().field("id", Schema.INT32_SCHEMA).build()
    record = SinkRecord("t", 0, 5, Struct(schema, {"id": 1}), "v", schema, Schema.STRING_SCHEMA)
    out = key_xform().apply(record)
    assert out.key.get("topic_field") == "t" and out.key.get("id") == 1
    assert out.value == "v" and out.value_schema == Schema.STRING_SCHEMA


def test_duplicate_field_name_is_a_data_error() -> None:
    schema = SchemaBuilder.struct().field("topic", Schema.STRING_SCHEMA).build()
    xform = InsertFieldValue()
    xform.configure({"topic.field": "topic"})
    with pytest.raises(DataError, match="field name duplication topic"):
        xform.apply(SourceRecord(None, None, "t", Struct(schema), value_schema=schema))


def test_config_errors() -> None:
    with pytest.raises(ConfigError, match=r"^No field insertion configured$"):
        InsertFieldValue().configure({})
    with pytest.raises(ConfigError) as info:
        InsertFieldValue().configure({"static.field": "s"})
    assert str(info.value) == (
        "Invalid value null for configuration static.value: No value specified for static field: s"
    )
    assert "static.value" in info.value.errors
    xform = InsertFieldValue()
    xform.configure({"topic.field": "t!"})
    assert xform.settings["topic.field"] == "t!"
    assert xform.settings["replace.null.with.default"] is True


def test_registry_resolves_java_names_and_aliases() -> None:
    plugins = Plugins([])
    for name, cls in [
        ("org.apache.kafka.connect.transforms.InsertField$Value", InsertFieldValue),
        ("org.apache.kafka.connect.transforms.InsertField$Key", InsertFieldKey),
        ("InsertField$Value", InsertFieldValue),
        ("InsertField$Key", InsertFieldKey),
    ]:
        assert plugins.find(name, [PluginType.TRANSFORMATION]).cls is cls
