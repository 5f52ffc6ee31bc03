"""ByteArrayConverter: passes bytes through unchanged (also a header converter)."""

from __future__ import annotations

from typing import Any

import connect_lite
from connect_lite.api.components import Converter, HeaderConverter
from connect_lite.api.config import ConfigDef
from connect_lite.api.data import Schema, SchemaAndValue, SchemaType
from connect_lite.api.errors import DataError
from connect_lite.converters.config import converter_config_def


class ByteArrayConverter(Converter, HeaderConverter):
    """Kafka's org.apache.kafka.connect.converters.ByteArrayConverter."""

    __connect_aliases__ = ("org.apache.kafka.connect.converters.ByteArrayConverter",)

    def version(self) -> str:
        return connect_lite.__version__

    def config(self) -> ConfigDef:
        return converter_config_def()

    def configure(self, config: dict[str, str], is_key: bool = False) -> None:
        """Nothing to configure."""

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

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        return self.from_connect_data(topic, schema, value)

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        return self.to_connect_data(topic, value)


__all__ = ["ByteArrayConverter"]
