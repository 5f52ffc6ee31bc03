"""InsertHeader: ports of Kafka's InsertHeaderTest, plus the literal's inferred schemas."""

from __future__ import annotations

from typing import Any

import pytest

from connect_lite.api import ConfigError, Headers, Schema, SchemaBuilder, SinkRecord, SourceRecord
from connect_lite.plugins.registry import Plugins
from connect_lite.plugins.types import PluginType
from connect_lite.transforms.insert_header import InsertHeader


def xform(header: Any, literal: Any) -> InsertHeader:
    t = InsertHeader()
    t.configure({"header": header, "value.literal": literal})
    return t


def source(headers: Headers) -> SourceRecord:
    return SourceRecord({"foo": "bar"}, {"baz": "quxx"}, "topic", "value", "key", 0, None, None, 0,
                        headers)  # fmt: skip


def assert_non_headers(original: Any, transformed: Any) -> None:
    for name in ("source_partition", "source_offset", "topic", "kafka_partition", "key_schema",
                 "key", "value_schema", "value", "timestamp"):  # fmt: skip
        assert getattr(transformed, name) == getattr(original, name), name


def test_insertion_with_existing_other_header() -> None:
    headers = Headers().add("existing", "existing-value", Schema.STRING_SCHEMA)
    original = source(headers)
    transformed = xform("inserted", "inserted-value").apply(original)
    assert_non_headers(original, transformed)
    assert transformed.headers == headers.add("inserted", "inserted-value", Schema.STRING_SCHEMA)


def test_insertion_with_existing_same_header_appends() -> None:
    headers = Headers().add("existing", "preexisting-value", Schema.STRING_SCHEMA)
    transformed = xform("existing", "inserted-value").apply(source(headers))
    assert [(h.key, h.value) for h in transformed.headers] == [
        ("existing", "preexisting-value"),
        ("existing", "inserted-value"),
    ]
    assert transformed.headers.last_with_name("existing").value == "inserted-value"


def test_insertion_with_byte_header() -> None:
    transformed = xform("inserted", "1").apply(source(Headers()))
    assert transformed.headers == Headers().add("inserted", 1, Schema.INT8_SCHEMA)


@pytest.mark.parametrize(
    ("literal", "schema", "value"),
    [
        ("true", Schema.BOOLEAN_SCHEMA, True),
        ("1234", Schema.INT16_SCHEMA, 1234),
        ("null", None, None),
        ("best-app-ever", Schema.STRING_SCHEMA, "best-app-ever"),
        ("", Schema.STRING_SCHEMA, ""),
        ("[-3, 0, 5]", SchemaBuilder.array(Schema.INT8_SCHEMA).build(), [-3, 0, 5]),
    ],
)
def test_literal_is_parsed_like_values_parse_string(
    literal: str, schema: Schema | None, value: Any
) -> None:
    header = xform("h", literal).apply(source(Headers())).headers.last_with_name("h")
    assert header is not None
    assert (header.schema, header.value) == (schema, value)


def test_sink_records_too_and_no_shared_mutable_literal() -> None:
    t = xform("h", "[1,2]")
    first = t.apply(SinkRecord("t", 0, 5, None, "v"))
    second = t.apply(SinkRecord("t", 0, 6, None, "v"))
    assert first.kafka_offset == 5 and first.headers.last_with_name("h").value == [1, 2]
    assert first.headers.last_with_name("h").value is not second.headers.last_with_name("h").value


def test_config_rejects_null_header_key_and_value() -> None:
    cases = [
        ({"header": None, "value.literal": "1"},
         "Invalid value null for configuration header: entry must be non null"),
        ({"header": "inserted", "value.literal": None},
         "Invalid value null for configuration value.literal: entry must be non null"),
        ({"header": "h"},
         'Missing required configuration "value.literal" which has no default value.'),
    ]  # fmt: skip
    for config, message in cases:
        with pytest.raises(ConfigError) as error:
            InsertHeader().configure(config)
        assert str(error.value) == message


def test_settings_and_registry_names() -> None:
    t = xform("h", "x")
    assert t.settings == {"header": "h", "value.literal": "x"}
    plugins = Plugins([])
    for name in ("org.apache.kafka.connect.transforms.InsertHeader", "InsertHeader"):
        assert plugins.find(name, [PluginType.TRANSFORMATION]).cls is InsertHeader
