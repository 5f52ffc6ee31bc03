"""ByteArrayConverter: passes bytes through unchanged (also a header converter)."""

from __future__ import annotations

from typing import Any

import connect_lite
from connect_lite.api.config import ConfigDef
from connect_lite.api.data import Schema, SchemaAndValue, SchemaType
from connect_lite.api.errors import DataError
from connect_lite.converters.config import converter_config_def
from connect_lite.converters.forwarding import ForwardingHeaderConverter


class ByteArrayConverter(ForwardingHeaderConverter):
    """Kafka's org.apache.kafka.connect.converters.ByteArrayConverter."""

    __connect_class_name__ = "org.apache.kafka.connect.converters.ByteArrayConverter"

    def version(self) -> str:
        return connect_lite.__version__

    def config(self) -> ConfigDef:
        return converter_config_def()

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        if schema is not None and schema.type is not SchemaType.BYTES:
            raise DataError(f"Invalid schema type for ByteArrayConverter: {schema.type.name}")
        if value is None:
            return None
        if isinstance(value, bytes):
            return value
        if isinstance(value, bytearray | memoryview):
            return bytes(value)
        raise DataError(
            f"ByteArrayConverter is not compatible with objects of type {type(value).__name__}"
        )

    def to_connect_data(self, topic: str, value: bytes | None) -> SchemaAndValue:
        return SchemaAndValue(Schema.OPTIONAL_BYTES_SCHEMA, value)


__all__ = ["ByteArrayConverter"]
