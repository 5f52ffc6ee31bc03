"""Flatten: nested Structs or maps become one level, names joined by a delimiter (Kafka's Flatten).

As in Kafka, arrays are kept as they are, a MAP inside a Struct is an error, a null value
passes through, and a flattened field is optional (and takes its ancestors' default) when
any ancestor Struct is optional (or has a default).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_lite.api import (
    ConfigDef,
    DataError,
    Importance,
    Schema,
    SchemaBuilder,
    SchemaType,
    Struct,
    Type,
)
from connect_lite.api.column_form import ColumnFrame, Expr, out_schema, struct_of
from connect_lite.transforms.base import (
    KeyOrValue,
    SchemaCache,
    copy_schema_basics,
    java_class,
    kafka_class,
    require_map,
    require_struct,
    schema_type_of,
    struct_get,
)

DELIMITER_CONFIG = "delimiter"
PURPOSE = "flattening"
_PASSED_AS_IS = frozenset(t for t in SchemaType if t.is_primitive) | {SchemaType.ARRAY}


class _Flatten(KeyOrValue):
    """Kafka's Flatten: ``delimiter`` (default ``.``) joins the names of nested fields."""

    def config(self) -> ConfigDef:
        return ConfigDef().define(
            DELIMITER_CONFIG,
            Type.STRING,
            ".",
            importance=Importance.MEDIUM,
            doc="Delimiter to insert between field names from the input record when generating "
            "field names for the output record",
        )

    def configure(self, config: dict[str, str]) -> None:
        self.settings = self.config().parse(config)
        self._delimiter: str = self.settings[DELIMITER_CONFIG]
        self._schemas = SchemaCache(self._updated_schema)

    def apply(self, record: Any) -> Any:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            flat: dict[str, Any] = {}
            self._flatten_map(require_map(value, PURPOSE), "", flat)
            return self.new_record(record, None, flat)
        struct = require_struct(value, PURPOSE)
        updated = self._schemas.get(schema)
        result = Struct(updated)
        self._flatten_struct(struct, "", result)
        return self.new_record(record, updated, result)

    def _updated_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        self._flatten_schema(schema, "", builder, schema.optional, schema.default)
        return builder.build()

    def _name(self, prefix: str, name: str) -> str:
        return f"{prefix}{self._delimiter}{name}" if prefix else name

    def _flatten_map(self, original: Mapping[str, Any], prefix: str, flat: dict[str, Any]) -> None:
        for key, value in original.items():
            name = self._name(prefix, key)
            kind = None if value is None else schema_type_of(value)
            if kind is SchemaType.MAP:
                self._flatten_map(value, name, flat)
            elif value is None or kind in _PASSED_AS_IS:
                flat[name] = value
            elif kind is None:
                raise DataError(
                    f"Flatten transformation was passed a value of type {java_class(value)} "
                    "which is not supported by Connect's data API"
                )
            else:
                raise DataError(
                    f"Flatten transformation does not support {java_class(value)} for record "
                    f"without schemas (for field {name})."
                )

    def _flatten_schema(
        self, schema: Schema, prefix: str, builder: SchemaBuilder, optional: bool, default: Any
    ) -> None:
        """Add the leaves of ``schema`` to ``builder``; ``optional`` and ``default`` come from
        the ancestors (an optional parent makes every flattened child optional)."""
        for field in schema.fields:
            name = self._name(prefix, field.name)
            field_optional = optional or field.schema.optional
            field_default = field.schema.default
            if field_default is None and isinstance(default, Struct):
                field_default = struct_get(default, field.name, True)
            if field.schema.type in _PASSED_AS_IS:
                builder.field(name, _leaf_schema(field.schema, field_optional, field_default))
            elif field.schema.type is SchemaType.STRUCT:
                self._flatten_schema(field.schema, name, builder, field_optional, field_default)
            else:
                raise _unsupported(field.schema, name)

    def _flatten_struct(self, struct: Struct, prefix: str, result: Struct) -> None:
        for field in struct.schema.fields:
            name = self._name(prefix, field.name)
            value = struct_get(struct, field.name, True)
            if field.schema.type in _PASSED_AS_IS:
                result.put(name, value)
            elif field.schema.type is SchemaType.STRUCT:
                if value is not None:
                    self._flatten_struct(value, name, result)
            else:
                raise _unsupported(field.schema, name)

    def column_form(self, frame: ColumnFrame, out: Any) -> ColumnFrame | None:
        found, schema = frame.struct_side(self.is_key), out_schema(self.is_key, out)
        if found is None or schema is None:
            return None
        side, column, in_schema = found
        columns: dict[str, Expr] = {}

        def walk(col: Expr, struct: Schema, prefix: str) -> None:
            for f in struct.fields:
                name = prefix + f.name
                if f.schema.type is SchemaType.STRUCT:
                    walk(col.field(f.name), f.schema, name + self._delimiter)
                else:
                    columns[name] = col.field(f.name)

        walk(column, in_schema, "")
        if set(columns) != {f.name for f in schema.fields}:
            return None
        return frame.with_side(side, struct_of(columns, schema), schema)


def _leaf_schema(original: Schema, optional: bool, default: Any) -> Schema:
    """Kafka's ``convertFieldSchema``: the field's schema, optional and defaulted as needed."""
    if original.type is SchemaType.ARRAY:
        assert original.value_schema is not None  # an ARRAY schema always has one
        builder = SchemaBuilder.array(original.value_schema)
    else:
        builder = SchemaBuilder(original.type)
    copy_schema_basics(original, builder)
    if optional:
        builder.optional()
    if default is not None:
        builder.default_value(default)
    return builder.build()


def _unsupported(schema: Schema, name: str) -> DataError:
    return DataError(
        f"Flatten transformation does not support {schema.type.name} for record with schemas "
        f"(for field {name})."
    )


class FlattenKey(_Flatten):
    is_key = True
    __connect_class_name__ = kafka_class("Flatten$Key")


class FlattenValue(_Flatten):
    is_key = False
    __connect_class_name__ = kafka_class("Flatten$Value")


__all__ = ["FlattenKey", "FlattenValue"]
