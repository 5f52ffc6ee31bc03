"""MaskField: replace named fields with their type's null value or a fixed replacement.

Kafka picks the masked value by the Java class of the field's value; here the Python type
stands in for it (int for Byte/Short/Integer/Long/BigInteger, float for Float/Double,
``decimal.Decimal`` for BigDecimal, ``datetime``/``date``/``time`` for ``java.util.Date``).
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
from collections.abc import Mapping
from typing import Any

from connect_lite.api import ConfigDef, DataError, Importance, SchemaType, Struct, Type
from connect_lite.api.column_form import ColumnFrame, Lit, When, fields_of, out_schema, struct_of
from connect_lite.api.config import valid_list
from connect_lite.api.logical import EPOCH
from connect_lite.transforms.base import (
    REPLACE_NULL_WITH_DEFAULT,
    KeyOrValue,
    define_replace_null_with_default,
    java_class,
    java_narrow,
    kafka_class,
    non_empty_string,
    require_map,
    require_struct,
    struct_get,
)

FIELDS = "fields"
REPLACEMENT = "replacement"
PURPOSE = "mask fields"

_JAVA_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_INT_BITS = {SchemaType.INT8: 8, SchemaType.INT16: 16, SchemaType.INT32: 32}


def null_value(value: Any) -> Any:
    """The "valid null" Kafka masks a value with: 0, false, "", epoch, empty list or map."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return 0
    if isinstance(value, float):
        return 0.0
    if isinstance(value, str):
        return ""
    if isinstance(value, decimal.Decimal):
        return decimal.Decimal(0)
    if isinstance(value, dt.datetime):
        return EPOCH
    if isinstance(value, dt.date):
        return dt.date(1970, 1, 1)
    if isinstance(value, dt.time):
        return dt.time(0)
    if isinstance(value, list):
        return []
    if isinstance(value, Mapping):
        return {}
    raise DataError(f"Cannot mask value of type: {java_class(value)}")


def replacement_value(value: Any, replacement: str, schema_type: SchemaType | None = None) -> Any:
    """``replacement`` converted to the type of ``value``; only numbers and strings accept
    one. Integers wrap to the field's width as Java's narrowing casts do."""
    if isinstance(value, str):
        return replacement
    if isinstance(value, bool) or not isinstance(value, int | float | decimal.Decimal):
        raise DataError(f"Cannot mask value of type {java_class(value)} with custom replacement.")
    if not _JAVA_NUMBER.fullmatch(replacement):
        raise DataError(f"Unable to convert {replacement} (class java.lang.String) to number")
    number = decimal.Decimal(replacement)
    if isinstance(value, decimal.Decimal):
        return number
    if isinstance(value, float):
        return float(number)
    bits = _INT_BITS.get(schema_type, 64) if schema_type is not None else 64
    return java_narrow(int(number), bits)


_SAMPLES = {
    SchemaType.INT8: 1,
    SchemaType.INT16: 1,
    SchemaType.INT32: 1,
    SchemaType.INT64: 1,
    SchemaType.FLOAT32: 1.0,
    SchemaType.FLOAT64: 1.0,
    SchemaType.BOOLEAN: True,
    SchemaType.STRING: "x",
}
"""A non-null value of each type whose masked form is the same for every value: the column
form masks every non-null value of these types to one constant."""


class _MaskField(KeyOrValue):
    """Kafka's MaskField. Schemaless, every listed field is written (a missing one as null);
    with a schema, the Struct keeps its schema and only listed fields change."""

    def config(self) -> ConfigDef:
        config = (
            ConfigDef()
            .define(
                FIELDS,
                Type.LIST,
                validator=valid_list(allow_empty=False),
                importance=Importance.HIGH,
                doc="Names of fields to mask.",
            )
            .define(
                REPLACEMENT,
                Type.STRING,
                None,
                non_empty_string,
                Importance.LOW,
                "Custom value replacement, that will be applied to all 'fields' values "
                "(numeric or non-empty string values only).",
            )
        )
        return define_replace_null_with_default(config)

    def configure(self, config: dict[str, str]) -> None:
        self.settings = self.config().parse(config)
        self._fields: list[str] = list(dict.fromkeys(self.settings[FIELDS]))
        raw = self.settings[REPLACEMENT]
        self._replacement: str | None = None if raw is None else str(raw).strip()
        self._replace_null = bool(self.settings[REPLACE_NULL_WITH_DEFAULT])

    def masked(self, value: Any, schema_type: SchemaType | None = None) -> Any:
        if value is None:
            return None
        if self._replacement is None:
            return null_value(value)
        return replacement_value(value, self._replacement, schema_type)

    def apply(self, record: Any) -> Any:
        value = self.operating_value(record)
        if self.operating_schema(record) is None:
            mapping = require_map(value, PURPOSE)
            updated = dict(mapping)
            for name in self._fields:
                updated[name] = self.masked(mapping.get(name))
            return self.new_record(record, None, updated)
        schema = self.operating_schema(record)
        struct = require_struct(value, PURPOSE)
        masked = set(self._fields)
        values = {}
        for field in struct.schema.fields:
            original = struct_get(struct, field.name, self._replace_null)
            values[field.name] = (
                self.masked(original, field.schema.type) if field.name in masked else original
            )
        return self.new_record(record, schema, Struct(struct.schema, values))

    def column_form(self, frame: ColumnFrame, out: Any) -> ColumnFrame | None:
        found, schema = frame.struct_side(self.is_key), out_schema(self.is_key, out)
        if found is None or schema is None:
            return None
        side, column, _ = found
        columns = fields_of(column, schema)
        for name in self._fields:
            f = schema.field(name)
            if f is None or f.schema.name or f.schema.default is not None:
                return None
            if f.schema.type not in _SAMPLES:
                return None
            try:  # null stays null; any other value masks to one constant per type
                masked = self.masked(_SAMPLES[f.schema.type], f.schema.type)
            except Exception:
                return None
            columns[name] = When(columns[name].is_null(), Lit(None), Lit(masked, f.schema))
        return frame.with_side(side, struct_of(columns, schema), schema)


class MaskFieldKey(_MaskField):
    is_key = True
    __connect_class_name__ = kafka_class("MaskField$Key")


class MaskFieldValue(_MaskField):
    is_key = False
    __connect_class_name__ = kafka_class("MaskField$Value")


__all__ = ["MaskFieldKey", "MaskFieldValue", "null_value", "replacement_value"]
