"""ReplaceField: keep, drop or rename the top-level fields of a Struct or map.

Kafka 4.0 removed the deprecated ``whitelist``/``blacklist`` aliases of ``include``/
``exclude``, so they are not accepted here either (an unknown key is ignored, as in Kafka).
"""

from __future__ import annotations

from typing import Any

from connect_lite.api import ConfigDef, ConfigError, Importance, Schema, SchemaBuilder, Struct, Type
from connect_lite.api.column_form import ColumnFrame, out_schema, struct_of
from connect_lite.api.config import invalid
from connect_lite.transforms.base import (
    REPLACE_NULL_WITH_DEFAULT,
    KeyOrValue,
    SchemaCache,
    copy_schema_basics,
    define_replace_null_with_default,
    java_split,
    kafka_class,
    require_map,
    require_struct,
    struct_get,
)

EXCLUDE = "exclude"
INCLUDE = "include"
RENAMES = "renames"
PURPOSE = "field replacement"


def parse_rename_mappings(mappings: list[str]) -> dict[str, str]:
    """``old:new`` pairs as a dict; a malformed pair is a ConfigError on ``renames``."""
    renames: dict[str, str] = {}
    for mapping in mappings:
        parts = java_split(mapping, ":")
        if len(parts) != 2:
            message = invalid(RENAMES, mappings, f"Invalid rename mapping: {mapping}")
            raise ConfigError(message, {RENAMES: [message]})
        renames[parts[0]] = parts[1]
    return renames


def _valid_renames(name: str, value: Any) -> str | None:
    try:
        parse_rename_mappings(list(value or []))
    except ConfigError as error:
        return str(error)
    return None


class _ReplaceField(KeyOrValue):
    """Kafka's ReplaceField: ``exclude`` wins over ``include`` (empty include keeps all),
    then ``renames`` applies. Null keys/values pass through."""

    def config(self) -> ConfigDef:
        config = (
            ConfigDef()
            .define(
                EXCLUDE,
                Type.LIST,
                [],
                importance=Importance.MEDIUM,
                doc="Fields to exclude. This takes precedence over the fields to include.",
            )
            .define(
                INCLUDE,
                Type.LIST,
                [],
                importance=Importance.MEDIUM,
                doc="Fields to include. If specified, only these fields will be used.",
            )
            .define(
                RENAMES,
                Type.LIST,
                [],
                _valid_renames,
                Importance.MEDIUM,
                "Field rename mappings.",
            )
        )
        return define_replace_null_with_default(config)

    def configure(self, config: dict[str, str]) -> None:
        self.settings = self.config().parse(config)
        self._exclude = frozenset(self.settings[EXCLUDE])
        self._include = frozenset(self.settings[INCLUDE])
        self._renames = parse_rename_mappings(self.settings[RENAMES])
        self._reverse = {new: old for old, new in self._renames.items()}
        self._replace_null = bool(self.settings[REPLACE_NULL_WITH_DEFAULT])
        self._schemas = SchemaCache(self._updated_schema)

    def keeps(self, field_name: str) -> bool:
        return field_name not in self._exclude and (
            not self._include or field_name in self._include
        )

    def renamed(self, field_name: str) -> str:
        return self._renames.get(field_name, field_name)

    def apply(self, record: Any) -> Any:
        value = self.operating_value(record)
        if value is None:
            return record
        if self.operating_schema(record) is None:
            mapping = require_map(value, PURPOSE)
            updated = {self.renamed(k): v for k, v in mapping.items() if self.keeps(k)}
            return self.new_record(record, None, updated)
        struct = require_struct(value, PURPOSE)
        schema = self._schemas.get(struct.schema)
        values = {
            f.name: struct_get(struct, self._reverse.get(f.name, f.name), self._replace_null)
            for f in schema.fields
        }
        return self.new_record(record, schema, Struct(schema, values))

    def _updated_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields:
            if self.keeps(field.name):
                builder.field(self.renamed(field.name), field.schema)
        return builder.build()

    def column_form(self, frame: ColumnFrame, out: Any) -> ColumnFrame | None:
        found, schema = frame.struct_side(self.is_key), out_schema(self.is_key, out)
        if found is None or schema is None:
            return None
        side, column, _ = found
        old_names = {new: old for old, new in self._renames.items()}
        columns = {f.name: column.field(old_names.get(f.name, f.name)) for f in schema.fields}
        return frame.with_side(side, struct_of(columns, schema), schema)


class ReplaceFieldKey(_ReplaceField):
    is_key = True
    __connect_class_name__ = kafka_class("ReplaceField$Key")


class ReplaceFieldValue(_ReplaceField):
    is_key = False
    __connect_class_name__ = kafka_class("ReplaceField$Value")


__all__ = ["ReplaceFieldKey", "ReplaceFieldValue", "parse_rename_mappings"]
