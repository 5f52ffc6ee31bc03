"""ExtractField: replace a key or value with one (possibly nested, KIP-821) field of it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_lite.api import ConfigDef, DataError, Importance, SchemaType, Struct, Type
from connect_lite.api.column_form import ColumnFrame, out_schema
from connect_lite.api.field_path import FIELD_SYNTAX_VERSION, FieldPath, define_field_syntax
from connect_lite.transforms.base import (
    REPLACE_NULL_WITH_DEFAULT,
    KeyOrValue,
    define_replace_null_with_default,
    kafka_class,
    require_map_or_null,
    require_struct_or_null,
    struct_get,
)

FIELD = "field"
PURPOSE = "field extraction"
NESTED_PURPOSE = "nested field access"


class _ExtractField(KeyOrValue):
    """Kafka's ExtractField: a Struct or map becomes the value of one of its fields; null
    passes through. A missing field is null without a schema and an error with one."""

    def config(self) -> ConfigDef:
        config = ConfigDef().define(
            FIELD, Type.STRING, importance=Importance.MEDIUM, doc="Field name to extract."
        )
        return define_field_syntax(define_replace_null_with_default(config))

    def configure(self, config: dict[str, str]) -> None:
        self.settings = self.config().parse(config)
        self._syntax = str(self.settings[FIELD_SYNTAX_VERSION]).upper()
        self._path = FieldPath.parse(self.settings[FIELD], self._syntax)
        self._replace_null = bool(self.settings[REPLACE_NULL_WITH_DEFAULT])

    def apply(self, record: Any) -> Any:
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        if schema is None:
            mapping = require_map_or_null(value, PURPOSE)
            return self.new_record(
                record, None, None if mapping is None else self._from_map(mapping)
            )
        struct = require_struct_or_null(value, PURPOSE)
        field_schema = self._path.schema_field(schema)
        if field_schema is None:
            raise DataError(f"Unknown field: {self._describe_path()}")
        extracted = None if struct is None else self._from_struct(struct)
        return self.new_record(record, field_schema, extracted)

    def _from_map(self, mapping: Mapping[str, Any]) -> Any:
        current = mapping
        for step in self._path.steps[:-1]:
            nested = require_map_or_null(current.get(step), NESTED_PURPOSE)
            if nested is None:
                return None
            current = nested
        return current.get(self._path.name)

    def _from_struct(self, struct: Struct) -> Any:
        current = struct
        for step in self._path.steps[:-1]:
            if current.schema.field(step) is None:
                return None
            nested = require_struct_or_null(struct_get(current, step), NESTED_PURPOSE)
            if nested is None:
                return None
            current = nested
        if current.schema.field(self._path.name) is None:
            return None
        return struct_get(current, self._path.name, self._replace_null)

    def _describe_path(self) -> str:
        """Kafka's ``SingleFieldPath.toString()``, which its error message embeds."""
        return f"SingleFieldPath{{version={self._syntax}, path={'.'.join(self._path.steps)}}}"

    def column_form(self, frame: ColumnFrame, out: Any) -> ColumnFrame | None:
        found, schema = frame.struct_side(self.is_key), out_schema(self.is_key, out)
        if found is None or schema is None or schema.optional:
            return None  # an optional field may be null, and a null changes the next schemas
        side, column, struct = found
        steps = self._path.steps
        for step in steps[:-1]:  # nor may any struct on the way be null
            inner = struct.field(step)
            if inner is None or inner.schema.optional or inner.schema.type is not SchemaType.STRUCT:
                return None
            struct = inner.schema
        for step in steps:
            column = column.field(step)
        return frame.with_side(side, column, schema)


class ExtractFieldKey(_ExtractField):
    is_key = True
    __connect_class_name__ = kafka_class("ExtractField$Key")


class ExtractFieldValue(_ExtractField):
    is_key = False
    __connect_class_name__ = kafka_class("ExtractField$Value")


__all__ = ["ExtractFieldKey", "ExtractFieldValue"]
