"""HoistField: wrap a whole key or value in a Struct (or map) with one named field."""

from __future__ import annotations

from typing import Any

from connect_lite.api import ConfigDef, DataError, Importance, Schema, SchemaBuilder, Struct, Type
from connect_lite.api.column_form import ColumnFrame, StructOf, out_schema
from connect_lite.transforms.base import KeyOrValue, SchemaCache, kafka_class

FIELD = "field"


class _HoistField(KeyOrValue):
    """Kafka's HoistField: ``v`` becomes ``{field: v}``; with a schema, a one-field Struct
    whose field has the original schema. Null is wrapped too, as Kafka does."""

    def config(self) -> ConfigDef:
        return ConfigDef().define(
            FIELD,
            Type.STRING,
            importance=Importance.MEDIUM,
            doc="Field name for the single field that will be created in the resulting Struct "
            "or Map.",
        )

    def configure(self, config: dict[str, str]) -> None:
        self.settings = self.config().parse(config)
        self._field = str(self.settings[FIELD])
        self._schemas = SchemaCache(self._updated_schema)

    def apply(self, record: Any) -> Any:
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        if schema is None:
            return self.new_record(record, None, {self._field: value})
        if value is None and not schema.optional:
            # Kafka's Struct.put validates the value against the field's schema.
            raise DataError(
                f'Invalid value: null used for required field: "{self._field}", '
                f"schema type: {schema.type.name}"
            )
        updated_schema = self._schemas.get(schema)
        return self.new_record(record, updated_schema, Struct(updated_schema, {self._field: value}))

    def _updated_schema(self, schema: Schema) -> Schema:
        return SchemaBuilder.struct().field(self._field, schema).build()

    def column_form(self, frame: ColumnFrame, out: Any) -> ColumnFrame | None:
        side, schema = frame.side(self.is_key), out_schema(self.is_key, out)
        if side not in frame.cols or frame.schemas.get(side) is None or schema is None:
            return None
        return frame.with_side(side, StructOf(((self._field, frame.cols[side]),)), schema)


class HoistFieldKey(_HoistField):
    is_key = True
    __connect_class_name__ = kafka_class("HoistField$Key")


class HoistFieldValue(_HoistField):
    is_key = False
    __connect_class_name__ = kafka_class("HoistField$Value")


__all__ = ["HoistFieldKey", "HoistFieldValue"]
