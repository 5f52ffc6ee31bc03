"""Cast: casts fields, or the whole key or value, to another primitive type (Kafka's Cast).

Kafka casts with Java's rules, so they are reproduced here: narrowing integer casts wrap
(``(byte) 300 == 44``), floating-point to integer truncates and saturates at the int range,
booleans become 1/0, numbers become booleans when non-zero after truncation, strings parse
with Java's parsers, and values become strings with Java's ``toString`` (``1.0E10``,
base64 for bytes, ISO-8601 for dates).
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import math
import re
import struct
from typing import Any

from connect_lite.api import (
    ConfigDef,
    ConfigError,
    DataError,
    Importance,
    Schema,
    SchemaBuilder,
    SchemaType,
    Struct,
    Type,
    logical,
)
from connect_lite.api.column_form import ColumnFrame, KafkaCast, out_schema, struct_of
from connect_lite.api.config import invalid
from connect_lite.transforms.base import (
    REPLACE_NULL_WITH_DEFAULT,
    KeyOrValue,
    SchemaCache,
    copy_schema_basics,
    define_replace_null_with_default,
    java_class,
    java_narrow,
    java_split,
    kafka_class,
    require_map,
    require_struct,
    schema_type_of,
    struct_get,
)

SPEC_CONFIG = "spec"
PURPOSE = "cast types"

_INPUT_TYPES = (
    SchemaType.INT8,
    SchemaType.INT16,
    SchemaType.INT32,
    SchemaType.INT64,
    SchemaType.FLOAT32,
    SchemaType.FLOAT64,
    SchemaType.BOOLEAN,
    SchemaType.STRING,
    SchemaType.BYTES,
)
_OUTPUT_TYPES = _INPUT_TYPES[:-1]
_BITS = {SchemaType.INT8: 8, SchemaType.INT16: 16, SchemaType.INT32: 32, SchemaType.INT64: 64}
_MILLIS_PER_DAY = 86_400_000
_JAVA_INT = re.compile(r"[+-]?[0-9]+")
_JAVA_FLOAT = re.compile(
    r"[+-]?(?:NaN|Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?)"
)


def _type_list(types: tuple[SchemaType, ...]) -> str:
    return "[" + ", ".join(t.name for t in types) + "]"


def parse_spec(mappings: list[str]) -> dict[str | None, SchemaType]:
    """Kafka's ``parseFieldTypes``: field name (None for the whole value) -> target type.

    Raises ConfigError with Kafka's messages."""
    casts: dict[str | None, SchemaType] = {}
    whole_value = False
    for mapping in mappings:
        # "::" has no parts in Java (and fails Kafka with an index error): an empty type here
        parts = java_split(mapping, ":") or [""]
        if len(parts) > 2:
            raise ConfigError(invalid("renames", mappings, f"Invalid rename mapping: {mapping}"))
        if len(parts) == 1:
            name = parts[0].strip().upper()
            if name not in SchemaType.__members__:
                raise ConfigError(
                    f"No enum constant org.apache.kafka.connect.data.Schema.Type.{name}"
                )
            casts[None] = _valid_output(SchemaType[name])
            whole_value = True
        else:
            name = parts[1].strip().upper()
            if name not in SchemaType.__members__:
                raise ConfigError(f"Invalid type found in casting spec: {parts[1].strip()}")
            casts[parts[0].strip()] = _valid_output(SchemaType[name])
    if whole_value and len(mappings) > 1:
        raise ConfigError(
            "Cast transformations that specify a type to cast the entire value to "
            "may ony specify a single cast in their spec"
        )
    return casts


def _valid_output(type_: SchemaType) -> SchemaType:
    if type_ not in _OUTPUT_TYPES:
        raise ConfigError(
            f"Cast transformation does not support casting to {type_.name}; "
            f"supported types are {_type_list(_OUTPUT_TYPES)}"
        )
    return type_


def _spec_validator(name: str, value: Any) -> str | None:
    if not value:
        return "Must specify at least one field to cast."
    try:
        parse_spec(value)
    except ConfigError as error:
        return str(error)
    return None


class _Cast(KeyOrValue):
    """Kafka's Cast: ``spec`` is ``field:type,...`` or a single type for the whole value."""

    def config(self) -> ConfigDef:
        return define_replace_null_with_default(
            ConfigDef().define(
                SPEC_CONFIG,
                Type.LIST,
                validator=_spec_validator,
                importance=Importance.HIGH,
                doc="List of fields and the type to cast them to of the form "
                "field1:type,field2:type to cast fields of Maps or Structs. A single type to "
                "cast the entire value. Valid types are int8, int16, int32, int64, float32, "
                "float64, boolean, and string. Note that binary fields can only be cast to "
                "string.",
            )
        )

    def configure(self, config: dict[str, str]) -> None:
        self.settings = self.config().parse(config)
        self._casts = parse_spec(self.settings[SPEC_CONFIG])
        self._whole = self._casts.get(None)
        self._replace_null = bool(self.settings[REPLACE_NULL_WITH_DEFAULT])
        self._schemas = SchemaCache(self._updated_schema)

    def apply(self, record: Any) -> Any:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            return self.new_record(record, None, self._cast_schemaless(value))
        updated = self._schemas.get(schema)
        if self._whole is not None:
            return self.new_record(record, updated, cast_value(schema, value, self._whole))
        struct = require_struct(value, PURPOSE)
        result = Struct(updated)
        for field in schema.fields:
            original = struct_get(struct, field.name, self._replace_null)
            target = self._casts.get(field.name)
            result.put(
                field.name,
                original if target is None else cast_value(field.schema, original, target),
            )
        return self.new_record(record, updated, result)

    def _cast_schemaless(self, value: Any) -> Any:
        if self._whole is not None:
            return cast_value(None, value, self._whole)
        original = require_map(value, PURPOSE)
        updated = dict(original)
        for name, target in self._casts.items():
            assert name is not None  # only the whole-value cast has no name
            updated[name] = cast_value(None, original.get(name), target)
        return updated

    def _updated_schema(self, schema: Schema) -> Schema:
        if self._whole is not None:
            builder = copy_schema_basics(schema, SchemaBuilder(self._whole))
        else:
            builder = copy_schema_basics(schema, SchemaBuilder.struct())
            for field in schema.fields:
                target = self._casts.get(field.name)
                builder.field(
                    field.name,
                    field.schema if target is None else _cast_schema(field.schema, target),
                )
        if schema.optional:
            builder.optional()
        if schema.default is not None:
            # as Kafka: a Struct default cannot be cast, so this raises for struct schemas
            target = self._whole or SchemaType.STRUCT
            builder.default_value(cast_value(schema, schema.default, target))
        return builder.build()

    def column_form(self, frame: ColumnFrame, out: Any) -> ColumnFrame | None:
        side = frame.side(self.is_key)
        in_schema, schema = frame.schemas.get(side), out_schema(self.is_key, out)
        if side not in frame.cols or in_schema is None or schema is None:
            return None
        column = frame.cols[side]
        if in_schema.type is not SchemaType.STRUCT:
            return frame.with_side(side, KafkaCast(column, in_schema, schema), schema)
        columns = {}
        for f in schema.fields:
            before = in_schema.field(f.name)
            if before is None:
                return None
            columns[f.name] = KafkaCast(column.field(f.name), before.schema, f.schema)
        return frame.with_side(side, struct_of(columns, schema), schema)


def _cast_schema(schema: Schema, target: SchemaType) -> Schema:
    builder = SchemaBuilder(target)
    if schema.optional:
        builder.optional()
    if schema.default is not None:
        builder.default_value(cast_value(schema, schema.default, target))
    return builder.build()


def cast_value(schema: Schema | None, value: Any, target: SchemaType) -> Any:
    """Kafka's ``castValueToType``: ``schema`` is None for schemaless values."""
    if value is None:
        return None
    source = schema.type if schema is not None else schema_type_of(value)
    if source is None:
        raise DataError(
            f"Cast transformation was passed a value of type {java_class(value)} "
            "which is not supported by Connect's data API"
        )
    if source not in _INPUT_TYPES:
        raise DataError(
            f"Cast transformation does not support casting from {source.name}; "
            f"supported types are {_type_list(_INPUT_TYPES)}"
        )
    value = _decode_logical(schema, value, target)
    if source is SchemaType.FLOAT32 and isinstance(value, float):
        value = to_float32(value)  # a FLOAT32 value is a Java float, whatever Python holds
    try:
        if target in _BITS:
            return _to_int(value, _BITS[target])
        if target is SchemaType.FLOAT32:
            return to_float32(_to_float(value, single=True))
        if target is SchemaType.FLOAT64:
            return _to_float(value, single=False)
        if target is SchemaType.BOOLEAN:
            return _to_boolean(value)
        if target is SchemaType.STRING:
            return _to_string(value, schema)
    except _OutOfRange:
        # Kafka's text quotes the value; a trace is no place for a record's data.
        raise DataError(
            f"Value of {java_class(value)} was out of range for requested data type {target.name}"
        ) from None
    raise DataError(f"{target.name} is not supported in the Cast transformation.")


class _OutOfRange(Exception):
    """Java's NumberFormatException inside a cast."""


def _decode_logical(schema: Schema | None, value: Any, target: SchemaType) -> Any:
    """Logical values in the form Kafka casts them: Date/Time/Timestamp as their encoded
    integers for numeric targets, as epoch milliseconds (for formatting) for strings."""
    name = schema.name if schema is not None else None
    if schema is None or name not in logical.LOGICAL_NAMES:
        return value
    if name == logical.DECIMAL:
        return logical.decimal_from_bytes(schema, value) if isinstance(value, bytes) else value
    if name == logical.DATE:
        encoded = logical.date_to_days(value)
        return _JavaDate(encoded * _MILLIS_PER_DAY) if target is SchemaType.STRING else encoded
    if name == logical.TIME:
        encoded = logical.time_to_millis(value)
    else:
        encoded = logical.timestamp_to_millis(value)
    return _JavaDate(encoded) if target is SchemaType.STRING else encoded


class _JavaDate(int):
    """Epoch milliseconds standing for a ``java.util.Date`` on its way to a string."""


def _float_to_long(number: float, bits: int) -> int:
    """Java's float-to-int/long conversion: truncate, NaN is 0, saturate at the range."""
    if math.isnan(number):
        return 0
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if math.isinf(number):
        return high if number > 0 else low
    return max(low, min(high, math.trunc(number)))


def _to_int(value: Any, bits: int) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return java_narrow(value, bits)
    if isinstance(value, float):
        # byteValue/shortValue/intValue of a double go through int; longValue saturates at long
        return java_narrow(_float_to_long(value, 32 if bits < 64 else 64), bits)
    if isinstance(value, decimal.Decimal):
        return java_narrow(int(value), bits)
    if isinstance(value, str):
        if not _JAVA_INT.fullmatch(value):
            raise _OutOfRange
        number = int(value)
        if java_narrow(number, bits) != number:
            raise _OutOfRange
        return number
    raise DataError(f"Unexpected type in Cast transformation: {java_class(value)}")


def _to_float(value: Any, single: bool) -> float:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | decimal.Decimal):
        return float(value)
    if isinstance(value, float):
        return value
    if isinstance(value, str):
        text = value.strip(" \t\n\r\f\v\x00")
        if not _JAVA_FLOAT.fullmatch(text):
            raise _OutOfRange
        return float(text.rstrip("fFdD"))
    raise DataError(f"Unexpected type in Cast transformation: {java_class(value)}")


def to_float32(number: float) -> float:
    """The nearest 32-bit float, as Java's ``(float)`` (overflow becomes infinity)."""
    try:
        return float(struct.unpack("f", struct.pack("f", number))[0])
    except OverflowError:
        return math.copysign(math.inf, number)


def _to_boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.lower() == "true"
    if isinstance(value, float):
        return _float_to_long(value, 64) != 0
    if isinstance(value, int | decimal.Decimal):
        return java_narrow(int(value), 64) != 0
    raise DataError(f"Unexpected type in Cast transformation: {java_class(value)}")


def _to_string(value: Any, schema: Schema | None) -> str:
    if isinstance(value, _JavaDate):
        return format_java_date(int(value))
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        single = schema is not None and schema.type is SchemaType.FLOAT32
        return java_float_str(value) if single else java_double_str(value)
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii")
    return str(value)


def format_java_date(millis: int) -> str:
    """Kafka's ``Values.dateFormatFor``: a time before the first day, a date at midnight,
    otherwise an ISO-8601 timestamp (UTC)."""
    moment = logical.EPOCH + dt.timedelta(milliseconds=millis)
    ms = f"{moment.microsecond // 1000:03d}"
    if millis < _MILLIS_PER_DAY:
        return moment.strftime("%H:%M:%S.") + ms + "Z"
    if millis % _MILLIS_PER_DAY == 0:
        return moment.strftime("%Y-%m-%d")
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + ms + "Z"


def java_double_str(number: float) -> str:
    """Java's ``Double.toString``: plain between 1e-3 and 1e7, else ``d.dddE±n``."""
    return _java_decimal_str(number, repr(number))


def java_float_str(number: float) -> str:
    """Java's ``Float.toString``: the shortest digits that identify the 32-bit float."""
    if math.isnan(number) or math.isinf(number):
        return _java_decimal_str(number, "")
    for precision in range(1, 10):
        digits = f"{number:.{precision}g}"
        if to_float32(float(digits)) == number:
            return _java_decimal_str(number, digits)
    return _java_decimal_str(number, repr(number))


def _java_decimal_str(number: float, shortest: str) -> str:
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    if number == 0:
        return "-0.0" if math.copysign(1.0, number) < 0 else "0.0"
    sign, digit_tuple, exponent = decimal.Decimal(shortest).as_tuple()
    assert isinstance(exponent, int)  # finite numbers only here
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    exponent += len("".join(map(str, digit_tuple))) - len(digits)
    point = len(digits) + exponent  # digits before the decimal point
    prefix = "-" if sign else ""
    if 1e-3 <= abs(number) < 1e7:
        if point <= 0:
            return f"{prefix}0.{'0' * -point}{digits}"
        if point >= len(digits):
            return f"{prefix}{digits}{'0' * (point - len(digits))}.0"
        return f"{prefix}{digits[:point]}.{digits[point:]}"
    return f"{prefix}{digits[0]}.{digits[1:] or '0'}E{point - 1}"


class CastKey(_Cast):
    is_key = True
    __connect_class_name__ = kafka_class("Cast$Key")


class CastValue(_Cast):
    is_key = False
    __connect_class_name__ = kafka_class("Cast$Value")


__all__ = [
    "CastKey",
    "CastValue",
    "cast_value",
    "format_java_date",
    "java_double_str",
    "java_float_str",
    "parse_spec",
    "to_float32",
]
