"""HeaderFrom: moves or copies fields of the key or value into headers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_lite.api import (
    ConfigDef,
    ConfigError,
    DataError,
    Headers,
    Importance,
    Schema,
    SchemaBuilder,
    Struct,
    Type,
    ValidString,
)
from connect_lite.transforms.base import (
    REPLACE_NULL_WITH_DEFAULT,
    KeyOrValue,
    SchemaCache,
    copy_schema_basics,
    define_replace_null_with_default,
    kafka_class,
    non_empty_list,
    require_map,
    require_struct,
    struct_get,
    updated,
)

FIELDS = "fields"
HEADERS = "headers"
OPERATION = "operation"
MOVE, COPY = "move", "copy"


class _HeaderFrom(KeyOrValue):
    """Kafka's HeaderFrom: the n-th name in ``fields`` goes to the n-th name in ``headers``.

    Headers are appended (existing ones with the same name stay). ``move`` also removes the
    fields from the key/value, ``copy`` leaves it as it is. Without a schema the key/value
    must be a map and the headers have no schema; with one it must be a Struct, and each
    header carries its field's schema. A null key/value is an error, as in Kafka.
    """

    def config(self) -> ConfigDef:
        return define_replace_null_with_default(
            ConfigDef()
            .define(
                FIELDS,
                Type.LIST,
                validator=non_empty_list,
                importance=Importance.HIGH,
                doc="Field names in the record whose values are to be copied or moved to headers.",
            )
            .define(
                HEADERS,
                Type.LIST,
                validator=non_empty_list,
                importance=Importance.HIGH,
                doc="Header names, in the same order as the field names listed in the fields "
                "configuration property.",
            )
            .define(
                OPERATION,
                Type.STRING,
                validator=ValidString.in_(MOVE, COPY),
                importance=Importance.HIGH,
                doc="Either <code>move</code> if the fields are to be moved to the headers "
                "(removed from the key/value), or <code>copy</code> if the fields are to be "
                "copied to the headers (retained in the key/value).",
            )
        )

    def configure(self, config: dict[str, str]) -> None:
        super().configure(config)
        self._fields: list[str] = self.settings[FIELDS]
        self._headers: list[str] = self.settings[HEADERS]
        if len(self._fields) != len(self._headers):
            raise ConfigError(
                f"'{FIELDS}' config must have the same number of elements as '{HEADERS}' config."
            )
        self._move = self.settings[OPERATION] == MOVE
        self._replace_null = bool(self.settings[REPLACE_NULL_WITH_DEFAULT])
        self._moved_schemas = SchemaCache(self._moved_schema)

    def apply(self, record: Any) -> Any:
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        purpose = f"header {self.settings[OPERATION]}"
        if schema is None:
            return self._schemaless(record, require_map(value, purpose))
        return self._with_schema(record, schema, require_struct(value, purpose))

    def _schemaless(self, record: Any, value: Mapping[str, Any]) -> Any:
        headers: Headers = record.headers
        updated = dict(value)
        for field, header in zip(self._fields, self._headers, strict=True):
            headers = headers.add(header, value.get(field), None)
            if self._move:
                updated.pop(field, None)
        return self._updated(record, None, updated, headers)

    def _with_schema(self, record: Any, schema: Schema, struct: Struct) -> Any:
        headers: Headers = record.headers
        for field, header in zip(self._fields, self._headers, strict=True):
            found = schema.field(field)
            if found is None:
                raise DataError(f"{field} is not a valid field name")
            headers = headers.add(
                header, struct_get(struct, field, self._replace_null), found.schema
            )
        if not self._move:
            return self._updated(record, schema, struct, headers)
        moved_schema = self._moved_schemas.get(schema)
        moved = Struct(
            moved_schema,
            {f.name: struct_get(struct, f.name, self._replace_null) for f in moved_schema.fields},
        )
        return self._updated(record, moved_schema, moved, headers)

    def _updated(self, record: Any, schema: Schema | None, value: Any, headers: Headers) -> Any:
        return updated(self.new_record(record, schema, value), headers=headers)

    def _moved_schema(self, schema: Schema) -> Schema:
        """The STRUCT schema without the moved fields (built as Kafka's copySchemaBasics does:
        name, version, doc and parameters, but not optionality)."""
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields:
            if field.name not in self._fields:
                builder.field(field.name, field.schema)
        return builder.build()


class HeaderFromKey(_HeaderFrom):
    """HeaderFrom on the record key."""

    is_key = True
    __connect_class_name__ = kafka_class("HeaderFrom$Key")


class HeaderFromValue(_HeaderFrom):
    """HeaderFrom on the record value."""

    is_key = False
    __connect_class_name__ = kafka_class("HeaderFrom$Value")
