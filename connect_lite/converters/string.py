"""StringConverter: values as strings in a configurable encoding (also a header converter)."""

from __future__ import annotations

import codecs
from typing import Any

import connect_lite
from connect_lite.api.config import ConfigDef, Importance, Type
from connect_lite.api.data import Schema, SchemaAndValue
from connect_lite.api.errors import ConfigError, DataError
from connect_lite.converters.config import CONVERTER_TYPE, converter_config_def
from connect_lite.converters.forwarding import ForwardingHeaderConverter
from connect_lite.converters.values import to_java_string

ENCODING = "converter.encoding"

CONFIG_DEF = converter_config_def().define(
    ENCODING,
    Type.STRING,
    "UTF-8",
    None,
    Importance.HIGH,
    "The name of the character encoding used to encode and decode strings.",
    group="Converter",
)


class StringConverter(ForwardingHeaderConverter):
    """Kafka's org.apache.kafka.connect.storage.StringConverter.

    Writes ``str(value)`` (Java's ``toString`` for booleans, floats and lists) in the
    configured encoding; reads bytes back as an optional string.
    """

    __connect_class_name__ = "org.apache.kafka.connect.storage.StringConverter"

    def __init__(self) -> None:
        self.encoding = "utf-8"

    def version(self) -> str:
        return connect_lite.__version__

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def configure(self, config: dict[str, str], is_key: bool = False) -> None:
        parsed = CONFIG_DEF.parse({CONVERTER_TYPE: "key" if is_key else "value", **config})
        try:
            self.encoding = codecs.lookup(parsed[ENCODING]).name
        except LookupError:
            message = f"Invalid value {parsed[ENCODING]} for configuration {ENCODING}"
            raise ConfigError(message, {ENCODING: [message]}) from None

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        if value is None:
            return None
        text = value if isinstance(value, str) else to_java_string(value)
        try:
            return text.encode(self.encoding)
        except UnicodeError as exc:
            raise DataError(f"Failed to serialize to a string: {exc}") from exc

    def to_connect_data(self, topic: str, value: bytes | None) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, None)
        try:
            return SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, value.decode(self.encoding))
        except UnicodeError as exc:
            raise DataError(f"Failed to deserialize string: {exc}") from exc


__all__ = ["StringConverter"]
