"""PostgreSQL columns as Debezium maps them: each column's Connect schema, and its value from
PostgreSQL's text form (what pgoutput sends, and what the snapshot reads as ``::text``)."""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import decimal
import logging
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from connect_lite.api import (
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    SchemaType,
    Struct,
    Time,
    Timestamp,
)

log = logging.getLogger(__name__)

BOOL, BYTEA, CHAR, NAME, INT8, INT2, INT4, TEXT, OID = 16, 17, 18, 19, 20, 21, 23, 25, 26
JSON, XML, FLOAT4, FLOAT8, BPCHAR, VARCHAR = 114, 142, 700, 701, 1042, 1043
DATE, TIME, TIMESTAMP, TIMESTAMPTZ, NUMERIC, UUID, JSONB = 1082, 1083, 1114, 1184, 1700, 2950, 3802
MONEY, INTERVAL, TIMETZ = 790, 1186, 1266

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_EPOCH_DATE = dt.date(1970, 1, 1)
_US = dt.timedelta(microseconds=1)

Convert = Callable[[str], Any]


@dataclass(frozen=True)
class Mapped:
    """A column's schema and how its text becomes the schema's value."""

    schema: Schema
    convert: Convert


@dataclass(frozen=True)
class Modes:
    decimal: str = "precise"
    time: str = "adaptive"
    binary: str = "bytes"
    money_digits: int = 2
    interval: str = "numeric"


@dataclass(frozen=True)
class TypeFacts:
    """What the catalog says of a type that is not built in: an enum's labels (in their
    order), or an array's element type."""

    enum_labels: tuple[str, ...] | None = None
    element: int | None = None
    element_facts: TypeFacts | None = None


def _semantic(kind: SchemaType, name: str, optional: bool, **params: str) -> Schema:
    builder = SchemaBuilder.of(kind).name(name).version(1).parameters(params)
    return (builder.optional() if optional else builder).build()


def _plain(kind: SchemaType, optional: bool) -> Schema:
    builder = SchemaBuilder.of(kind)
    return (builder.optional() if optional else builder).build()


def precision(modifier: int, default: int = 6) -> int:
    """A time or timestamp column's fractional digits (its type modifier; -1: unset)."""
    return default if modifier < 0 else modifier


def _timestamp(text: str) -> dt.datetime:
    """A ``timestamp`` taken as UTC, or a ``timestamptz`` (as a UTC session prints it)."""
    value = dt.datetime.fromisoformat(text)
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


def _micros(value: dt.datetime) -> int:
    return (value - _EPOCH) // _US


def _zoned(digits: int) -> Convert:
    def convert(text: str) -> str:
        value = _timestamp(text).astimezone(dt.UTC)
        base = value.strftime("%Y-%m-%dT%H:%M:%S")
        if 0 < digits <= 9:
            base += "." + f"{value.microsecond:06d}{'000'}"[:digits]
        return base + "Z"

    return convert


def _time_micros(text: str) -> int:
    value = dt.time.fromisoformat(text)
    return ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond


def _bytea(mode: str) -> tuple[SchemaType, Convert]:
    def raw(text: str) -> bytes:
        return bytes.fromhex(text[2:]) if text.startswith("\\x") else text.encode()

    if mode == "base64":
        return SchemaType.STRING, lambda t: base64.b64encode(raw(t)).decode()
    if mode == "base64-url-safe":
        return SchemaType.STRING, lambda t: base64.urlsafe_b64encode(raw(t)).decode()
    if mode == "hex":
        return SchemaType.STRING, lambda t: raw(t).hex()
    return SchemaType.BYTES, raw


_VARIABLE_DECIMAL = (
    SchemaBuilder.struct()
    .name("io.debezium.data.VariableScaleDecimal")
    .version(1)
    .doc("Variable scaled decimal")
    .field("scale", Schema.INT32_SCHEMA)
    .field("value", Schema.BYTES_SCHEMA)
)


def _unscaled_bytes(unscaled: int) -> bytes:
    size = max(1, (unscaled.bit_length() + 8) // 8)
    return unscaled.to_bytes(size, "big", signed=True)


def _numeric(modifier: int, modes: Modes, optional: bool) -> Mapped | None:
    if modes.decimal == "double":
        return Mapped(_plain(SchemaType.FLOAT64, optional), float)
    if modes.decimal == "string":
        return Mapped(_plain(SchemaType.STRING, optional), str)
    if modifier < 0:  # numeric without precision: the scale travels with each value
        builder = _VARIABLE_DECIMAL.optional() if optional else _VARIABLE_DECIMAL
        schema = builder.build()

        def variable(text: str) -> Struct:
            number = decimal.Decimal(text)
            exponent = int(number.as_tuple().exponent)
            scale = max(0, -exponent)
            unscaled = int(number.scaleb(scale))
            return Struct(schema, {"scale": scale, "value": _unscaled_bytes(unscaled)})

        return Mapped(schema, variable)
    digits, scale = ((modifier - 4) >> 16) & 0xFFFF, (modifier - 4) & 0xFFFF
    return _decimal(scale, optional, decimal.Decimal, {"connect.decimal.precision": str(digits)})


_PLAIN: dict[int, tuple[SchemaType, Convert]] = {
    INT2: (SchemaType.INT16, int), INT4: (SchemaType.INT32, int), INT8: (SchemaType.INT64, int),
    OID: (SchemaType.INT64, int), FLOAT4: (SchemaType.FLOAT32, float),
    FLOAT8: (SchemaType.FLOAT64, float), BOOL: (SchemaType.BOOLEAN, lambda t: t in ("t", "true")),
    TEXT: (SchemaType.STRING, str), VARCHAR: (SchemaType.STRING, str),
    BPCHAR: (SchemaType.STRING, str), NAME: (SchemaType.STRING, str),
    CHAR: (SchemaType.STRING, str),
}  # fmt: skip


def mapped(
    type_oid: int, modifier: int, optional: bool, modes: Modes, facts: TypeFacts | None = None
) -> Mapped | None:
    """The column's schema and conversion as Debezium's PostgresValueConverter gives them;
    None for a type connect-lite does not map (the column is left out, as Debezium leaves
    out a type it does not know while ``include.unknown.datatypes`` is false). ``facts``:
    the catalog's word on a type that is not built in (an enum, an array)."""
    if facts is not None and facts.enum_labels is not None:
        allowed = ",".join(facts.enum_labels)
        return Mapped(_semantic(SchemaType.STRING, "io.debezium.data.Enum", optional,
                                allowed=allowed), str)  # fmt: skip
    if facts is not None and facts.element is not None:
        return _array(facts, modifier, optional, modes)
    if type_oid == MONEY:
        return _money(modes, optional)
    if type_oid in _PLAIN:
        kind, convert = _PLAIN[type_oid]
        return Mapped(_plain(kind, optional), convert)
    named = {JSON: "io.debezium.data.Json", JSONB: "io.debezium.data.Json",
             UUID: "io.debezium.data.Uuid", XML: "io.debezium.data.Xml"}  # fmt: skip
    if type_oid in named:
        return Mapped(_semantic(SchemaType.STRING, named[type_oid], optional), str)
    if type_oid == BYTEA:
        kind, convert = _bytea(modes.binary)
        return Mapped(_plain(kind, optional), convert)
    if type_oid == NUMERIC:
        return _numeric(modifier, modes, optional)
    return _temporal(type_oid, modifier, optional, modes)


_NO_ARRAY = frozenset((MONEY, INTERVAL, XML, NAME))
"""Element types whose arrays Debezium gives no schema (the column is left out)."""


def _array(facts: TypeFacts, modifier: int, optional: bool, modes: Modes) -> Mapped | None:
    """An array of the element's schema (its items optional); the column's type modifier is
    its elements'."""
    element = facts.element
    assert element is not None
    if element in _NO_ARRAY:
        return None
    inner = mapped(element, modifier, True, modes, facts.element_facts)
    if inner is None:
        return None
    builder = SchemaBuilder.array(inner.schema)
    schema = (builder.optional() if optional else builder).build()
    convert = inner.convert
    return Mapped(schema, lambda text: [None if e is None else convert(e)
                                        for e in array_items(text)])  # fmt: skip


def array_items(text: str) -> list[str | None]:
    """The items of a one-dimensional array literal as PostgreSQL prints it (``{1,NULL,"a b"}``):
    text, None for NULL."""
    body = text[text.index("{") + 1 : text.rindex("}")]
    items: list[str | None] = []
    if not body:
        return items
    at, size = 0, len(body)
    while at <= size:
        if at < size and body[at] == '"':
            at += 1
            chars = []
            while body[at] != '"':
                if body[at] == "\\":
                    at += 1
                chars.append(body[at])
                at += 1
            items.append("".join(chars))
            at += 2  # the closing quote and the comma
            continue
        end = body.find(",", at)
        end = size if end < 0 else end
        raw = body[at:end]
        items.append(None if raw == "NULL" else raw)
        at = end + 1
    return items


def _money(modes: Modes, optional: bool) -> Mapped:
    def number(text: str) -> decimal.Decimal:
        negative = "-" in text or "(" in text
        digits = "".join(c for c in text if c.isdigit() or c == ".")
        value = decimal.Decimal(digits or "0")
        return -value if negative else value

    if modes.decimal == "double":
        return Mapped(_plain(SchemaType.FLOAT64, optional), lambda t: float(number(t)))
    if modes.decimal == "string":
        return Mapped(_plain(SchemaType.STRING, optional), lambda t: str(number(t)))
    return _decimal(modes.money_digits, optional, number)


def _decimal(
    scale: int,
    optional: bool,
    parse: Callable[[str], decimal.Decimal],
    extra: dict[str, str] | None = None,
) -> Mapped:
    """Kafka's Decimal of ``scale`` (with Debezium's ``extra`` parameters): the parsed text
    rounded to the scale."""
    builder = SchemaBuilder.of(SchemaType.BYTES).name(Decimal.LOGICAL_NAME).version(1)
    builder.parameters({"scale": str(scale), **(extra or {})})
    schema = (builder.optional() if optional else builder).build()
    quantum = decimal.Decimal(1).scaleb(-scale)
    return Mapped(schema, lambda text: parse(text).quantize(quantum))


_DURATION = re.compile(
    r"P(?:(?P<y>-?\d+)Y)?(?:(?P<mo>-?\d+)M)?(?:(?P<d>-?\d+)D)?"
    r"(?:T(?:(?P<h>-?\d+)H)?(?:(?P<mi>-?\d+)M)?(?:(?P<s>-?[\d.]+)S)?)?"
)
_MONTH_US = 365.25 / 12 * 86_400 * 1_000_000


def _interval_micros(text: str) -> int:
    """An interval (printed with IntervalStyle iso_8601, as the connector's sessions set it)
    as Debezium's MicroDuration: a month is 365.25/12 days."""
    match = _DURATION.fullmatch(text)
    if match is None:
        raise ValueError(f"Cannot read the interval {text!r}")
    part = {k: v or "0" for k, v in match.groupdict().items()}
    months = int(part["y"]) * 12 + int(part["mo"])
    seconds = decimal.Decimal(part["s"])
    micros = ((int(part["d"]) * 24 + int(part["h"])) * 60 + int(part["mi"])) * 60_000_000
    return int(months * _MONTH_US) + micros + int(seconds * 1_000_000)


def _zoned_time(text: str) -> str:
    """A ``timetz`` in UTC, as Java's ISO_OFFSET_TIME prints it (``11:51:30.123789Z``)."""
    value = dt.time.fromisoformat(text)
    offset = value.utcoffset() or dt.timedelta()
    moment = dt.datetime.combine(dt.date(2000, 1, 1), value.replace(tzinfo=None)) - offset
    shown = moment.strftime("%H:%M:%S")
    if moment.microsecond:
        shown += f".{moment.microsecond:06d}".rstrip("0")
    return shown + "Z"


def _temporal(type_oid: int, modifier: int, optional: bool, modes: Modes) -> Mapped | None:
    if type_oid == DATE:
        if modes.time == "connect":
            return Mapped(Date.schema(optional), dt.date.fromisoformat)
        return Mapped(_semantic(SchemaType.INT32, "io.debezium.time.Date", optional),
                      lambda t: (dt.date.fromisoformat(t) - _EPOCH_DATE).days)  # fmt: skip
    if type_oid == TIME:
        if modes.time == "connect":
            return Mapped(Time.schema(optional), dt.time.fromisoformat)
        if modes.time == "adaptive" and precision(modifier) <= 3:
            return Mapped(_semantic(SchemaType.INT32, "io.debezium.time.Time", optional),
                          lambda t: _time_micros(t) // 1000)  # fmt: skip
        return Mapped(_semantic(SchemaType.INT64, "io.debezium.time.MicroTime", optional),
                      _time_micros)  # fmt: skip
    if type_oid == TIMESTAMP:
        if modes.time == "connect":
            return Mapped(Timestamp.schema(optional), _timestamp)
        if precision(modifier) <= 3:
            return Mapped(_semantic(SchemaType.INT64, "io.debezium.time.Timestamp", optional),
                          lambda t: _micros(_timestamp(t)) // 1000)  # fmt: skip
        return Mapped(_semantic(SchemaType.INT64, "io.debezium.time.MicroTimestamp", optional),
                      lambda t: _micros(_timestamp(t)))  # fmt: skip
    if type_oid == TIMESTAMPTZ:
        return Mapped(_semantic(SchemaType.STRING, "io.debezium.time.ZonedTimestamp", optional),
                      _zoned(precision(modifier)))  # fmt: skip
    if type_oid == INTERVAL:
        if modes.interval == "string":
            return Mapped(_semantic(SchemaType.STRING, "io.debezium.time.Interval", optional),
                          str)  # fmt: skip
        return Mapped(_semantic(SchemaType.INT64, "io.debezium.time.MicroDuration", optional),
                      _interval_micros)  # fmt: skip
    if type_oid == TIMETZ:
        return Mapped(_semantic(SchemaType.STRING, "io.debezium.time.ZonedTime", optional),
                      _zoned_time)  # fmt: skip
    return None


# -- column defaults ----------------------------------------------------------------------

_GENERATED_DEFAULT = re.compile(r"[(]?[A-Za-z0-9_.]+\((?:.+(?:, ?.+)*)?\)")
"""A default made by a function (``nextval('t_id_seq'::regclass)``, ``now()``)."""
_CURRENT = frozenset(
    ("current_timestamp", "current_time", "current_date", "localtime", "localtimestamp")
)
_QUOTED = re.compile(r"'([^']*(?:''[^']*)*)'")
_INTEGER = re.compile(r"[+-]?\d+")
_INT_RANGE = {SchemaType.INT16: 15, SchemaType.INT32: 31, SchemaType.INT64: 63}
_PLACEHOLDER = {
    BOOL: "false", INT2: "0", INT4: "0", INT8: "0", FLOAT4: "0.0", FLOAT8: "0.0",
    NUMERIC: "0.0", TEXT: "", VARCHAR: "", BPCHAR: "", JSON: "{}", JSONB: "{}", XML: "",
    UUID: "00000000-0000-0000-0000-000000000000", DATE: "1970-01-01", TIME: "00:00",
    TIMESTAMP: "1970-01-01", TIMESTAMPTZ: "1970-01-01", INTERVAL: "PT0S",
}  # fmt: skip
"""What Debezium's PostgresDefaultValueConverter puts in the schema for a generated default,
by type; a type not here (bytea, money, timetz, arrays...) gets no default, as in Debezium."""


def _default_text(expression: str, placeholder: str) -> str | None:
    """The text of a default as ``pg_get_expr`` prints it: a literal (``42``,
    ``'a''b'::text``), None for ``NULL::type``, the placeholder for a generated one."""
    expression = expression.strip()
    if _GENERATED_DEFAULT.match(expression) or expression.lower() in _CURRENT:
        return placeholder
    if "'" not in expression:
        return None if expression.startswith("NULL::") else expression
    found = _QUOTED.search(expression)
    return None if found is None else found.group(1).replace("''", "'")


def _default_value(mapped: Mapped, type_oid: int, text: str) -> Any:
    """A default's text as the column's value, as Debezium reads it (ValueError if it can't)."""
    kind = mapped.schema.type
    if type_oid == BOOL:
        return text.lower() == "true"  # Java's Boolean.parseBoolean
    if kind in _INT_RANGE and type_oid in (INT2, INT4, INT8):
        bits = _INT_RANGE[kind]
        if not _INTEGER.fullmatch(text) or not -(2**bits) <= int(text) < 2**bits:
            raise ValueError(text)
        return int(text)
    if type_oid == UUID:
        return str(uuid.UUID(text))
    if type_oid in (TEXT, VARCHAR, BPCHAR, JSON, JSONB, XML):
        return text
    value = mapped.convert(text)
    if isinstance(value, Struct):  # a variable-scale decimal: Kafka takes no Struct default
        raise ValueError(text)
    return value


def with_default(
    mapped: Mapped, type_oid: int, facts: TypeFacts | None, expression: str | None
) -> Mapped:
    """The column with its default in the schema, as Debezium's PostgreSQL connector gives it:
    a literal default as the column's value, a generated one (a sequence, ``now()``) as a
    placeholder of the type (0, the epoch...), none for ``NULL``, for an expression it cannot
    read, and for the types it has no reader for."""
    if expression is None:
        return mapped
    if facts is not None and facts.enum_labels is not None:  # only a quoted label, cast
        label, cast, _ = expression.rpartition("::")
        if cast and len(label) >= 2 and label[0] == label[-1] == "'":
            return Mapped(dataclasses.replace(mapped.schema, default=label[1:-1]), mapped.convert)
        return mapped
    # an array has no reader in Debezium
    placeholder = None if facts is not None else _PLACEHOLDER.get(type_oid)
    if placeholder is None:
        return mapped
    text = _default_text(expression, placeholder)
    if text is None:
        return mapped
    try:
        value = _default_value(mapped, type_oid, text)
    except (ValueError, ArithmeticError):
        log.warning("Cannot read the column default %r as a %s; the schema has none",
                    expression, mapped.schema.name or mapped.schema.type.value)  # fmt: skip
        return mapped
    return Mapped(dataclasses.replace(mapped.schema, default=value), mapped.convert)
