"""What Kafka's built-in transforms share: the $Key/$Value split, requirements, schema copies.

Every built-in keeps its parsed config in ``self.settings`` (Kafka's key names) after
``configure``, so the Spark expression forms in ``connect_lite.pipeline`` can read it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar

from connect_lite import __version__
from connect_lite.api import ConfigDef, DataError, Schema, SchemaBuilder, Struct, Transformation

KAFKA_PACKAGE = "org.apache.kafka.connect.transforms"


def kafka_names(name: str) -> tuple[str, ...]:
    """The Java class name and the short alias Kafka users write, e.g. ``InsertField$Value``."""
    return (f"{KAFKA_PACKAGE}.{name}", name)


class BuiltinTransformation(Transformation[Any]):
    """A built-in: versioned as connect-lite, config parsed into ``self.settings``."""

    settings: dict[str, Any]

    def version(self) -> str:
        return __version__

    def config(self) -> ConfigDef:
        return ConfigDef()

    def configure(self, config: dict[str, str]) -> None:
        self.settings = self.config().parse(config)


class KeyOrValue(BuiltinTransformation):
    """Kafka's ``$Key``/``$Value`` pair: the subclass sets ``is_key``."""

    is_key: ClassVar[bool] = False

    def operating_schema(self, record: Any) -> Schema | None:
        return record.key_schema if self.is_key else record.value_schema

    def operating_value(self, record: Any) -> Any:
        return record.key if self.is_key else record.value

    def new_record(self, record: Any, schema: Schema | None, value: Any) -> Any:
        if self.is_key:
            return dataclasses.replace(record, key_schema=schema, key=value)
        return dataclasses.replace(record, value_schema=schema, value=value)


def require_map(value: Any, purpose: str) -> Mapping[str, Any]:
    """Kafka's ``Requirements.requireMap``."""
    if not isinstance(value, Mapping):
        raise DataError(
            f"Only Map objects supported in absence of schema for [{purpose}], "
            f"found: {_java_class(value)}"
        )
    return value


def require_map_or_null(value: Any, purpose: str) -> Mapping[str, Any] | None:
    return None if value is None else require_map(value, purpose)


def require_struct(value: Any, purpose: str) -> Struct:
    """Kafka's ``Requirements.requireStruct``."""
    if not isinstance(value, Struct):
        raise DataError(
            f"Only Struct objects supported for [{purpose}], found: {_java_class(value)}"
        )
    return value


def require_struct_or_null(value: Any, purpose: str) -> Struct | None:
    return None if value is None else require_struct(value, purpose)


def require_schema(schema: Schema | None, purpose: str) -> Schema:
    if schema is None:
        raise DataError(f"Schema required for [{purpose}]")
    return schema


def _java_class(value: Any) -> str:
    if value is None:
        return "null"
    names = {
        str: "java.lang.String",
        int: "java.lang.Long",
        float: "java.lang.Double",
        bool: "java.lang.Boolean",
        bytes: "[B",
        list: "java.util.ArrayList",
        dict: "java.util.HashMap",
    }
    return names.get(type(value), type(value).__name__)


def copy_schema_basics(source: Schema, builder: SchemaBuilder) -> SchemaBuilder:
    """Kafka's ``SchemaUtil.copySchemaBasics``: name, version, doc, parameters (and optional,
    default when the types agree)."""
    builder.name(source.name).version(source.version).doc(source.doc)
    if source.parameters:
        builder.parameters(dict(source.parameters))
    return builder


def struct_builder_like(source: Schema) -> SchemaBuilder:
    """A STRUCT builder with the basics and optionality of ``source`` (no fields yet)."""
    builder = copy_schema_basics(source, SchemaBuilder.struct())
    return builder.optional() if source.optional else builder


__all__ = [
    "KAFKA_PACKAGE",
    "BuiltinTransformation",
    "KeyOrValue",
    "copy_schema_basics",
    "kafka_names",
    "require_map",
    "require_map_or_null",
    "require_schema",
    "require_struct",
    "require_struct_or_null",
    "struct_builder_like",
]
