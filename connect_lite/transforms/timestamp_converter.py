"""TimestampConverter: converts a timestamp field (or the whole key or value) between unix
epoch numbers, formatted strings and Connect's Date, Time and Timestamp (Kafka's transform).

Every conversion goes through epoch milliseconds in UTC, the resolution of Kafka's pivot
``java.util.Date``, so sub-millisecond parts are lost as in Kafka. Python values of the
logical types are ``datetime.date`` (Date), ``datetime.time`` (Time) and UTC
``datetime.datetime`` (Timestamp); schemaless, all three are read as a Timestamp.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from connect_lite.api import (
    ConfigDef,
    ConfigError,
    ConnectError,
    DataError,
    Importance,
    Schema,
    SchemaBuilder,
    SchemaType,
    Struct,
    Type,
    ValidString,
    logical,
)
from connect_lite.api.column_form import ColumnFrame, fields_of, out_schema, struct_of
from connect_lite.api.field_path import FIELD_SYNTAX_VERSION, FieldPath, define_field_syntax
from connect_lite.transforms.base import (
    REPLACE_NULL_WITH_DEFAULT,
    KeyOrValue,
    SchemaCache,
    copy_schema_basics,
    define_replace_null_with_default,
    java_class,
    kafka_class,
    require_map,
    require_struct_or_null,
    struct_get,
)
from connect_lite.transforms.java_time import JavaDateFormat, PatternError, UnsupportedPatternError

FIELD_CONFIG = "field"
TARGET_TYPE_CONFIG = "target.type"
FORMAT_CONFIG = "format"
UNIX_PRECISION_CONFIG = "unix.precision"
PURPOSE = "converting timestamp formats"

STRING, UNIX, DATE, TIME, TIMESTAMP = "string", "unix", "Date", "Time", "Timestamp"
SECONDS, MILLIS, MICROS, NANOS = "seconds", "milliseconds", "microseconds", "nanoseconds"
_MS_PER_DAY = 86_400_000
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_UNIX_FACTORS = {SECONDS: 1000, MILLIS: 1, MICROS: 1000, NANOS: 1_000_000}


def type_schema(kind: str, optional: bool) -> Schema:
    """The schema of a converted value, as Kafka's ``TimestampTranslator.typeSchema``."""
    if kind == STRING:
        return Schema.OPTIONAL_STRING_SCHEMA if optional else Schema.STRING_SCHEMA
    if kind == UNIX:
        return Schema.OPTIONAL_INT64_SCHEMA if optional else Schema.INT64_SCHEMA
    if kind == DATE:
        return logical.date_schema(optional)
    if kind == TIME:
        return logical.time_schema(optional)
    return logical.timestamp_schema(optional)


def kind_of_schema(schema: Schema) -> str:
    """Kafka's ``timestampTypeFromSchema``."""
    by_name = {logical.TIMESTAMP: TIMESTAMP, logical.DATE: DATE, logical.TIME: TIME}
    if schema.name in by_name:
        return by_name[schema.name]
    if schema.type is SchemaType.STRING:
        return STRING
    if schema.type is SchemaType.INT64:
        return UNIX
    shown = f"{schema.name}:" if schema.name else ""
    raise ConnectError(
        f"Schema Schema{{{shown}{schema.type.name}}} does not correspond to a known timestamp "
        "type format"
    )


def kind_of_value(value: Any) -> str:
    """Kafka's ``inferTimestampType`` for schemaless values."""
    if isinstance(value, dt.date | dt.time):
        return TIMESTAMP
    if isinstance(value, int) and not isinstance(value, bool):
        return UNIX
    if isinstance(value, str):
        return STRING
    raise DataError(
        f"TimestampConverter does not support {java_class(value)} objects as timestamps"
    )


def _java_div(dividend: int, divisor: int) -> int:
    """Java's integer division, which truncates toward zero."""
    quotient = abs(dividend) // divisor
    return quotient if dividend >= 0 else -quotient


def _saturate(number: int) -> int:
    return max(_LONG_MIN, min(_LONG_MAX, number))


class _TimestampConverter(KeyOrValue):
    """Kafka's TimestampConverter: ``target.type`` string, unix, Date, Time or Timestamp; an
    empty ``field`` converts the whole key or value."""

    def config(self) -> ConfigDef:
        config = (
            ConfigDef()
            .define(
                FIELD_CONFIG,
                Type.STRING,
                "",
                importance=Importance.HIGH,
                doc="The field containing the timestamp, or empty if the entire value is a "
                "timestamp",
            )
            .define(
                TARGET_TYPE_CONFIG,
                Type.STRING,
                validator=ValidString.in_(STRING, UNIX, DATE, TIME, TIMESTAMP),
                importance=Importance.HIGH,
                doc="The desired timestamp representation: string, unix, Date, Time, or Timestamp",
            )
            .define(
                FORMAT_CONFIG,
                Type.STRING,
                "",
                importance=Importance.MEDIUM,
                doc="A SimpleDateFormat-compatible format for the timestamp. Used to generate the "
                "output when type=string or used to parse the input if the input is a string.",
            )
            .define(
                UNIX_PRECISION_CONFIG,
                Type.STRING,
                MILLIS,
                validator=ValidString.in_(NANOS, MICROS, MILLIS, SECONDS),
                importance=Importance.LOW,
                doc="The desired Unix precision for the timestamp: seconds, milliseconds, "
                "microseconds, or nanoseconds. Used to generate the output when type=unix or used "
                "to parse the input if the input is a Long.Note: This SMT will cause precision "
                "loss during conversions from, and to, values with sub-millisecond components.",
            )
        )
        return define_field_syntax(define_replace_null_with_default(config))

    def configure(self, config: dict[str, str]) -> None:
        self.settings = self.config().parse(config)
        self._target: str = self.settings[TARGET_TYPE_CONFIG]
        self._precision: str = self.settings[UNIX_PRECISION_CONFIG]
        self._replace_null = bool(self.settings[REPLACE_NULL_WITH_DEFAULT])
        field = self.settings[FIELD_CONFIG]
        syntax = self.settings[FIELD_SYNTAX_VERSION]
        self._path = FieldPath.parse(field, syntax) if field else None
        pattern = self.settings[FORMAT_CONFIG] or ""
        if self._target == STRING and not pattern.strip():
            raise ConfigError(
                "TimestampConverter requires format option to be specified when using string "
                "timestamps"
            )
        self._format = _compile_format(pattern) if pattern.strip() else None
        self._schemas = SchemaCache(self._output_schema)

    # conversions

    def convert(self, value: Any, kind: str | None) -> Any:
        """Kafka's ``convertTimestamp``: ``kind`` is the source type, None to infer it."""
        if value is None:
            return None
        millis = self._to_millis(value, kind or kind_of_value(value))
        return self._from_millis(millis)

    def _to_millis(self, value: Any, kind: str) -> int:
        if kind == STRING:
            if not isinstance(value, str):
                raise DataError(
                    f"Expected string timestamp to be a String, but found {java_class(value)}"
                )
            fmt = self._required_format()
            try:
                return fmt.parse(value)
            except ValueError:
                raise DataError(
                    # Kafka's text quotes the value; a trace is no place for a record's data.
                    f"Could not parse timestamp: a string of {len(value)} characters does not "
                    f"match pattern ({fmt.to_pattern()})"
                ) from None
        if kind == UNIX:
            if not isinstance(value, int) or isinstance(value, bool):
                raise DataError(
                    f"Expected Unix timestamp to be a Long, but found {java_class(value)}"
                )
            factor = _UNIX_FACTORS[self._precision]
            if self._precision == SECONDS:
                return _saturate(value * factor)
            return _java_div(value, factor)
        return _logical_millis(value, kind)

    def _from_millis(self, millis: int) -> Any:
        target = self._target
        if target == STRING:
            try:
                return self._required_format().format(millis)
            except ValueError as error:
                raise DataError(str(error)) from None
        if target == UNIX:
            factor = _UNIX_FACTORS[self._precision]
            if self._precision == SECONDS:
                return _java_div(millis, factor)
            return _saturate(millis * factor)
        try:
            if target == DATE:
                return logical.days_to_date(millis // _MS_PER_DAY)
            if target == TIME:
                return logical.millis_to_time(millis % _MS_PER_DAY)
            return logical.millis_to_timestamp(millis)
        except OverflowError:
            raise DataError(f"Timestamp {millis} is outside the supported range") from None

    def _required_format(self) -> JavaDateFormat:
        if self._format is None:
            raise DataError(
                "TimestampConverter requires format option to be specified when using string "
                "timestamps"
            )
        return self._format

    # records

    def apply(self, record: Any) -> Any:
        value = self.operating_value(record)
        schema = self.operating_schema(record)
        if schema is None:
            return self.new_record(record, None, self._apply_schemaless(value))
        updated = self._schemas.get(schema)
        if self._path is None:
            return self.new_record(record, updated, self.convert(value, kind_of_schema(schema)))
        struct = require_struct_or_null(value, PURPOSE)
        result = None if struct is None else self._updated_struct(struct, updated, self._path.steps)
        return self.new_record(record, updated, result)

    def _apply_schemaless(self, value: Any) -> Any:
        if value is None or self._path is None:
            return self.convert(value, None)
        return self._updated_map(require_map(value, PURPOSE), self._path.steps)

    def _updated_map(self, original: Mapping[str, Any], steps: tuple[str, ...]) -> Any:
        updated = dict(original)
        head, rest = steps[0], steps[1:]
        if not rest:
            updated[head] = self.convert(original.get(head), None)
        elif isinstance(original.get(head), Mapping):
            updated[head] = self._updated_map(original[head], rest)
        return updated

    def _output_schema(self, schema: Schema) -> Schema:
        """The schema of the converted key/value: the target type's, or for a field the
        struct schema with that field's schema replaced."""
        if self._path is None:
            return type_schema(self._target, schema.optional)
        return self._updated_schema(schema, self._path.steps)

    def _updated_schema(self, schema: Schema, steps: tuple[str, ...]) -> Schema:
        """The struct schema with the field at ``steps`` given the target type's schema."""
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        head, rest = steps[0], steps[1:]
        for field in schema.fields:
            field_schema = field.schema
            if field.name == head and not rest:
                field_schema = type_schema(self._target, field.schema.optional)
            elif field.name == head and field.schema.type is SchemaType.STRUCT:
                field_schema = self._updated_schema(field.schema, rest)
            builder.field(field.name, field_schema)
        if schema.optional:
            builder.optional()
        if isinstance(schema.default, Struct):
            without_default = builder.build()
            builder.default_value(self._updated_struct(schema.default, without_default, steps))
        return builder.build()

    def _updated_struct(self, struct: Struct, updated: Schema, steps: tuple[str, ...]) -> Struct:
        head, rest = steps[0], steps[1:]
        result = Struct(updated)
        for field in struct.schema.fields:
            value = struct_get(struct, field.name, self._replace_null)
            if field.name == head and not rest:
                value = self.convert(value, kind_of_schema(field.schema))
            elif field.name == head and isinstance(value, Struct):
                nested = updated.field(head)
                assert nested is not None  # the updated schema has the same fields
                value = self._updated_struct(value, nested.schema, rest)
            result.put(field.name, value)
        return result

    def column_form(self, frame: ColumnFrame, out: Any) -> ColumnFrame | None:
        """Only millisecond unix times to Timestamps and back: the same INT64, a new schema."""
        side = frame.side(self.is_key)
        in_schema, schema = frame.schemas.get(side), out_schema(self.is_key, out)
        if side not in frame.cols or in_schema is None or schema is None:
            return None
        if self._precision != "milliseconds":
            return None
        if self._path is None:
            if not _same_millis(in_schema, schema):
                return None
            return frame.with_side(side, frame.cols[side], schema)
        found = frame.struct_side(self.is_key)
        if found is None or not self._path.is_root or schema.type is not SchemaType.STRUCT:
            return None
        name = self._path.name
        before, after = in_schema.field(name), schema.field(name)
        if before is None or after is None or not _same_millis(before.schema, after.schema):
            return None
        columns = fields_of(found[1], in_schema)
        if set(columns) != {f.name for f in schema.fields}:
            return None
        return frame.with_side(side, struct_of(columns, schema), schema)


def _same_millis(before: Schema, after: Schema) -> bool:
    """A Timestamp to or from a plain INT64 of milliseconds: the data does not change."""
    kinds = {before.name, after.name}
    return (
        before.type is after.type is SchemaType.INT64
        and kinds <= {None, logical.TIMESTAMP}
        and len(kinds) == 2
    )


def _compile_format(pattern: str) -> JavaDateFormat:
    try:
        return JavaDateFormat(pattern)
    except UnsupportedPatternError as error:
        raise ConfigError(f"TimestampConverter cannot use the pattern {pattern}: {error}") from None
    except PatternError:
        raise ConfigError(
            "TimestampConverter requires a SimpleDateFormat-compatible pattern for string "
            f"timestamps: {pattern}"
        ) from None


def _logical_millis(value: Any, kind: str) -> int:
    """Epoch milliseconds of a Date, Time or Timestamp value (or its encoded integer)."""
    if isinstance(value, dt.datetime):
        return logical.timestamp_to_millis(value)
    if isinstance(value, dt.date):
        return logical.date_to_days(value) * _MS_PER_DAY
    if isinstance(value, dt.time):
        return logical.time_to_millis(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value * _MS_PER_DAY if kind == DATE else value
    raise DataError(f"Expected {kind} to be a java.util.Date, but found {java_class(value)}")


class TimestampConverterKey(_TimestampConverter):
    is_key = True
    __connect_class_name__ = kafka_class("TimestampConverter$Key")


class TimestampConverterValue(_TimestampConverter):
    is_key = False
    __connect_class_name__ = kafka_class("TimestampConverter$Value")


__all__ = [
    "TimestampConverterKey",
    "TimestampConverterValue",
    "kind_of_schema",
    "kind_of_value",
    "type_schema",
]
