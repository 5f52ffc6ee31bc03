"""What Kafka's built-in transforms and predicates share: the $Key/$Value split,
requirements, config keys and validators, Struct reads, and Java names and syntax.

Every built-in keeps its parsed config in ``self.settings`` (Kafka's key names) after
``configure``. Most also have a column form (``column_form`` or ``column_condition``, see
``connect_lite.api.column_form``) beside its ``apply`` or ``test``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import re
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from connect_lite import __version__
from connect_lite.api import (
    ConfigDef,
    DataError,
    Importance,
    Predicate,
    Schema,
    SchemaBuilder,
    SchemaType,
    SinkRecord,
    Struct,
    Transformation,
    Type,
)
from connect_lite.api.config import invalid

KAFKA_PACKAGE = "org.apache.kafka.connect.transforms"
REPLACE_NULL_WITH_DEFAULT = "replace.null.with.default"
SCHEMA_CACHE_SIZE = 16  # Kafka's schemaUpdateCache: new LRUCache<>(16)


def kafka_class(name: str, package: str = KAFKA_PACKAGE) -> str:
    """The Java class name of a Kafka transform, e.g. ``...transforms.InsertField$Value``: a
    built-in's class name (``__connect_class_name__``), whose short name is an alias."""
    return f"{package}.{name}"


class _Builtin:
    """Versioned as connect-lite, config parsed into ``self.settings``."""

    settings: dict[str, Any]

    def version(self) -> str:
        return __version__

    def config(self) -> ConfigDef:
        return ConfigDef()

    def configure(self, config: dict[str, str]) -> None:
        self.settings = self.config().parse(config)


def updated(record: Any, **changes: Any) -> Any:
    """``dataclasses.replace`` for records, about three times faster: the fields are copied
    without running ``__init__`` again (a chain runs this for every record it changes)."""
    fields = record.__dict__
    if not changes.keys() <= fields.keys():
        return dataclasses.replace(record, **changes)
    new = object.__new__(type(record))
    object.__setattr__(new, "__dict__", {**fields, **changes})
    return new


class BuiltinTransformation(_Builtin, Transformation[Any]):
    """A built-in transformation."""


class BuiltinPredicate(_Builtin, Predicate[Any]):
    """A built-in predicate."""


class KeyOrValue(BuiltinTransformation):
    """Kafka's ``$Key``/``$Value`` pair: the subclass sets ``is_key``."""

    is_key: ClassVar[bool] = False

    def operating_schema(self, record: Any) -> Schema | None:
        return record.key_schema if self.is_key else record.value_schema

    def operating_value(self, record: Any) -> Any:
        return record.key if self.is_key else record.value

    def new_record(self, record: Any, schema: Schema | None, value: Any) -> Any:
        if self.is_key:
            return updated(record, key_schema=schema, key=value)
        return updated(record, value_schema=schema, value=value)


class SchemaCache:
    """Kafka's ``schemaUpdateCache``: the output schema a transform built for an input schema,
    for up to ``size`` input schemas, so that records sharing a schema build it once rather
    than once per record.

    ``build`` must depend on the input schema and the transform's configuration only (a
    transform makes a new cache in ``configure``); its errors are not cached. An unhashable
    schema (a list or dict default) is built every time. When full, the oldest entry goes:
    Kafka's LRUCache drops the least recently used one instead, which differs only for a
    transform that sees more than ``size`` schemas, and would cost a second hash of the
    schema per lookup here. Each step is one dict operation, safe under the GIL without a
    lock (a race can only build a schema twice)."""

    __slots__ = ("_build", "_entries", "_last", "_size")

    def __init__(self, build: Callable[[Schema], Schema], size: int = SCHEMA_CACHE_SIZE) -> None:
        self._build = build
        self._size = size
        self._entries: dict[Schema, Schema] = {}
        # (input, output) of the last lookup: records in a row usually share one schema
        # object, and comparing identities is far cheaper than hashing a schema.
        self._last: tuple[Schema, Schema] | None = None

    def get(self, schema: Schema) -> Schema:
        """The output schema for ``schema``, built on a miss."""
        last = self._last
        if last is not None and last[0] is schema:
            return last[1]
        entries = self._entries
        try:
            output = entries.get(schema)
        except TypeError:  # an unhashable default value: no caching
            return self._build(schema)
        if output is None:
            output = self._build(schema)
            excess = len(entries) + 1 - self._size
            if excess > 0:
                for oldest in list(entries)[:excess]:
                    entries.pop(oldest, None)
            entries[schema] = output
        self._last = (schema, output)
        return output

    def __len__(self) -> int:
        return len(self._entries)


# Requirements: Kafka's transforms/util/Requirements


def require_map(value: Any, purpose: str) -> Mapping[str, Any]:
    """Kafka's ``Requirements.requireMap``."""
    if not isinstance(value, Mapping):
        raise DataError(
            f"Only Map objects supported in absence of schema for [{purpose}], "
            f"found: {java_class_name(value)}"
        )
    return value


def require_map_or_null(value: Any, purpose: str) -> Mapping[str, Any] | None:
    return None if value is None else require_map(value, purpose)


def require_struct(value: Any, purpose: str) -> Struct:
    """Kafka's ``Requirements.requireStruct``."""
    if not isinstance(value, Struct):
        raise DataError(
            f"Only Struct objects supported for [{purpose}], found: {java_class_name(value)}"
        )
    return value


def require_struct_or_null(value: Any, purpose: str) -> Struct | None:
    return None if value is None else require_struct(value, purpose)


def require_schema(schema: Schema | None, purpose: str) -> Schema:
    if schema is None:
        raise DataError(f"Schema required for [{purpose}]")
    return schema


def require_sink_record(record: Any, purpose: str) -> SinkRecord:
    """Kafka's ``Requirements.requireSinkRecord``: only sink records have an offset."""
    if not isinstance(record, SinkRecord):
        raise DataError(
            f"Only SinkRecord supported for [{purpose}], found: "
            "org.apache.kafka.connect.source.SourceRecord"
        )
    return record


# Schemas and Struct values


def copy_schema_basics(source: Schema, builder: SchemaBuilder) -> SchemaBuilder:
    """Kafka's ``SchemaUtil.copySchemaBasics``: name, version, doc and parameters (not
    optionality or the default, which the caller decides)."""
    builder.name(source.name).version(source.version).doc(source.doc)
    if source.parameters:
        builder.parameters(dict(source.parameters))
    return builder


def define_replace_null_with_default(config: ConfigDef) -> ConfigDef:
    """Add KIP-1040's ``replace.null.with.default`` key (BOOLEAN, default true)."""
    return config.define(
        REPLACE_NULL_WITH_DEFAULT,
        Type.BOOLEAN,
        True,
        importance=Importance.MEDIUM,
        doc="Whether to replace fields that have a default value and that are null to the "
        "default value. When set to true, the default value is used, otherwise null is used.",
    )


def struct_get(struct: Struct, name: str, replace_null_with_default: bool = True) -> Any:
    """Kafka's ``Struct.get`` (a null field reads as its schema default) when
    ``replace_null_with_default``, else ``Struct.getWithoutDefault`` (the stored value).

    Our ``Struct.get`` only falls back to the default for a field never set; Kafka's also does
    for a field explicitly set to null, which is what KIP-1040 lets users turn off."""
    value = struct.get_without_default(name)
    if value is None and replace_null_with_default:
        field = struct.schema.field(name)
        assert field is not None  # get_without_default has checked the name
        return field.schema.default
    return value


def schema_type_of(value: Any) -> SchemaType | None:
    """Kafka's ``ConnectSchema.schemaType`` for a schemaless value: None when Connect's data
    API has no type for it."""
    for kind, schema_type in _SCHEMA_TYPES:
        if isinstance(value, kind):
            return schema_type
    return None


_SCHEMA_TYPES: tuple[tuple[type | tuple[type, ...], SchemaType], ...] = (
    (bool, SchemaType.BOOLEAN),  # before int: a bool is an int in Python
    (int, SchemaType.INT64),
    (float, SchemaType.FLOAT64),
    (str, SchemaType.STRING),
    ((bytes, bytearray), SchemaType.BYTES),
    (list, SchemaType.ARRAY),
    (Mapping, SchemaType.MAP),
    (Struct, SchemaType.STRUCT),
)


# Config validators: Kafka's ConfigDef and transforms/util validators


def non_empty_string(name: str, value: Any) -> str | None:
    """Kafka's ``ConfigDef.NonEmptyString`` ("String must be non-empty"; null passes). Kafka's
    ConfigDef trims STRING values before validating, so a blank value counts as empty."""
    if value is not None and str(value).strip() == "":
        return invalid(name, "", "String must be non-empty")
    return None


def non_empty_list(name: str, value: Any) -> str | None:
    """Kafka's ``NonEmptyListValidator`` (connect/transforms/util)."""
    return invalid(name, value, "Empty list") if value is not None and not value else None


def java_regex_problem(name: str, value: Any) -> str | None:
    """Kafka's ``RegexValidator``: the value must compile; the message follows Java's
    ``PatternSyntaxException`` for the common mistakes."""
    if value is None:
        return None
    try:
        re.compile(java_pattern(value))
    except re.error as error:
        return invalid(name, value, "Invalid regex: " + _java_syntax_message(value, error))
    except OverflowError as error:  # a repetition count too large
        return invalid(name, value, f"Invalid regex: {error}")
    except RecursionError:
        return invalid(name, value, "Invalid regex: too many nested groups")
    return None


def _java_syntax_message(pattern: str, error: re.error) -> str:
    pos = error.pos if error.pos is not None else -1
    if error.msg.startswith("unterminated character set"):
        desc, index = "Unclosed character class", len(pattern) - 1
    elif error.msg.startswith("missing ), unterminated subpattern"):
        desc, index = "Unclosed group", len(pattern)
    elif error.msg in ("nothing to repeat", "multiple repeat") and 0 <= pos < len(pattern):
        desc, index = f"Dangling meta character '{pattern[pos]}'", pos
    elif error.msg == "unbalanced parenthesis":
        desc, index = "Unmatched closing ')'", pos - 1
    else:
        desc, index = error.msg, pos
    text = desc + (f" near index {index}" if index >= 0 else "") + "\n" + pattern
    if 0 <= index < len(pattern):
        text += "\n" + " " * index + "^"
    return text


# Java names and syntax


def java_class_name(value: Any) -> str:
    """``getClass().getName()`` of the Java object Kafka would hold for ``value``, or "null"
    (Kafka's ``nullSafeClassName``). A type Java has no counterpart for keeps its Python name."""
    if value is None:
        return "null"
    for kind in type(value).__mro__:
        if kind in _JAVA_CLASS_NAMES:
            return _JAVA_CLASS_NAMES[kind]
    return f"{type(value).__module__}.{type(value).__qualname__}"


def java_class(value: Any) -> str:
    """``value.getClass()`` in a Java string, as Kafka's messages print it: ``class X``."""
    return "class " + java_class_name(value)


_JAVA_CLASS_NAMES: dict[type, str] = {
    bool: "java.lang.Boolean",
    int: "java.lang.Long",
    float: "java.lang.Double",
    str: "java.lang.String",
    bytes: "[B",
    bytearray: "[B",
    list: "java.util.ArrayList",
    dict: "java.util.HashMap",
    decimal.Decimal: "java.math.BigDecimal",
    dt.datetime: "java.util.Date",
    dt.date: "java.util.Date",
    dt.time: "java.util.Date",
    Struct: "org.apache.kafka.connect.data.Struct",
}


def java_narrow(number: int, bits: int) -> int:
    """Java's narrowing primitive conversion: keep the low ``bits`` bits, signed
    (``(byte) 300 == 44``)."""
    half = 1 << (bits - 1)
    return (number + half) % (1 << bits) - half


def java_split(text: str, separator: str) -> list[str]:
    """Java's ``String.split``: trailing empty strings are dropped (``"a:b:"`` is two parts,
    ``"::"`` none), but a text without the separator is one part even when empty."""
    if separator not in text:
        return [text]
    parts = text.split(separator)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


_JAVA_BACKREF = re.compile(r"\\k<(\w+)>")
_JAVA_NAMED_GROUP = re.compile(r"\(\?<[A-Za-z]")


def java_pattern(pattern: str) -> str:
    """A Java regular expression in Python's syntax, for the constructs that differ in
    spelling only: ``\\Q...\\E`` quoting, ``(?<name>...)`` named groups and ``\\k<name>``."""
    out: list[str] = []
    i, n, in_class = 0, len(pattern), False
    while i < n:
        if pattern.startswith("\\Q", i):
            end = pattern.find("\\E", i + 2)
            end = n if end < 0 else end
            out.append(re.escape(pattern[i + 2 : end]))
            i = end + 2
            continue
        char = pattern[i]
        backref = _JAVA_BACKREF.match(pattern, i)  # at i: no copy of the rest per character
        if backref:
            out.append(f"(?P={backref.group(1)})")
            i = backref.end()
            continue
        if char == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if char == "[":
            in_class = True
        elif char == "]":
            in_class = False
        elif not in_class and _JAVA_NAMED_GROUP.match(pattern, i):
            out.append("(?P<")
            i += 3
            continue
        out.append(char)
        i += 1
    return "".join(out)


__all__ = [
    "KAFKA_PACKAGE",
    "REPLACE_NULL_WITH_DEFAULT",
    "SCHEMA_CACHE_SIZE",
    "BuiltinPredicate",
    "BuiltinTransformation",
    "KeyOrValue",
    "SchemaCache",
    "copy_schema_basics",
    "define_replace_null_with_default",
    "java_class",
    "java_class_name",
    "java_narrow",
    "java_pattern",
    "java_regex_problem",
    "java_split",
    "kafka_class",
    "non_empty_list",
    "non_empty_string",
    "require_map",
    "require_map_or_null",
    "require_schema",
    "require_sink_record",
    "require_struct",
    "require_struct_or_null",
    "schema_type_of",
    "struct_get",
]
