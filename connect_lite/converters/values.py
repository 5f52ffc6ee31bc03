"""Values as strings and back, for the common cases of Kafka's ``Values`` utility class.

Supported subset:
- writing: null, strings, booleans (``true``/``false``), integers, floats (Java's
  ``Double.toString`` form, e.g. ``1.0E20``), decimals (``BigDecimal.toString``), bytes
  (base64), dates/times/timestamps (ISO: ``2024-01-31``, ``13:45:00.123Z``,
  ``2024-01-31T13:45:00.123Z``), lists ``[1,"a"]``, maps and structs ``{"k":1}``; inside a list
  or map strings are quoted with ``\\`` and ``"`` escaped, as Kafka does;
- parsing: ``true``/``false`` (any case) -> BOOLEAN; ``null`` -> no schema, None; integers ->
  the smallest of INT8/INT16/INT32/INT64 that holds them; other numbers -> FLOAT32 when they
  fit, else FLOAT64; the ISO date/time/timestamp forms above -> the logical types; JSON-shaped
  ``[...]``/``{...}`` -> ARRAY/MAP with the elements' common schema (no schema when they
  differ); anything else -> the STRING itself. Kafka's unquoted tokens inside lists and maps
  are not parsed.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import math
import re
from collections.abc import Mapping
from typing import Any

from connect_lite.api import logical
from connect_lite.api.data import Schema, SchemaAndValue, SchemaBuilder, Struct

_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIME = re.compile(r"\d{2}:\d{2}:\d{2}\.\d{3}Z")
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")
_FLOAT32_MAX = 3.4028234663852886e38
_INT_SCHEMAS = [
    (2**7, Schema.INT8_SCHEMA),
    (2**15, Schema.INT16_SCHEMA),
    (2**31, Schema.INT32_SCHEMA),
    (2**63, Schema.INT64_SCHEMA),
]


def java_double(value: float) -> str:
    """A float as Java's ``Double.toString`` writes it."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    if 1e-3 <= abs(value) < 1e7:
        text = format(decimal.Decimal(repr(value)), "f")
        return text if "." in text else text + ".0"
    sign, digits, exponent = decimal.Decimal(repr(value)).as_tuple()
    assert isinstance(exponent, int)
    mantissa = "".join(map(str, digits)).rstrip("0") or "0"
    power = exponent + len(digits) - 1
    fraction = mantissa[1:] or "0"
    return f"{'-' if sign else ''}{mantissa[0]}.{fraction}E{power}"


def to_java_string(value: Any, embedded: bool = False) -> str:
    """A value in the string form of Kafka's ``Values.convertToString``."""
    if value is None:
        return "null"
    if isinstance(value, str):
        if not embedded:
            return value
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double(value)
    if isinstance(value, int | decimal.Decimal):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return to_java_string(base64.b64encode(value).decode("ascii"), embedded)
    if isinstance(value, dt.date | dt.time):
        return to_java_string(_iso(value), embedded)
    return _composite_string(value)


def _composite_string(value: Any) -> str:
    if isinstance(value, Struct):
        value = value.as_dict()
    if isinstance(value, Mapping):
        items = (to_java_string(k, True) + ":" + to_java_string(v, True) for k, v in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, list | tuple | set | frozenset):
        return "[" + ",".join(to_java_string(v, True) for v in value) + "]"
    return str(value)


def _iso(value: dt.date | dt.time) -> str:
    if isinstance(value, dt.datetime):
        millis = logical.timestamp_to_millis(value)
        stamp = logical.millis_to_timestamp(millis)
        return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"
    if isinstance(value, dt.date):
        return value.isoformat()
    return value.strftime("%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


def parse_string(text: str) -> SchemaAndValue:
    """Infer a schema and value from a string, for the subset in the module docstring."""
    token = text.strip()
    lowered = token.lower()
    if lowered in ("true", "false"):
        return SchemaAndValue(Schema.BOOLEAN_SCHEMA, lowered == "true")
    if token == "null":
        return SchemaAndValue(None, None)
    if _NUMBER.fullmatch(token):
        return parse_number(token)
    temporal = _parse_temporal(token)
    if temporal is not None:
        return temporal
    if (token[:1], token[-1:]) in (("[", "]"), ("{", "}")):
        try:
            parsed = json.loads(token, parse_int=_Token, parse_float=_Token)
        except ValueError:
            return SchemaAndValue(Schema.STRING_SCHEMA, text)
        return _infer(parsed)
    return SchemaAndValue(Schema.STRING_SCHEMA, text)


def parse_number(token: str) -> SchemaAndValue:
    """The narrowest Connect number type for a numeric token, as Kafka's Values chooses."""
    number = decimal.Decimal(token)
    if number == number.to_integral_value():
        integral = int(number)
        for bound, schema in _INT_SCHEMAS:
            if -bound <= integral < bound:
                return SchemaAndValue(schema, integral)
    as_float = float(number)
    if abs(as_float) <= _FLOAT32_MAX and number != number.to_integral_value():
        return SchemaAndValue(Schema.FLOAT32_SCHEMA, as_float)
    if not math.isinf(as_float):
        return SchemaAndValue(Schema.FLOAT64_SCHEMA, as_float)
    exponent = number.as_tuple().exponent
    scale = -exponent if isinstance(exponent, int) else 0
    return SchemaAndValue(logical.decimal_schema(scale), number)


def _parse_temporal(token: str) -> SchemaAndValue | None:
    try:
        if _TIMESTAMP.fullmatch(token):
            stamp = dt.datetime.strptime(token[:-1], "%Y-%m-%dT%H:%M:%S.%f")
            return SchemaAndValue(logical.timestamp_schema(), stamp.replace(tzinfo=dt.UTC))
        if _DATE.fullmatch(token):
            return SchemaAndValue(logical.date_schema(), dt.date.fromisoformat(token))
        if _TIME.fullmatch(token):
            return SchemaAndValue(logical.time_schema(), dt.time.fromisoformat(token[:-1]))
    except ValueError:
        return None
    return None


class _Token(str):
    """A number token from json.loads, kept as text until Values' number rules apply."""


def _infer(value: Any) -> SchemaAndValue:
    """Schema and value of a parsed JSON element, with common-schema inference."""
    if isinstance(value, _Token):
        return parse_number(value)
    if isinstance(value, bool):
        return SchemaAndValue(Schema.BOOLEAN_SCHEMA, value)
    if isinstance(value, str):
        return SchemaAndValue(Schema.STRING_SCHEMA, value)
    if isinstance(value, list):
        items = [_infer(v) for v in value]
        common = _common_schema(item.schema for item in items)
        schema = SchemaBuilder.array(common).build() if common else None
        return SchemaAndValue(schema, [item.value for item in items])
    if isinstance(value, dict):
        entries = {k: _infer(v) for k, v in value.items()}
        common = _common_schema(e.schema for e in entries.values())
        schema = SchemaBuilder.map(Schema.STRING_SCHEMA, common).build() if common else None
        return SchemaAndValue(schema, {k: e.value for k, e in entries.items()})
    return SchemaAndValue(None, None)


def _common_schema(schemas: Any) -> Schema | None:
    distinct = set()
    for schema in schemas:
        if schema is None:
            return None
        distinct.add(schema)
    if len(distinct) != 1:
        return None
    return distinct.pop()


__all__ = ["java_double", "parse_number", "parse_string", "to_java_string"]
