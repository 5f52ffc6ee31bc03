"""Kafka Connect's logical types (Decimal, Date, Time, Timestamp): schemas and value conversions.

Python values: Decimal -> ``decimal.Decimal``, Date -> ``datetime.date``, Time ->
``datetime.time``, Timestamp -> ``datetime.datetime`` (UTC; a naive datetime is taken as UTC).
When writing, the encoded forms are accepted too (an ``int`` of days, milliseconds since
midnight, or milliseconds since the epoch; an ``int`` unscaled value or ``float`` for Decimal).
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

from connect_lite.api.data import Schema, SchemaBuilder, SchemaType
from connect_lite.api.errors import DataError

DECIMAL = "org.apache.kafka.connect.data.Decimal"
DATE = "org.apache.kafka.connect.data.Date"
TIME = "org.apache.kafka.connect.data.Time"
TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"
SCALE = "scale"
LOGICAL_NAMES = frozenset((DECIMAL, DATE, TIME, TIMESTAMP))

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_EPOCH_DATE = dt.date(1970, 1, 1)
_MS_PER_DAY = 86_400_000


def _builder(type_: SchemaType, name: str, optional: bool) -> SchemaBuilder:
    builder = SchemaBuilder.of(type_).name(name).version(1)
    return builder.optional() if optional else builder


def decimal_schema(scale: int, optional: bool = False) -> Schema:
    """Kafka's ``Decimal.schema(scale)``: BYTES holding the unscaled two's-complement integer."""
    return _builder(SchemaType.BYTES, DECIMAL, optional).parameter(SCALE, str(scale)).build()


def date_schema(optional: bool = False) -> Schema:
    """Kafka's ``Date.SCHEMA``: INT32 days since the epoch."""
    return _builder(SchemaType.INT32, DATE, optional).build()


def time_schema(optional: bool = False) -> Schema:
    """Kafka's ``Time.SCHEMA``: INT32 milliseconds since midnight."""
    return _builder(SchemaType.INT32, TIME, optional).build()


def timestamp_schema(optional: bool = False) -> Schema:
    """Kafka's ``Timestamp.SCHEMA``: INT64 milliseconds since the epoch."""
    return _builder(SchemaType.INT64, TIMESTAMP, optional).build()


def scale_of(schema: Schema) -> int:
    try:
        return int(schema.params[SCALE])
    except (KeyError, ValueError):
        raise DataError("Invalid Decimal schema: scale parameter not found.") from None


def decimal_unscaled(schema: Schema, value: Any) -> int:
    """The unscaled integer of a value at the schema's scale; an inexact rescale is an error."""
    scale = scale_of(schema)
    if isinstance(value, int) and not isinstance(value, bool):
        return value * 10**scale
    if isinstance(value, float):
        value = decimal.Decimal(repr(value))
    if not isinstance(value, decimal.Decimal):
        raise DataError(f"Invalid type for Decimal: {type(value).__name__}")
    sign, digits, exponent = value.as_tuple()
    if not isinstance(exponent, int):
        raise DataError("A Decimal that is NaN or infinite cannot be encoded")
    unscaled = int("".join(map(str, digits)) or "0")
    shift = exponent + scale
    if shift >= 0:
        unscaled *= 10**shift
    else:
        unscaled, rest = divmod(unscaled, 10**-shift)
        if rest:
            raise DataError("BigDecimal has mismatching scale value for given Decimal schema")
    return -unscaled if sign else unscaled


def decimal_to_bytes(schema: Schema, value: Any) -> bytes:
    """Big-endian two's complement of the unscaled value, minimal length (Java BigInteger)."""
    unscaled = decimal_unscaled(schema, value)
    length = (unscaled if unscaled >= 0 else ~unscaled).bit_length() // 8 + 1
    return unscaled.to_bytes(length, "big", signed=True)


def decimal_from_unscaled(schema: Schema, unscaled: int) -> decimal.Decimal:
    digits = tuple(int(d) for d in str(abs(unscaled)))
    return decimal.Decimal((int(unscaled < 0), digits, -scale_of(schema)))


def decimal_from_bytes(schema: Schema, data: bytes) -> decimal.Decimal:
    return decimal_from_unscaled(schema, int.from_bytes(data, "big", signed=True))


def decimal_rescale(schema: Schema, value: decimal.Decimal | float | int) -> decimal.Decimal:
    """A numeric value at exactly the schema's scale (as read from a NUMERIC payload)."""
    return decimal_from_unscaled(schema, decimal_unscaled(schema, value))


def date_to_days(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, dt.datetime):
        millis = timestamp_to_millis(value)
        if millis % _MS_PER_DAY:
            raise DataError(
                "Kafka Connect Date type should not have any time fields set to non-zero values."
            )
        return millis // _MS_PER_DAY
    if isinstance(value, dt.date):
        return (value - _EPOCH_DATE).days
    raise DataError(f"Invalid type for Date: {type(value).__name__}")


def days_to_date(days: int) -> dt.date:
    return _EPOCH_DATE + dt.timedelta(days=days)


def time_to_millis(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, dt.time):
        seconds = value.hour * 3600 + value.minute * 60 + value.second
        return seconds * 1000 + value.microsecond // 1000
    raise DataError(f"Invalid type for Time: {type(value).__name__}")


def millis_to_time(millis: int) -> dt.time:
    if not 0 <= millis < _MS_PER_DAY:
        raise DataError("Kafka Connect Time type should not have any date fields set to non-zero")
    seconds, ms = divmod(millis, 1000)
    return dt.time(seconds // 3600, seconds // 60 % 60, seconds % 60, ms * 1000)


def timestamp_to_millis(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        delta = value - EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000
    raise DataError(f"Invalid type for Timestamp: {type(value).__name__}")


def millis_to_timestamp(millis: int) -> dt.datetime:
    return EPOCH + dt.timedelta(milliseconds=millis)


class Decimal:
    """Kafka's ``org.apache.kafka.connect.data.Decimal``: an arbitrary-precision decimal."""

    LOGICAL_NAME = DECIMAL
    SCALE_FIELD = SCALE

    @staticmethod
    def schema(scale: int, optional: bool = False) -> Schema:
        return decimal_schema(scale, optional)

    @staticmethod
    def from_logical(schema: Schema, value: decimal.Decimal | float | int) -> bytes:
        """The encoded form: the unscaled value as big-endian two's-complement bytes."""
        return decimal_to_bytes(schema, value)

    @staticmethod
    def to_logical(schema: Schema, value: bytes) -> decimal.Decimal:
        return decimal_from_bytes(schema, value)


class Date:
    """Kafka's ``org.apache.kafka.connect.data.Date``: days since the epoch, as INT32."""

    LOGICAL_NAME = DATE

    @staticmethod
    def schema(optional: bool = False) -> Schema:
        return date_schema(optional)

    @staticmethod
    def from_logical(schema: Schema, value: dt.date) -> int:
        return date_to_days(value)

    @staticmethod
    def to_logical(schema: Schema, value: int) -> dt.date:
        return days_to_date(value)


class Time:
    """Kafka's ``org.apache.kafka.connect.data.Time``: milliseconds since midnight, as INT32."""

    LOGICAL_NAME = TIME

    @staticmethod
    def schema(optional: bool = False) -> Schema:
        return time_schema(optional)

    @staticmethod
    def from_logical(schema: Schema, value: dt.time) -> int:
        return time_to_millis(value)

    @staticmethod
    def to_logical(schema: Schema, value: int) -> dt.time:
        return millis_to_time(value)


class Timestamp:
    """Kafka's ``org.apache.kafka.connect.data.Timestamp``: milliseconds since the epoch, INT64."""

    LOGICAL_NAME = TIMESTAMP

    @staticmethod
    def schema(optional: bool = False) -> Schema:
        return timestamp_schema(optional)

    @staticmethod
    def from_logical(schema: Schema, value: dt.datetime) -> int:
        return timestamp_to_millis(value)

    @staticmethod
    def to_logical(schema: Schema, value: int) -> dt.datetime:
        return millis_to_timestamp(value)


__all__ = [
    "DATE",
    "DECIMAL",
    "LOGICAL_NAMES",
    "TIME",
    "TIMESTAMP",
    "Date",
    "Decimal",
    "Time",
    "Timestamp",
    "date_schema",
    "date_to_days",
    "days_to_date",
    "decimal_from_bytes",
    "decimal_from_unscaled",
    "decimal_rescale",
    "decimal_schema",
    "decimal_to_bytes",
    "decimal_unscaled",
    "millis_to_time",
    "millis_to_timestamp",
    "scale_of",
    "time_schema",
    "time_to_millis",
    "timestamp_schema",
    "timestamp_to_millis",
]
