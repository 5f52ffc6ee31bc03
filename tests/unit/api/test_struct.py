"""Struct reads: Kafka's ``get`` (falls back to the schema default) vs ``getWithoutDefault``."""

from __future__ import annotations

import pytest

from connect_lite.api import DataError, SchemaBuilder, SchemaType, Struct

FIELD = SchemaBuilder.of(SchemaType.STRING).optional().default_value("d").build()
SCHEMA = SchemaBuilder.struct().field("s", FIELD).build()


def test_get_without_default_gives_the_stored_value_only() -> None:
    unset, null, present = Struct(SCHEMA), Struct(SCHEMA, {"s": None}), Struct(SCHEMA, {"s": "x"})
    assert [s.get_without_default("s") for s in (unset, null, present)] == [None, None, "x"]
    assert unset.get("s") == "d"  # get, unlike get_without_default, uses the default


def test_get_without_default_rejects_unknown_fields() -> None:
    with pytest.raises(DataError) as info:
        Struct(SCHEMA).get_without_default("nope")
    assert str(info.value) == "nope is not a valid field name"
