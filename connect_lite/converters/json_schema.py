"""Connect schemas <-> the JSON schema form of Kafka's JsonConverter envelope."""

from __future__ import annotations

from typing import Any

from connect_lite.api.data import Schema, SchemaBuilder, SchemaType, schema_json_form
from connect_lite.api.errors import DataError
from connect_lite.converters.json_data import JsonOptions, base_writer, make_reader

_WIRE_NAMES = {SchemaType.FLOAT32.value: "float", SchemaType.FLOAT64.value: "double"}
"""Kafka's JsonSchema names FLOAT32 and FLOAT64 ``float`` and ``double``."""
_TYPES = {t.value: t for t in SchemaType} | {
    "float": SchemaType.FLOAT32,
    "double": SchemaType.FLOAT64,
}
"""What a schema's ``type`` may say: Kafka's names, and (leniently) connect-lite's own."""


def schema_to_json(schema: Schema, opts: JsonOptions) -> dict[str, Any]:
    """The schema as JsonConverter writes it, with Kafka's key order and type names."""
    return _kafka_names(schema_json_form(schema, lambda s: base_writer(s, opts)(s.default)))


def _kafka_names(node: dict[str, Any]) -> dict[str, Any]:
    node["type"] = _WIRE_NAMES.get(node["type"], node["type"])
    for child in (
        *node.get("fields", ()),
        *(node[k] for k in ("items", "keys", "values") if k in node),
    ):
        _kafka_names(child)
    return node


def schema_from_json(node: Any, opts: JsonOptions) -> Schema | None:
    """The Connect schema of an envelope's ``schema`` field (None for JSON null)."""
    if node is None:
        return None
    if not isinstance(node, dict):
        raise DataError("Schema must be a JSON object")
    builder = _typed_builder(node, opts)
    if node.get("optional") is True:
        builder.optional()
    _apply_metadata(builder, node)
    if node.get("default") is not None:
        bare = builder.build()
        builder.default_value(make_reader(bare, opts)(node["default"]))
    return builder.build()


def _typed_builder(node: dict[str, Any], opts: JsonOptions) -> SchemaBuilder:
    type_name = node.get("type")
    if not isinstance(type_name, str):
        raise DataError("Schema must contain 'type' field")
    schema_type = _TYPES.get(type_name)
    if schema_type is None:
        raise DataError("Unknown schema type: " + type_name)
    if schema_type is SchemaType.STRUCT:
        return _struct_builder(node.get("fields"), opts)
    if schema_type is SchemaType.ARRAY:
        return SchemaBuilder.array(_required_child(node, "items", "Array", opts))
    if schema_type is SchemaType.MAP:
        keys = _required_child(node, "keys", "Map", opts)
        return SchemaBuilder.map(keys, _required_child(node, "values", "Map", opts))
    return SchemaBuilder.of(schema_type)


def _struct_builder(fields: Any, opts: JsonOptions) -> SchemaBuilder:
    if not isinstance(fields, list):
        raise DataError('Struct schema\'s "fields" argument is not an array.')
    builder = SchemaBuilder.struct()
    for field in fields:
        name = field.get("field") if isinstance(field, dict) else None
        if not isinstance(name, str):
            raise DataError("Struct schema's field name not specified properly")
        child = schema_from_json(field, opts)
        assert child is not None  # a field is a JSON object, never null
        builder.field(name, child)
    return builder


def _required_child(node: dict[str, Any], key: str, what: str, opts: JsonOptions) -> Schema:
    child = schema_from_json(node.get(key), opts)
    if child is None:
        raise DataError(f'{what} schema did not specify the "{key}" type')
    return child


def _apply_metadata(builder: SchemaBuilder, node: dict[str, Any]) -> None:
    if isinstance(node.get("name"), str):
        builder.name(node["name"])
    version = node.get("version")
    if version is not None:
        if not isinstance(version, int) or isinstance(version, bool):
            raise DataError("Schema version must be an integer")
        builder.version(version)
    if isinstance(node.get("doc"), str):
        builder.doc(node["doc"])
    params = node.get("parameters")
    if params is not None:
        if not isinstance(params, dict):
            raise DataError("Schema parameters must be a JSON object")
        builder.parameters({k: str(v) for k, v in params.items()})


__all__ = ["schema_from_json", "schema_to_json"]
