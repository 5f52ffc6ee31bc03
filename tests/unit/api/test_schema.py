"""Schemas: the field-name index (O(1) lookups that leave equality, hashing and pickling alone),
and parameters in the order they were set."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from types import MappingProxyType

import pytest

from connect_lite.api import DataError, Schema, SchemaBuilder, SchemaType, Struct
from connect_lite.api.data import schema_json_form


def schema() -> Schema:
    return (
        SchemaBuilder.struct()
        .name("row")
        .field("a", Schema.INT32_SCHEMA)
        .field("b", Schema.OPTIONAL_STRING_SCHEMA)
        .build()
    )


def test_field_finds_fields_by_name() -> None:
    s = schema()
    found = s.field("b")
    assert found is not None and (found.name, found.index) == ("b", 1)
    assert found is s.fields[1]
    assert s.field("c") is None
    assert Schema.STRING_SCHEMA.field("a") is None


def test_the_index_takes_no_part_in_equality_hashing_or_repr() -> None:
    indexed, fresh = schema(), schema()
    indexed.field("a")
    assert "fields_by_name" in vars(indexed) and "fields_by_name" not in vars(fresh)
    assert indexed == fresh and hash(indexed) == hash(fresh)
    assert repr(indexed) == repr(fresh)
    assert {indexed: 1}[fresh] == 1


def test_pickled_schemas_leave_the_index_out_and_rebuild_it() -> None:
    s = schema()
    s.field("a")
    restored = pickle.loads(pickle.dumps(s))
    assert restored == s and hash(restored) == hash(s)
    assert "fields_by_name" not in vars(restored)
    found = restored.field("b")
    assert found is restored.fields[1]
    assert len(pickle.dumps(s)) == len(pickle.dumps(schema()))  # same bytes as unindexed


def test_copies_and_replacements_index_their_own_fields() -> None:
    s = schema()
    s.field("a")
    assert copy.copy(s).field("a") == s.field("a")
    assert copy.deepcopy(s) == s
    renamed = dataclasses.replace(s, fields=(dataclasses.replace(s.fields[0], name="z"),))
    assert renamed.field("z") is renamed.fields[0]
    assert renamed.field("a") is None


def test_struct_accepts_known_fields_from_any_mapping() -> None:
    s = schema()
    struct = Struct(s, MappingProxyType({"a": 1, "b": "x"}))
    assert struct.as_dict() == {"a": 1, "b": "x"}
    assert Struct(s, {"a": 1}) == Struct(s).put("a", 1)
    assert Struct(s, {}).as_dict() == {"a": None, "b": None}


def test_struct_rejects_unknown_fields_in_init_and_put() -> None:
    with pytest.raises(DataError, match=r"^c is not a valid field name$"):
        Struct(schema(), {"a": 1, "c": 2})
    with pytest.raises(DataError, match=r"^c is not a valid field name$"):
        Struct(schema()).put("c", 2)


def test_struct_init_copies_the_values() -> None:
    values = {"a": 1}
    struct = Struct(schema(), values)
    values["a"] = 2
    assert struct.get("a") == 1


def test_parameters_keep_their_order_and_equality_ignores_it() -> None:
    """Kafka keeps parameters in a LinkedHashMap, and its JsonConverter writes them in that
    order (Debezium's Decimal: ``scale``, then ``connect.decimal.precision``)."""
    first = SchemaBuilder(SchemaType.BYTES).parameter("scale", "2").parameter("p", "10").build()
    other = SchemaBuilder(SchemaType.BYTES).parameter("p", "10").parameter("scale", "2").build()
    assert list(schema_json_form(first)["parameters"]) == ["scale", "p"]
    assert first.parameters == (("scale", "2"), ("p", "10"))
    assert first == other and hash(first) == hash(other)
    assert (
        first
        != SchemaBuilder(SchemaType.BYTES).parameter("scale", "3").parameter("p", "10").build()
    )
    assert pickle.loads(pickle.dumps(first)) == first
