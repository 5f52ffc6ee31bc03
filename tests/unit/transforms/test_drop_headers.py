"""DropHeaders: ports of Kafka's DropHeadersTest."""

from __future__ import annotations

import pytest

from connect_lite.api import ConfigError, Headers, SinkRecord, SourceRecord
from connect_lite.plugins.registry import Plugins
from connect_lite.plugins.types import PluginType
from connect_lite.transforms.drop_headers import DropHeaders


def xform(names: str) -> DropHeaders:
    t = DropHeaders()
    t.configure({"headers": names})
    return t


def source(headers: Headers) -> SourceRecord:
    return SourceRecord({"foo": "bar"}, {"baz": "quxx"}, "topic", "value", "key", 0, None, None, 0,
                        headers)  # fmt: skip


EXPECTED = Headers().add("existing", "existing-value")


def test_drop_existing_header() -> None:
    original = source(EXPECTED.add("to-drop", "existing-value"))
    transformed = xform("to-drop").apply(original)
    assert transformed.headers == EXPECTED
    assert (transformed.topic, transformed.key, transformed.value) == ("topic", "key", "value")
    assert transformed.source_offset == {"baz": "quxx"} and transformed.timestamp == 0


def test_drop_existing_header_with_multiple_values() -> None:
    original = source(EXPECTED.add("to-drop", "a").add("to-drop", "b"))
    assert xform("to-drop").apply(original).headers == EXPECTED


def test_drop_non_existing_header() -> None:
    original = source(EXPECTED)
    assert xform("to-drop").apply(original).headers == EXPECTED


def test_drop_several_names_keeps_order_of_the_rest() -> None:
    headers = Headers.of([("a", 1), ("x", 2), ("b", 3), ("y", 4), ("a", 5)])
    transformed = xform("x, y").apply(SinkRecord("t", 0, 1, None, None, headers=headers))
    assert [(h.key, h.value) for h in transformed.headers] == [("a", 1), ("b", 3), ("a", 5)]


def test_config_rejects_empty_and_missing_list() -> None:
    with pytest.raises(ConfigError) as error:
        xform("")
    assert str(error.value) == "Invalid value [] for configuration headers: Empty list"
    with pytest.raises(ConfigError, match='Missing required configuration "headers"'):
        DropHeaders().configure({})


def test_settings_and_registry_names() -> None:
    assert xform("a,b").settings == {"headers": ["a", "b"]}
    plugins = Plugins([])
    for name in ("org.apache.kafka.connect.transforms.DropHeaders", "DropHeaders"):
        assert plugins.find(name, [PluginType.TRANSFORMATION]).cls is DropHeaders
