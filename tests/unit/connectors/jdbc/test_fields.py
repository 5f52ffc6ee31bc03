"""The columns of a record by pk.mode, as Confluent's FieldsMetadata makes them."""

from __future__ import annotations

from typing import Any

import pytest

from connect_lite.api import ConnectError
from connect_lite.connectors.jdbc.config import PkMode
from connect_lite.connectors.jdbc.fields import layout

VALUE = {
    "type": "struct",
    "fields": [
        {"field": "name", "type": "string", "optional": True},
        {"field": "id", "type": "int32"},
        {"field": "qty", "type": "int64"},
    ],
}
STRUCT_KEY = {
    "type": "struct",
    "fields": [{"field": "id", "type": "int32"}, {"field": "zone", "type": "string"}],
}


def names(columns: Any) -> list[str]:
    return [c.name for c in columns]


def test_none_writes_the_value_fields_without_keys() -> None:
    found = layout(PkMode.NONE, [], [], None, VALUE, "t")
    assert (names(found.keys), names(found.others)) == ([], ["name", "id", "qty"])


def test_kafka_coordinates_come_first_and_may_be_renamed() -> None:
    found = layout(PkMode.KAFKA, [], ["qty"], None, VALUE, "t")
    assert names(found.keys) == ["__connect_topic", "__connect_partition", "__connect_offset"]
    assert names(found.others) == ["qty"]  # fields.whitelist
    assert names(found.create_order()) == [*names(found.keys), "qty"]
    renamed = layout(PkMode.KAFKA, ["t", "p", "o"], [], None, VALUE, "t")
    assert names(renamed.create_order()) == ["name", "id", "qty", "o", "p", "t"]
    with pytest.raises(ConnectError, match=r"or exactly 3, defined fields are: \[a, b\]"):
        layout(PkMode.KAFKA, ["a", "b"], [], None, VALUE, "t")


def test_record_key_struct_primitive_and_errors() -> None:
    found = layout(PkMode.RECORD_KEY, [], [], STRUCT_KEY, VALUE, "t")
    assert names(found.keys) == ["id", "zone"]
    assert names(found.others) == ["name", "qty"]  # the key wins over the value's id
    assert names(found.create_order()) == ["name", "id", "qty", "zone"]  # key-only last
    assert [s for s in found.sources] == [
        ("key", "id"), ("key", "zone"), ("value", "name"), ("value", "qty")
    ]  # fmt: skip
    primitive = layout(PkMode.RECORD_KEY, ["k"], [], {"type": "string"}, VALUE, "t")
    assert names(primitive.keys) == ["k"] and primitive.sources[0] == ("key", None)
    with pytest.raises(ConnectError, match=r"Need exactly one PK column .* are: \[\]"):
        layout(PkMode.RECORD_KEY, [], [], {"type": "string"}, VALUE, "t")
    with pytest.raises(ConnectError, match="record key schema is missing"):
        layout(PkMode.RECORD_KEY, [], [], None, VALUE, "t")
    with pytest.raises(ConnectError, match="does not contain field: nope"):
        layout(PkMode.RECORD_KEY, ["nope"], [], STRUCT_KEY, VALUE, "t")


def test_record_value_all_fields_when_none_are_named() -> None:
    found = layout(PkMode.RECORD_VALUE, [], [], None, VALUE, "t")
    assert (names(found.keys), names(found.others)) == (["name", "id", "qty"], [])
    assert all(not c.optional for c in found.keys)  # keys are NOT NULL
    named = layout(PkMode.RECORD_VALUE, ["id"], [], None, VALUE, "t")
    assert (names(named.keys), names(named.others)) == (["id"], ["name", "qty"])


def test_a_string_value_is_one_column() -> None:
    found = layout(PkMode.NONE, [], [], None, {"type": "string"}, "t", "payload")
    assert names(found.others) == ["payload"] and found.sources == (("value", None),)
    with pytest.raises(ConnectError, match="not supported with String value schemas"):
        layout(PkMode.RECORD_VALUE, [], [], None, {"type": "string"}, "t")
