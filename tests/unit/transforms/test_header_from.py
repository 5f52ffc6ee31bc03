"""HeaderFrom: ports of Kafka's HeaderFromTest (key and value, schemaless and with schema)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from connect_lite.api import (
    ConfigError,
    DataError,
    Headers,
    Schema,
    SchemaBuilder,
    SourceRecord,
    Struct,
)
from connect_lite.plugins.registry import Plugins
from connect_lite.plugins.types import PluginType
from connect_lite.transforms.header_from import HeaderFromKey, HeaderFromValue, _HeaderFrom

STRING = Schema.STRING_SCHEMA


@dataclass
class Builder:
    """Kafka's RecordBuilder: fields of the key/value and the record's headers."""

    fields: list[tuple[str, Schema, Any]] = field(default_factory=list)
    headers: list[tuple[str, Schema, Any]] = field(default_factory=list)

    def with_field(self, name: str, schema: Schema, value: Any) -> Builder:
        self.fields.append((name, schema, value))
        return self

    def add_header(self, name: str, schema: Schema, value: Any) -> Builder:
        self.headers.append((name, schema, value))
        return self

    def schemaless(self, key: bool) -> SourceRecord:
        headers = Headers()
        for name, _, value in self.headers:
            headers = headers.add(name, value, None)  # schemaless headers carry no schema
        return record(key, None, {name: value for name, _, value in self.fields}, headers)

    def with_schema(self, key: bool) -> SourceRecord:
        builder = SchemaBuilder.struct()
        for name, schema, _ in self.fields:
            builder.field(name, schema)
        schema = builder.build()
        struct = Struct(schema, {name: value for name, _, value in self.fields})
        headers = Headers()
        for name, header_schema, value in self.headers:
            headers = headers.add(name, value, header_schema)
        return record(key, schema, struct, headers)


def record(key: bool, schema: Schema | None, value: Any, headers: Headers) -> SourceRecord:
    return SourceRecord(
        {"foo": "bar"},
        {"baz": "quxx"},
        "topic",
        value if not key else "value",
        value if key else "key",
        0,
        schema if key else None,
        schema if not key else None,
        0,
        headers,
    )


NESTED = SchemaBuilder.struct().field("foo", STRING).build()
NESTED_VALUE = Struct(NESTED, {"foo": "foo-value"})


def two_fields(first: tuple[Schema, Any] = (STRING, "field1-value")) -> Builder:
    return Builder().with_field("field1", *first).with_field("field2", STRING, "field2-value")


CASES = [
    (
        "basic copy",
        two_fields().add_header("header1", STRING, "existing-value"),
        "field1", "inserted1", "copy",
        two_fields().add_header("header1", STRING, "existing-value")
        .add_header("inserted1", STRING, "field1-value"),
    ),
    (
        "basic move",
        two_fields().add_header("header1", STRING, "existing-value"),
        "field1", "inserted1", "move",
        Builder().with_field("field2", STRING, "field2-value")
        .add_header("header1", STRING, "existing-value")
        .add_header("inserted1", STRING, "field1-value"),
    ),
    (
        "copy with preexisting header",
        two_fields().add_header("inserted1", STRING, "existing-value"),
        "field1", "inserted1", "copy",
        two_fields().add_header("inserted1", STRING, "existing-value")
        .add_header("inserted1", STRING, "field1-value"),
    ),
    (
        "move with preexisting header",
        two_fields().add_header("inserted1", STRING, "existing-value"),
        "field1", "inserted1", "move",
        Builder().with_field("field2", STRING, "field2-value")
        .add_header("inserted1", STRING, "existing-value")
        .add_header("inserted1", STRING, "field1-value"),
    ),
    (
        "copy with struct value",
        two_fields((NESTED, NESTED_VALUE)).add_header("header1", STRING, "existing-value"),
        "field1", "inserted1", "copy",
        two_fields((NESTED, NESTED_VALUE)).add_header("header1", STRING, "existing-value")
        .add_header("inserted1", NESTED, NESTED_VALUE),
    ),
    (
        "move with struct value",
        two_fields((NESTED, NESTED_VALUE)).add_header("header1", STRING, "existing-value"),
        "field1", "inserted1", "move",
        Builder().with_field("field2", STRING, "field2-value")
        .add_header("header1", STRING, "existing-value")
        .add_header("inserted1", NESTED, NESTED_VALUE),
    ),
    (
        "two headers from same field",
        two_fields().add_header("header1", STRING, "existing-value"),
        "field1,field1", "inserted1,inserted2", "move",
        Builder().with_field("field2", STRING, "field2-value")
        .add_header("header1", STRING, "existing-value")
        .add_header("inserted1", STRING, "field1-value")
        .add_header("inserted2", STRING, "field1-value"),
    ),
    (
        "two fields to same header",
        two_fields().add_header("header1", STRING, "existing-value"),
        "field1,field2", "inserted1,inserted1", "move",
        Builder().add_header("header1", STRING, "existing-value")
        .add_header("inserted1", STRING, "field1-value")
        .add_header("inserted1", STRING, "field2-value"),
    ),
]  # fmt: skip


def xform(key: bool, fields: str, headers: str, operation: str, **extra: str) -> _HeaderFrom:
    t: _HeaderFrom = HeaderFromKey() if key else HeaderFromValue()
    t.configure({"fields": fields, "headers": headers, "operation": operation, **extra})
    return t


@pytest.mark.parametrize("key", [True, False], ids=["key", "value"])
@pytest.mark.parametrize(("case", "original", "fields", "headers", "operation", "expected"), CASES)
def test_schemaless(
    key: bool, case: str, original: Builder, fields: str, headers: str, operation: str,
    expected: Builder,
) -> None:  # fmt: skip
    transformed = xform(key, fields, headers, operation).apply(original.schemaless(key))
    assert transformed == expected.schemaless(key), case


@pytest.mark.parametrize("key", [True, False], ids=["key", "value"])
@pytest.mark.parametrize(("case", "original", "fields", "headers", "operation", "expected"), CASES)
def test_with_schema(
    key: bool, case: str, original: Builder, fields: str, headers: str, operation: str,
    expected: Builder,
) -> None:  # fmt: skip
    transformed = xform(key, fields, headers, operation).apply(original.with_schema(key))
    assert transformed == expected.with_schema(key), case


@pytest.mark.parametrize("key", [True, False])
def test_invalid_config_extra_header_or_field(key: bool) -> None:
    message = "'fields' config must have the same number of elements as 'headers' config."
    with pytest.raises(ConfigError) as error:
        xform(key, "foo,bar", "foo", "copy")
    assert str(error.value) == message
    with pytest.raises(ConfigError) as error:
        xform(key, "foo", "foo,bar", "copy")
    assert str(error.value) == message


@pytest.mark.parametrize("key", [True, False])
def test_invalid_config_empty_headers_and_fields(key: bool) -> None:
    with pytest.raises(ConfigError) as error:
        xform(key, "", "", "copy")
    assert str(error.value).splitlines() == [
        "Invalid value [] for configuration fields: Empty list",
        "Invalid value [] for configuration headers: Empty list",
    ]


def test_invalid_operation_and_missing_keys() -> None:
    with pytest.raises(ConfigError) as error:
        xform(False, "a", "b", "rename")
    assert str(error.value) == (
        "Invalid value rename for configuration operation: String must be one of: move, copy"
    )
    with pytest.raises(ConfigError, match='Missing required configuration "operation"'):
        HeaderFromValue().configure({"fields": "a", "headers": "b"})


def test_null_or_wrong_value_is_a_data_error() -> None:
    with pytest.raises(DataError) as error:
        xform(False, "a", "b", "copy").apply(SourceRecord(None, None, "t", None))
    assert str(error.value) == (
        "Only Map objects supported in absence of schema for [header copy], found: null"
    )
    with pytest.raises(DataError) as error:
        xform(True, "a", "b", "move").apply(SourceRecord(None, None, "t", "v", "k", None, STRING))
    assert str(error.value) == (
        "Only Struct objects supported for [header move], found: java.lang.String"
    )


def test_missing_field() -> None:
    schemaless = xform(False, "nope", "h", "move").apply(SourceRecord(None, None, "t", {"a": 1}))
    assert schemaless.value == {"a": 1}
    assert list(schemaless.headers) == list(Headers().add("h", None))
    with pytest.raises(DataError, match="nope is not a valid field name"):
        xform(False, "nope", "h", "copy").apply(two_fields().with_schema(False))


def test_moved_schema_keeps_name_version_doc_and_parameters() -> None:
    schema = (
        SchemaBuilder.struct().name("com.acme.Order").version(3).doc("an order")
        .parameter("p", "1").field("id", Schema.INT64_SCHEMA).field("note", STRING).build()
    )  # fmt: skip
    t = xform(False, "id", "order-id", "move")
    value = Struct(schema, {"id": 7, "note": "hi"})
    out = t.apply(SourceRecord(None, None, "t", value, None, None, None, schema))
    assert out.value_schema.name == "com.acme.Order" and out.value_schema.version == 3
    assert out.value_schema.doc == "an order" and out.value_schema.params == {"p": "1"}
    assert [f.name for f in out.value_schema.fields] == ["note"]
    assert out.value == Struct(out.value_schema, {"note": "hi"})
    assert out.headers == Headers().add("order-id", 7, Schema.INT64_SCHEMA)
    again = t.apply(SourceRecord(None, None, "t", value, None, None, None, schema))
    assert again.value_schema is out.value_schema  # the moved schema is reused
    assert value.as_dict() == {"id": 7, "note": "hi"}  # the original is untouched


def test_replace_null_with_default() -> None:
    with_default = SchemaBuilder.of(STRING.type).optional().default_value("dflt").build()
    schema = SchemaBuilder.struct().field("a", with_default).field("b", with_default).build()
    value = Struct(schema, {"a": None, "b": None})
    original = SourceRecord(None, None, "t", value, None, None, None, schema)
    replaced = xform(False, "a", "h", "move").apply(original)
    assert replaced.headers.last_with_name("h").value == "dflt"
    assert replaced.value.get("b") == "dflt"
    kept = xform(False, "a", "h", "move", **{"replace.null.with.default": "false"}).apply(original)
    assert kept.headers.last_with_name("h").value is None
    assert kept.value.get("b") is None


def test_settings_and_registry_names() -> None:
    t = xform(True, "a, b", "x,y", "copy")
    assert t.settings == {
        "fields": ["a", "b"],
        "headers": ["x", "y"],
        "operation": "copy",
        "replace.null.with.default": True,
    }
    plugins = Plugins([])
    for names, cls in (
        (("org.apache.kafka.connect.transforms.HeaderFrom$Key", "HeaderFrom$Key"), HeaderFromKey),
        (
            ("org.apache.kafka.connect.transforms.HeaderFrom$Value", "HeaderFrom$Value"),
            HeaderFromValue,
        ),
    ):
        for name in names:
            assert plugins.find(name, [PluginType.TRANSFORMATION]).cls is cls
