"""DropHeaders: removes every header whose name is listed."""

from __future__ import annotations

from typing import Any

from connect_lite.api import ConfigDef, Headers, Importance, Type
from connect_lite.transforms.base import BuiltinTransformation, kafka_class, non_empty_list, updated

HEADERS = "headers"


class DropHeaders(BuiltinTransformation):
    """Kafka's DropHeaders: drops all headers named in ``headers``, every value of each."""

    __connect_class_name__ = kafka_class("DropHeaders")

    def config(self) -> ConfigDef:
        return ConfigDef().define(
            HEADERS,
            Type.LIST,
            validator=non_empty_list,
            importance=Importance.HIGH,
            doc="The name of the headers to be removed.",
        )

    def configure(self, config: dict[str, str]) -> None:
        super().configure(config)
        self._names = frozenset(self.settings[HEADERS])

    def apply(self, record: Any) -> Any:
        kept = tuple(h for h in record.headers if h.key not in self._names)
        if len(kept) == len(record.headers):
            return record  # headers are immutable, so "unchanged" is the same record
        return updated(record, headers=Headers(kept))
