"""Connect data <-> JSON-able Python values, as Kafka's JsonConverter maps them.

Writers and readers are compiled once per schema into closures (no per-record type
dispatch), and the JsonConverter caches them per schema.
"""

from __future__ import annotations

import base64
import decimal
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from connect_lite.api import logical
from connect_lite.api.data import Schema, SchemaType, Struct
from connect_lite.api.errors import DataError

Fn = Callable[[Any], Any]

_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=True).encode
_INTS = (SchemaType.INT8, SchemaType.INT16, SchemaType.INT32, SchemaType.INT64)
_FLOATS = (SchemaType.FLOAT32, SchemaType.FLOAT64)


@dataclass(frozen=True)
class JsonOptions:
    """The settings of JsonConverter that change how values map to JSON."""

    decimal_numeric: bool = False
    replace_null_with_default: bool = True


def dumps(value: Any) -> str:
    """Compact JSON like Jackson's; ``decimal.Decimal`` is written as a plain JSON number."""
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, dict):
        return "{" + ",".join(_encode(k) + ":" + dumps(v) for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(dumps(v) for v in value) + "]"
    return _encode(value)


def contains_decimal(value: Any) -> bool:
    if isinstance(value, decimal.Decimal):
        return True
    if isinstance(value, dict):
        return any(contains_decimal(v) for v in value.values())
    if isinstance(value, list):
        return any(contains_decimal(v) for v in value)
    return False


def b64(data: Any) -> str:
    return base64.b64encode(data).decode("ascii")


# writing


def make_writer(schema: Schema | None, opts: JsonOptions) -> Fn:
    """A function from a Connect value of this schema to its JSON-able form."""
    if schema is None:
        return write_schemaless
    base = base_writer(schema, opts)
    if schema.default is not None and opts.replace_null_with_default:
        default = base(schema.default)
        return lambda v: default if v is None else base(v)
    if schema.optional:
        return lambda v: None if v is None else base(v)

    def required(v: Any) -> Any:
        if v is None:
            raise DataError(
                "Conversion error: null value for field that is required and has no default value"
            )
        return base(v)

    return required


def base_writer(schema: Schema, opts: JsonOptions) -> Fn:
    """The writer of a non-null value of this schema."""
    if schema.name in logical.LOGICAL_NAMES:
        return _logical_writer(schema, opts)
    t = schema.type
    if t in _INTS:
        return _checked(t, int)
    if t in _FLOATS:
        return _float_writer(t)
    if t is SchemaType.BOOLEAN:
        return _checked(t, bool)
    if t is SchemaType.STRING:
        return _checked(t, str)
    if t is SchemaType.BYTES:
        return _bytes_writer
    if t is SchemaType.ARRAY:
        return _array_writer(schema, opts)
    if t is SchemaType.MAP:
        return _map_writer(schema, opts)
    return _struct_writer(schema, opts)


def _checked(t: SchemaType, py_type: type) -> Fn:
    def write(v: Any) -> Any:
        if type(v) is py_type or (isinstance(v, py_type) and not isinstance(v, bool)):
            return v
        raise DataError(f"Invalid type for {t.name}: {type(v)}")

    return write


def _float_writer(t: SchemaType) -> Fn:
    def write(v: Any) -> Any:
        if type(v) is float:
            return v
        if isinstance(v, int | float | decimal.Decimal) and not isinstance(v, bool):
            return float(v)
        raise DataError(f"Invalid type for {t.name}: {type(v)}")

    return write


def _bytes_writer(v: Any) -> str:
    if isinstance(v, bytes | bytearray | memoryview):
        return b64(v)
    raise DataError(f"Invalid type for BYTES: {type(v)}")


def _logical_writer(schema: Schema, opts: JsonOptions) -> Fn:
    name = schema.name
    if name == logical.DECIMAL:
        if opts.decimal_numeric:
            return lambda v: logical.decimal_rescale(schema, v)
        return lambda v: b64(logical.decimal_to_bytes(schema, v))
    if name == logical.DATE:
        return logical.date_to_days
    if name == logical.TIME:
        return logical.time_to_millis
    return logical.timestamp_to_millis


def _array_writer(schema: Schema, opts: JsonOptions) -> Fn:
    item = make_writer(schema.value_schema, opts)

    def write(v: Any) -> Any:
        if not isinstance(v, list | tuple):
            raise DataError(f"Invalid type for ARRAY: {type(v)}")
        return [item(x) for x in v]

    return write


def _map_writer(schema: Schema, opts: JsonOptions) -> Fn:
    key, value = make_writer(schema.key_schema, opts), make_writer(schema.value_schema, opts)
    object_mode = schema.key_schema is not None and schema.key_schema.type is SchemaType.STRING

    def write(v: Any) -> Any:
        if not isinstance(v, Mapping):
            raise DataError(f"Invalid type for MAP: {type(v)}")
        if object_mode:
            return {key(k): value(x) for k, x in v.items()}
        return [[key(k), value(x)] for k, x in v.items()]

    return write


def _struct_writer(schema: Schema, opts: JsonOptions) -> Fn:
    fields = [(f.name, make_writer(f.schema, opts)) for f in schema.fields]

    matched = [schema]  # the last equal schema object seen: records of a chunk share theirs

    def write(v: Any) -> Any:
        if not isinstance(v, Struct):
            raise DataError(f"Invalid type for STRUCT: {type(v)}")
        if v.schema is not schema and v.schema is not matched[0]:
            if v.schema != schema:  # a deep comparison, once per schema object
                raise DataError("Mismatching schema.")
            matched[0] = v.schema
        # Struct's pickling state is (schema, values as put): unset fields are absent, as
        # Kafka's getWithoutDefault; the field writers apply defaults when configured to.
        values = v.__getstate__()[1]
        return {name: write_field(values.get(name)) for name, write_field in fields}

    return write


def write_schemaless(v: Any) -> Any:
    """A value without a schema: its JSON form follows its Python type."""
    t = type(v)
    if v is None or t is str or t is int or t is float or t is bool:
        return v
    if isinstance(v, bytes | bytearray | memoryview):
        return b64(v)
    if isinstance(v, Mapping):
        if all(isinstance(k, str) for k in v):
            return {k: write_schemaless(x) for k, x in v.items()}
        return [[write_schemaless(k), write_schemaless(x)] for k, x in v.items()]
    if isinstance(v, list | tuple):
        return [write_schemaless(x) for x in v]
    if isinstance(v, Struct):
        return make_writer(v.schema, JsonOptions())(v)
    if isinstance(v, str | int | float):
        return v
    raise DataError(f"Class {t.__name__} does not have corresponding schema type.")


# reading


def make_reader(schema: Schema | None, opts: JsonOptions) -> Fn:
    """A function from a parsed JSON value to the Connect value of this schema."""
    if schema is None:
        return lambda v: v
    base = base_reader(schema, opts)
    default = schema.default if opts.replace_null_with_default else None
    if schema.default is not None or schema.optional:
        return lambda v: default if v is None else base(v)

    def required(v: Any) -> Any:
        if v is None:
            raise DataError(f"Invalid null value for required {schema.type.name} field")
        return base(v)

    return required


def base_reader(schema: Schema, opts: JsonOptions) -> Fn:
    if schema.name in logical.LOGICAL_NAMES:
        return _logical_reader(schema)
    t = schema.type
    if t in _INTS:
        return _checked(t, int)
    if t in _FLOATS:
        return _float_writer(t)
    if t is SchemaType.BOOLEAN:
        return _checked(t, bool)
    if t is SchemaType.STRING:
        return _checked(t, str)
    if t is SchemaType.BYTES:
        return _bytes_reader
    if t is SchemaType.ARRAY:
        return _array_reader(schema, opts)
    if t is SchemaType.MAP:
        return _map_reader(schema, opts)
    return _struct_reader(schema, opts)


def _bytes_reader(v: Any) -> bytes:
    if not isinstance(v, str):
        raise DataError(f"Invalid type for BYTES: {type(v)}")
    try:
        return base64.b64decode(v, validate=True)
    except ValueError as exc:
        raise DataError(f"Invalid bytes field: {exc}") from exc


def _logical_reader(schema: Schema) -> Fn:
    name = schema.name
    if name == logical.DECIMAL:

        def read_decimal(v: Any) -> decimal.Decimal:
            if isinstance(v, str):
                return logical.decimal_from_bytes(schema, _bytes_reader(v))
            return logical.decimal_rescale(schema, v)

        return read_decimal
    as_int = _checked(schema.type, int)
    if name == logical.DATE:
        return lambda v: logical.days_to_date(as_int(v))
    if name == logical.TIME:
        return lambda v: logical.millis_to_time(as_int(v))
    return lambda v: logical.millis_to_timestamp(as_int(v))


def _array_reader(schema: Schema, opts: JsonOptions) -> Fn:
    item = make_reader(schema.value_schema, opts)

    def read(v: Any) -> Any:
        if not isinstance(v, list):
            raise DataError("Array value is not a JSON array")
        return [item(x) for x in v]

    return read


def _map_reader(schema: Schema, opts: JsonOptions) -> Fn:
    key, value = make_reader(schema.key_schema, opts), make_reader(schema.value_schema, opts)
    object_mode = schema.key_schema is not None and schema.key_schema.type is SchemaType.STRING

    def read(v: Any) -> Any:
        if object_mode and isinstance(v, dict):
            return {key(k): value(x) for k, x in v.items()}
        if not object_mode and isinstance(v, list):
            if not all(isinstance(p, list) and len(p) == 2 for p in v):
                raise DataError("Found invalid map entry instead of array tuple")
            return {key(p[0]): value(p[1]) for p in v}
        raise DataError("Map value has the wrong JSON shape for its key schema")

    return read


def _struct_reader(schema: Schema, opts: JsonOptions) -> Fn:
    fields = [(f.name, make_reader(f.schema, opts)) for f in schema.fields]

    def read(v: Any) -> Struct:
        if not isinstance(v, dict):
            raise DataError("Structs should be encoded as JSON objects")
        struct = Struct.__new__(Struct)  # skip per-field validation: fields come from the schema
        struct.__setstate__((schema, {name: rd(v.get(name)) for name, rd in fields}))
        return struct

    return read


__all__ = [
    "JsonOptions",
    "base_writer",
    "contains_decimal",
    "dumps",
    "make_reader",
    "make_writer",
    "write_schemaless",
]
