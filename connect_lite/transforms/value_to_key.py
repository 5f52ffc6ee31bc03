"""ValueToKey: make the record key from a subset of the value's fields."""

from __future__ import annotations

import dataclasses
from typing import Any

from connect_lite.api import ConfigDef, DataError, Importance, Schema, SchemaBuilder, Struct, Type
from connect_lite.api.column_form import ColumnFrame, fields_of, struct_of
from connect_lite.api.config import valid_list
from connect_lite.transforms.base import (
    REPLACE_NULL_WITH_DEFAULT,
    BuiltinTransformation,
    SchemaCache,
    define_replace_null_with_default,
    kafka_class,
    require_map,
    require_struct,
    struct_get,
    updated,
)

FIELDS = "fields"
PURPOSE = "copying fields from value to key"


class ValueToKey(BuiltinTransformation):
    """Kafka's ValueToKey (one form only, no $Key/$Value): the key becomes a map, or a Struct
    of the named value fields in ``fields`` order. The value is left as it is."""

    __connect_class_name__ = kafka_class("ValueToKey")

    def config(self) -> ConfigDef:
        config = ConfigDef().define(
            FIELDS,
            Type.LIST,
            validator=valid_list(allow_empty=False),
            importance=Importance.HIGH,
            doc="Field names on the record value to extract as the record key.",
        )
        return define_replace_null_with_default(config)

    def configure(self, config: dict[str, str]) -> None:
        self.settings = self.config().parse(config)
        self._fields: list[str] = list(self.settings[FIELDS])
        self._replace_null = bool(self.settings[REPLACE_NULL_WITH_DEFAULT])
        self._key_schemas = SchemaCache(self._key_schema)

    def apply(self, record: Any) -> Any:
        if record.value_schema is None:
            mapping = require_map(record.value, PURPOSE)
            key = {name: mapping.get(name) for name in self._fields}
            return updated(record, key_schema=None, key=key)
        struct = require_struct(record.value, PURPOSE)
        key_schema = self._key_schemas.get(struct.schema)
        values = {name: struct_get(struct, name, self._replace_null) for name in self._fields}
        return updated(
            record,
            key_schema=key_schema,
            key=Struct(key_schema, values),
            value_schema=struct.schema,
        )

    def column_form(self, frame: ColumnFrame, out: Any) -> ColumnFrame | None:
        found = frame.struct_side(is_key=False)
        if found is None or out.key_schema is None:
            return None
        _, value, value_schema = found
        key = struct_of(fields_of(value, value_schema), out.key_schema)
        moved = frame.with_side("key", key, out.key_schema)
        return dataclasses.replace(moved, touched=moved.touched | {"value"})

    def _key_schema(self, value_schema: Schema) -> Schema:
        builder = SchemaBuilder.struct()
        for name in self._fields:
            field = value_schema.field(name)
            if field is None:
                raise DataError(f"Field does not exist: {name}")
            builder.field(name, field.schema)
        return builder.build()


__all__ = ["ValueToKey"]
