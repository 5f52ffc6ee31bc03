"""A converter that is its own header converter: header values convert as record values do."""

from __future__ import annotations

from abc import ABC
from typing import Any

from connect_lite.api.components import Converter, HeaderConverter
from connect_lite.api.data import Schema, SchemaAndValue


class ForwardingHeaderConverter(Converter, HeaderConverter, ABC):
    """Kafka's converters that implement both interfaces (ByteArray, String, Json) forward
    ``fromConnectHeader``/``toConnectHeader`` to their data methods; so does this base."""

    def configure(self, config: dict[str, str], is_key: bool = False) -> None:
        """Both interfaces' ``configure``: a header converter is configured without is_key."""

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        return self.from_connect_data(topic, schema, value)

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        return self.to_connect_data(topic, value)


__all__ = ["ForwardingHeaderConverter"]
