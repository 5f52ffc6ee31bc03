"""SimpleHeaderConverter: header values as their string form, parsed back with type inference."""

from __future__ import annotations

from typing import Any

import connect_lite
from connect_lite.api.components import HeaderConverter
from connect_lite.api.config import ConfigDef
from connect_lite.api.data import Schema, SchemaAndValue
from connect_lite.api.errors import DataError
from connect_lite.converters.values import parse_string, to_java_string


class SimpleHeaderConverter(HeaderConverter):
    """Kafka's org.apache.kafka.connect.storage.SimpleHeaderConverter, the default one.

    Writes a header value as UTF-8 text in the form of Kafka's ``Values.convertToString``
    and reads text back with ``Values.parseString``'s inference; the subset of both that is
    supported is described in :mod:`connect_lite.converters.values`.
    """

    __connect_class_name__ = "org.apache.kafka.connect.storage.SimpleHeaderConverter"

    def version(self) -> str:
        return connect_lite.__version__

    def config(self) -> ConfigDef:
        return ConfigDef()

    def configure(self, config: dict[str, str]) -> None:
        """Nothing to configure."""

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        if value is None:
            return None
        return to_java_string(value).encode("utf-8")

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue(None, None)
        try:
            text = value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataError(f"Failed to deserialize value for header '{header_key}'") from exc
        if not text:
            return SchemaAndValue(Schema.STRING_SCHEMA, text)
        return parse_string(text)


__all__ = ["SimpleHeaderConverter"]
