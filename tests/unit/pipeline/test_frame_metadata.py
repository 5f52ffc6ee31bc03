"""A put_dataframe frame's key and value columns carry their Connect schema (connect.schema)."""

from __future__ import annotations

import json

from connect_lite.api import Decimal, SchemaBuilder, SchemaType
from connect_lite.api.data import Schema
from connect_lite.pipeline.sink_frames import frame_metadata, schema_form


def test_schema_form_is_jsonconverters_with_required_fields_names_and_defaults() -> None:
    value = (
        SchemaBuilder.struct()
        .name("shop.Order")
        .version(2)
        .field("id", Schema.INT32_SCHEMA)
        .field("note", SchemaBuilder.of(SchemaType.STRING).optional().default_value("none").build())
        .field("price", Decimal.schema(2, optional=True))
        .build()
    )
    assert schema_form(value) == {
        "type": "struct",
        "optional": False,
        "name": "shop.Order",
        "version": 2,
        "fields": [
            {"type": "int32", "optional": False, "field": "id"},
            {"type": "string", "optional": True, "default": "none", "field": "note"},
            {
                "type": "bytes",
                "optional": True,
                "name": "org.apache.kafka.connect.data.Decimal",
                "version": 1,
                "parameters": {"scale": "2"},
                "field": "price",
            },
        ],
    }


def test_only_typed_sides_get_metadata() -> None:
    found = frame_metadata(None, Schema.OPTIONAL_STRING_SCHEMA)
    assert list(found) == ["value"]
    assert json.loads(found["value"]) == {"type": "string", "optional": True}
