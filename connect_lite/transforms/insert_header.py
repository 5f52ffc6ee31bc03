"""InsertHeader: adds one header, whose value is a literal parsed as Kafka's Values does."""

from __future__ import annotations

import copy
from typing import Any

from connect_lite.api import ConfigDef, Importance, Type
from connect_lite.api.config import invalid
from connect_lite.converters.values import parse_string
from connect_lite.transforms.base import BuiltinTransformation, kafka_class, updated

HEADER = "header"
VALUE_LITERAL = "value.literal"


def non_null(name: str, value: Any) -> str | None:
    """Kafka's ``ConfigDef.NonNullValidator``."""
    return invalid(name, None, "entry must be non null") if value is None else None


class InsertHeader(BuiltinTransformation):
    """Kafka's InsertHeader: appends ``header`` to every record, even when a header of that
    name already exists. ``value.literal`` is parsed once, as Kafka's ``Values.parseString``:
    ``1`` becomes an INT8 header, ``true`` a BOOLEAN, ``null`` a null without schema,
    ``[1,2]`` an ARRAY, anything else the STRING itself."""

    __connect_class_name__ = kafka_class("InsertHeader")

    def config(self) -> ConfigDef:
        return (
            ConfigDef()
            .define(
                HEADER,
                Type.STRING,
                validator=non_null,
                importance=Importance.HIGH,
                doc="The name of the header.",
            )
            .define(
                VALUE_LITERAL,
                Type.STRING,
                validator=non_null,
                importance=Importance.HIGH,
                doc="The literal value that is to be set as the header value on all records.",
            )
        )

    def configure(self, config: dict[str, str]) -> None:
        super().configure(config)
        parsed = parse_string(self.settings[VALUE_LITERAL])
        self._header: str = self.settings[HEADER]
        self._schema = parsed.schema
        self._value = parsed.value

    def apply(self, record: Any) -> Any:
        # A list or map literal is copied so that no two records share one mutable value.
        value = copy.deepcopy(self._value) if isinstance(self._value, list | dict) else self._value
        return updated(record, headers=record.headers.add(self._header, value, self._schema))
