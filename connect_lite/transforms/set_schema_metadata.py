"""SetSchemaMetadata: set the name and/or version of a key or value schema."""

from __future__ import annotations

import dataclasses
from typing import Any

from connect_lite.api import ConfigDef, ConfigError, Importance, Schema, Struct, Type
from connect_lite.api.column_form import ColumnFrame, out_schema
from connect_lite.transforms.base import (
    REPLACE_NULL_WITH_DEFAULT,
    KeyOrValue,
    SchemaCache,
    define_replace_null_with_default,
    kafka_class,
    require_schema,
    struct_get,
)

SCHEMA_NAME = "schema.name"
SCHEMA_VERSION = "schema.version"
PURPOSE = "updating schema metadata"


def update_schema_in(value: Any, schema: Schema, replace_null_with_default: bool = True) -> Any:
    """A Struct copied onto ``schema`` (a Struct names its schema, so a renamed schema needs a
    new Struct); any other value, null included, is returned as it is."""
    if not isinstance(value, Struct):
        return value
    return Struct(
        schema,
        {f.name: struct_get(value, f.name, replace_null_with_default) for f in schema.fields},
    )


class _SetSchemaMetadata(KeyOrValue):
    """Kafka's SetSchemaMetadata. Everything but the name and version of the schema is kept.
    A record with neither schema nor key/value passes through; a value without a schema fails."""

    def config(self) -> ConfigDef:
        config = (
            ConfigDef()
            .define(
                SCHEMA_NAME,
                Type.STRING,
                None,
                importance=Importance.HIGH,
                doc="Schema name to set.",
            )
            .define(
                SCHEMA_VERSION,
                Type.INT,
                None,
                importance=Importance.HIGH,
                doc="Schema version to set.",
            )
        )
        return define_replace_null_with_default(config)

    def configure(self, config: dict[str, str]) -> None:
        self.settings = self.config().parse(config)
        self._name: str | None = self.settings[SCHEMA_NAME]
        self._version: int | None = self.settings[SCHEMA_VERSION]
        self._replace_null = bool(self.settings[REPLACE_NULL_WITH_DEFAULT])
        if self._name is None and self._version is None:
            raise ConfigError("Neither schema name nor version configured")
        self._schemas = SchemaCache(self._updated_schema)

    def apply(self, record: Any) -> Any:
        value = self.operating_value(record)
        schema = self.operating_schema(record)
        if schema is None and value is None:
            return record
        schema = require_schema(schema, PURPOSE)
        renamed = self._schemas.get(schema)
        return self.new_record(
            record, renamed, update_schema_in(value, renamed, self._replace_null)
        )

    def _updated_schema(self, schema: Schema) -> Schema:
        return dataclasses.replace(
            schema,
            name=self._name if self._name is not None else schema.name,
            version=self._version if self._version is not None else schema.version,
        )

    def column_form(self, frame: ColumnFrame, out: Any) -> ColumnFrame | None:
        side = frame.side(self.is_key)
        if side not in frame.cols:
            return None
        return frame.with_side(side, frame.cols[side], out_schema(self.is_key, out))


class SetSchemaMetadataKey(_SetSchemaMetadata):
    is_key = True
    __connect_class_name__ = kafka_class("SetSchemaMetadata$Key")


class SetSchemaMetadataValue(_SetSchemaMetadata):
    is_key = False
    __connect_class_name__ = kafka_class("SetSchemaMetadata$Value")


__all__ = ["SetSchemaMetadataKey", "SetSchemaMetadataValue", "update_schema_in"]
