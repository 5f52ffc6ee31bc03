"""Connect data as Arrow columns and back, for the Spark expression form of transforms.

A Connect schema maps onto an Arrow (and so a Spark) type by its physical type: INT8 to
int8, ..., STRUCT to a struct of its fields, MAP to a map, ARRAY to a list. The logical
types Date, Time and Timestamp travel as their encoded integers (days, milliseconds since
midnight, milliseconds since the epoch); Decimal has no column form, so a batch whose
schema holds one is not compiled.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pyarrow as pa

from connect_lite.api import logical
from connect_lite.api.data import Schema, SchemaType, Struct

_PRIMITIVES: dict[SchemaType, pa.DataType] = {
    SchemaType.INT8: pa.int8(),
    SchemaType.INT16: pa.int16(),
    SchemaType.INT32: pa.int32(),
    SchemaType.INT64: pa.int64(),
    SchemaType.FLOAT32: pa.float64(),  # a Python float is a double: float32 would round it
    SchemaType.FLOAT64: pa.float64(),
    SchemaType.BOOLEAN: pa.bool_(),
    SchemaType.STRING: pa.string(),
    SchemaType.BYTES: pa.binary(),
}


def arrow_type(schema: Schema) -> pa.DataType | None:
    """The Arrow type that holds values of ``schema``, or None when it has no column form."""
    if schema.name == logical.DECIMAL:
        return None
    if schema.type in _PRIMITIVES:
        return _PRIMITIVES[schema.type]
    if schema.type is SchemaType.ARRAY and schema.value_schema is not None:
        item = arrow_type(schema.value_schema)
        return None if item is None else pa.list_(item)
    if schema.type is SchemaType.MAP and schema.key_schema and schema.value_schema:
        key, value = arrow_type(schema.key_schema), arrow_type(schema.value_schema)
        if key is None or value is None or schema.key_schema.type is SchemaType.STRUCT:
            return None
        return pa.map_(key, value)
    if schema.type is SchemaType.STRUCT and schema.fields:
        fields = [(f.name, arrow_type(f.schema)) for f in schema.fields]
        if any(t is None for _, t in fields):
            return None
        return pa.struct([pa.field(name, t) for name, t in fields])
    return None


def to_plain(value: Any, schema: Schema) -> Any:
    """A Connect value as the plain Python value Arrow takes for ``arrow_type(schema)``."""
    if value is None:
        return None
    if schema.name in _ENCODE:
        return _ENCODE[schema.name](value)
    kind = schema.type
    if kind is SchemaType.STRUCT:
        struct = value if isinstance(value, Struct) else None
        get = struct.get if struct is not None else value.get
        return {f.name: to_plain(get(f.name), f.schema) for f in schema.fields}
    if kind is SchemaType.ARRAY:
        item = schema.value_schema
        assert item is not None
        return [to_plain(v, item) for v in value]
    if kind is SchemaType.MAP:
        ks, vs = schema.key_schema, schema.value_schema
        assert ks is not None and vs is not None
        return [(to_plain(k, ks), to_plain(v, vs)) for k, v in dict(value).items()]
    return value


def decoder(schema: Schema) -> Callable[[Any], Any]:
    """A function from plain values (as Arrow gives them) to Connect values of ``schema``,
    built once per schema: a batch decodes every row with the same one."""
    try:
        found = _DECODERS.get(schema)
    except TypeError:  # a default value that cannot be hashed: no caching
        return _build_decoder(schema)
    if found is None:
        if len(_DECODERS) >= 256:
            _DECODERS.clear()
        found = _DECODERS[schema] = _build_decoder(schema)
    return found


_DECODERS: dict[Schema, Callable[[Any], Any]] = {}


def _build_decoder(schema: Schema) -> Callable[[Any], Any]:
    kind = schema.type
    if schema.name in _DECODE:
        logical_decode = _DECODE[schema.name]
        return lambda v: None if v is None else logical_decode(v)
    if kind is SchemaType.STRUCT:
        fields = [(f.name, decoder(f.schema)) for f in schema.fields]
        new = Struct.__new__

        def struct(v: Any) -> Any:
            if v is None:
                return None
            built = new(Struct)  # the values come from a typed column: no per-field checks
            built.__setstate__((schema, {name: decode(v[name]) for name, decode in fields}))
            return built

        return struct
    if kind is SchemaType.ARRAY:
        assert schema.value_schema is not None
        item = decoder(schema.value_schema)
        return lambda v: None if v is None else [item(x) for x in v]
    if kind is SchemaType.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        dk, dv = decoder(schema.key_schema), decoder(schema.value_schema)

        def mapping(v: Any) -> Any:
            if v is None:
                return None
            pairs = v.items() if isinstance(v, Mapping) else v
            return {dk(k): dv(x) for k, x in pairs}

        return mapping
    if kind in (SchemaType.FLOAT32, SchemaType.FLOAT64):
        return lambda v: float(v) if isinstance(v, int) else v
    return _identity


def _identity(value: Any) -> Any:
    return value


_ENCODE = {
    logical.TIMESTAMP: logical.timestamp_to_millis,
    logical.DATE: logical.date_to_days,
    logical.TIME: logical.time_to_millis,
}
_DECODE = {
    logical.TIMESTAMP: logical.millis_to_timestamp,
    logical.DATE: logical.days_to_date,
    logical.TIME: logical.millis_to_time,
}

__all__ = ["arrow_type", "decoder", "to_plain"]
