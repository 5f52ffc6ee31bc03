"""HoistField: ports of Kafka's HoistFieldTest, plus null handling and aliases."""

from __future__ import annotations

import pytest

from connect_lite.api import DataError, Schema, SchemaBuilder, SinkRecord, Struct
from connect_lite.plugins.registry import Plugins
from connect_lite.plugins.types import PluginType
from connect_lite.transforms.hoist_field import HoistFieldKey, HoistFieldValue


def key_xform(field: str = "magic") -> HoistFieldKey:
    xform = HoistFieldKey()
    xform.configure({"field": field})
    return xform


def test_schemaless() -> None:
    out = key_xform().apply(SinkRecord("test", 0, 0, 42, None))
    assert out.key_schema is None and out.key == {"magic": 42}


def test_with_schema() -> None:
    out = key_xform().apply(SinkRecord("test", 0, 0, 42, None, Schema.INT32_SCHEMA))
    assert out.key_schema.type.name == "STRUCT"
    assert [f.name for f in out.key_schema.fields] == ["magic"]
    assert out.key_schema.field("magic").schema == Schema.INT32_SCHEMA
    assert out.key.get("magic") == 42 and out.key.schema == out.key_schema


def test_hoists_a_struct_and_keeps_the_other_side() -> None:
    inner = SchemaBuilder.struct().field("a", Schema.STRING_SCHEMA).build()
    xform = HoistFieldValue()
    xform.configure({"field": "payload"})
    record = SinkRecord("t", 0, 0, "k", Struct(inner, {"a": "x"}), Schema.STRING_SCHEMA, inner)
    out = xform.apply(record)
    assert out.value.get("payload") == Struct(inner, {"a": "x"})
    assert out.key == "k" and out.key_schema == Schema.STRING_SCHEMA


def test_null_is_wrapped_too() -> None:
    assert key_xform().apply(SinkRecord("t", 0, 0, None, None)).key == {"magic": None}
    out = key_xform().apply(SinkRecord("t", 0, 0, None, None, Schema.OPTIONAL_INT32_SCHEMA))
    assert out.key.get("magic") is None
    with pytest.raises(DataError) as info:
        key_xform().apply(SinkRecord("t", 0, 0, None, None, Schema.INT32_SCHEMA))
    assert str(info.value) == (
        'Invalid value: null used for required field: "magic", schema type: INT32'
    )


def test_field_is_required() -> None:
    from connect_lite.api import ConfigError

    with pytest.raises(ConfigError, match='Missing required configuration "field"'):
        HoistFieldValue().configure({})


def test_registry_resolves_java_names_and_aliases() -> None:
    plugins = Plugins([])
    for name, cls in [
        ("org.apache.kafka.connect.transforms.HoistField$Key", HoistFieldKey),
        ("org.apache.kafka.connect.transforms.HoistField$Value", HoistFieldValue),
        ("HoistField$Key", HoistFieldKey),
        ("HoistField$Value", HoistFieldValue),
    ]:
        assert plugins.find(name, [PluginType.TRANSFORMATION]).cls is cls
