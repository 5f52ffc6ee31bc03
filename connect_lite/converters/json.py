"""JsonConverter: Kafka's JSON converter, with or without the schema envelope.

Writes byte-for-byte what Kafka's JsonConverter writes for the same data, except that floats
outside [1e-3, 1e7) use Python's shortest form (``1e+20``) where Java writes ``1.0E20``; both
parse to the same double. Payloads whose schema has a Decimal are parsed with exact numbers.
"""

from __future__ import annotations

import decimal
import json
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import connect_lite
from connect_lite.api import logical
from connect_lite.api.config import ConfigDef, Importance, Range, Type, ValidString
from connect_lite.api.data import Schema, SchemaAndValue
from connect_lite.api.errors import DataError
from connect_lite.converters.config import CONVERTER_TYPE, converter_config_def
from connect_lite.converters.forwarding import ForwardingHeaderConverter
from connect_lite.converters.json_data import (
    JsonOptions,
    dumps,
    make_reader,
    make_writer,
)
from connect_lite.converters.json_schema import schema_from_json, schema_to_json

SCHEMAS_ENABLE = "schemas.enable"
SCHEMAS_CACHE_SIZE = "schemas.cache.size"
DECIMAL_FORMAT = "decimal.format"
REPLACE_NULL_WITH_DEFAULT = "replace.null.with.default"

CONFIG_DEF = (
    converter_config_def()
    .define(
        SCHEMAS_ENABLE,
        Type.BOOLEAN,
        True,
        None,
        Importance.HIGH,
        "Include schemas within each of the serialized values and keys.",
        group="Schemas",
    )
    .define(
        SCHEMAS_CACHE_SIZE,
        Type.INT,
        1000,
        Range.at_least(0),
        Importance.HIGH,
        "The maximum number of schemas that can be cached in this converter instance.",
        group="Schemas",
    )
    .define(
        DECIMAL_FORMAT,
        Type.STRING,
        "BASE64",
        ValidString.in_ignore_case("BASE64", "NUMERIC"),
        Importance.LOW,
        "How to serialize decimals: BASE64 (binary) or NUMERIC (a JSON number).",
        group="Serialization",
    )
    .define(
        REPLACE_NULL_WITH_DEFAULT,
        Type.BOOLEAN,
        True,
        None,
        Importance.LOW,
        "Whether null fields with a default value are written and read as that default.",
        group="Serialization",
    )
)

_ENVELOPE_ERROR = (
    'JsonConverter with schemas.enable requires "schema" and "payload" fields and may not '
    "contain additional fields. If you are trying to deserialize plain JSON data, set "
    "schemas.enable=false in your converter configuration."
)
_NULL_PREFIX = b'{"schema":null,"payload":'


class _Compiled:
    """Everything the converter needs for one schema, computed once."""

    __slots__ = ("has_decimal", "prefix", "reader", "schema", "slow", "writer")

    def __init__(self, schema: Schema | None, opts: JsonOptions, envelope: bool) -> None:
        self.schema = schema
        self.writer = make_writer(schema, opts)
        self.reader = make_reader(schema, opts)
        # Payloads with decimals are parsed with exact JSON numbers; a NUMERIC decimal
        # payload holds decimal.Decimal, which only dumps() can write.
        self.has_decimal = contains_decimal_schema(schema)
        self.slow = opts.decimal_numeric and self.has_decimal
        if schema is None:
            self.prefix = _NULL_PREFIX
        else:
            node = schema_to_json(schema, opts)
            self.prefix = ('{"schema":' + dumps(node) + ',"payload":').encode()
        if not envelope:
            self.prefix = b""


def contains_decimal_schema(schema: Schema | None) -> bool:
    """Whether a schema has a Decimal anywhere in it."""
    if schema is None:
        return False
    if schema.name == logical.DECIMAL:
        return True
    children = [f.schema for f in schema.fields] + [schema.key_schema, schema.value_schema]
    return any(contains_decimal_schema(c) for c in children)


class JsonConverter(ForwardingHeaderConverter):
    """Kafka's org.apache.kafka.connect.json.JsonConverter (also a header converter)."""

    __connect_class_name__ = "org.apache.kafka.connect.json.JsonConverter"

    def __init__(self) -> None:
        self.configure({})

    def version(self) -> str:
        return connect_lite.__version__

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def configure(self, config: dict[str, str], is_key: bool = False) -> None:
        settings = {CONVERTER_TYPE: "key" if is_key else "value", **config}
        parsed = CONFIG_DEF.parse(settings)
        self.schemas_enabled: bool = parsed[SCHEMAS_ENABLE]
        self.cache_size: int = parsed[SCHEMAS_CACHE_SIZE]
        self.options = JsonOptions(
            decimal_numeric=parsed[DECIMAL_FORMAT].upper() == "NUMERIC",
            replace_null_with_default=parsed[REPLACE_NULL_WITH_DEFAULT],
        )
        self._by_id: OrderedDict[int, tuple[Schema, _Compiled]] = OrderedDict()
        """Entries by the id of a schema object seen, with that object (held, so that its
        id is not reused): an equal schema's entry serves it without comparing again."""
        self._by_json: OrderedDict[str, _Compiled] = OrderedDict()
        self._by_schema: OrderedDict[Schema, _Compiled] = OrderedDict()
        self._schemaless = _Compiled(None, self.options, self.schemas_enabled)
        self._last = self._schemaless
        self._last_written: Schema | None = None

    def _compiled(self, schema: Schema | None) -> _Compiled:
        if schema is None:
            return self._schemaless
        last = self._last
        if last.schema is schema or self._last_written is schema:
            return last  # (_last_written: the schema object _last was last found for)
        held = self._by_id.get(id(schema))
        if held is not None and held[0] is schema:
            entry = held[1]
        else:
            entry = self._by_equal_schema(schema)
            self._by_id[id(schema)] = (schema, entry)
            while len(self._by_id) > max(self.cache_size, 1):
                self._by_id.popitem(last=False)
        self._last, self._last_written = entry, schema
        return entry

    def _by_equal_schema(self, schema: Schema) -> _Compiled:
        """The entry of an equal schema seen before (records that rebuild their schema)."""
        try:
            entry = self._by_schema.get(schema)
        except TypeError:  # an unhashable default value
            return _Compiled(schema, self.options, self.schemas_enabled)
        if entry is None:
            entry = _Compiled(schema, self.options, self.schemas_enabled)
            self._remember(self._by_schema, schema, entry)
        return entry

    def _remember(self, cache: OrderedDict[Any, _Compiled], key: Any, entry: _Compiled) -> None:
        cache[key] = entry
        while len(cache) > max(self.cache_size, 1):
            cache.popitem(last=False)

    # Converter

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        if schema is None and value is None:
            return None
        entry = self._compiled(schema)
        try:
            payload = entry.writer(value)
        except (TypeError, ValueError) as exc:
            raise DataError(f"Converting Kafka Connect data to byte[] failed: {exc}") from exc
        text = dumps(payload) if entry.slow else _fast_dumps(payload)
        if not self.schemas_enabled:
            return text.encode()
        return entry.prefix + text.encode() + b"}"

    def to_connect_data(self, topic: str, value: bytes | None) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue(None, None)
        if self.schemas_enabled:
            fast = self._read_cached_envelope(value)
            if fast is not None:
                return fast
        node = _parse(value)
        if not self.schemas_enabled:
            return SchemaAndValue(None, node)
        if not isinstance(node, dict) or node.keys() != {"schema", "payload"}:
            raise DataError(_ENVELOPE_ERROR)
        entry = self._entry_for_json(node["schema"])
        if entry.has_decimal:
            node = json.loads(value, parse_float=decimal.Decimal)
        return SchemaAndValue(entry.schema, entry.reader(node["payload"]))

    def _read_cached_envelope(self, value: bytes) -> SchemaAndValue | None:
        """Fast path: bytes that start with the envelope prefix of the last schema seen."""
        entry = self._last
        prefix = entry.prefix
        if not (value.startswith(prefix) and value.endswith(b"}")):
            return None
        decoder = _EXACT_DECODER if entry.has_decimal else _DECODER
        try:
            text = value[len(prefix) : -1].decode("utf-8")
            payload, end = decoder.raw_decode(text)
        except ValueError:
            return None  # not exactly {"schema": <same>, "payload": X}: take the slow path
        if end != len(text):
            return None
        return SchemaAndValue(entry.schema, entry.reader(payload))

    def _entry_for_json(self, schema_node: Any) -> _Compiled:
        if schema_node is None:
            return self._schemaless
        key = json.dumps(schema_node, sort_keys=True)
        entry = self._by_json.get(key)
        if entry is None:
            schema = schema_from_json(schema_node, self.options)
            entry = _Compiled(schema, self.options, self.schemas_enabled)
            self._remember(self._by_json, key, entry)
        self._last, self._last_written = entry, None
        return entry


_DECODER = json.JSONDecoder()
_EXACT_DECODER = json.JSONDecoder(parse_float=decimal.Decimal)
_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_fast_dumps: Callable[[Any], str] = _encoder.encode


def _parse(value: bytes) -> Any:
    try:
        return json.loads(value)
    except ValueError as exc:
        raise DataError(
            f"Converting byte[] to Kafka Connect data failed due to serialization error: {exc}"
        ) from exc


__all__ = ["CONFIG_DEF", "JsonConverter"]
