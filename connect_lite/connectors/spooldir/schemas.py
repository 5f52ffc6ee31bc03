"""``key.schema`` and ``value.schema``: connect-utils' schema JSON (jcustenborder's format),
checked, and turned into what a frame needs: Spark types and JsonConverter-form declarations.

The format: ``{"name": ..., "type": "STRUCT", "isOptional": false, "fieldSchemas": {...}}``
with ``type`` one of Connect's types in capitals, ``fieldSchemas`` an ordered object of the
struct's fields, ``keySchema``/``valueSchema`` for maps and arrays, and the logical types by
their Kafka names (``org.apache.kafka.connect.data.Timestamp`` on INT64 ...). Unknown
properties are refused, as connect-utils' Jackson mapper refuses them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"
DATE = "org.apache.kafka.connect.data.Date"
TIME = "org.apache.kafka.connect.data.Time"
DECIMAL = "org.apache.kafka.connect.data.Decimal"

PRIMITIVES = {
    "INT8": "tinyint",
    "INT16": "smallint",
    "INT32": "int",
    "INT64": "bigint",
    "FLOAT32": "float",
    "FLOAT64": "double",
    "BOOLEAN": "boolean",
    "STRING": "string",
    "BYTES": "binary",
}
TYPES = frozenset((*PRIMITIVES, "ARRAY", "MAP", "STRUCT"))
PROPERTIES = frozenset(
    (
        "name",
        "doc",
        "type",
        "isOptional",
        "defaultValue",
        "version",
        "parameters",
        "fieldSchemas",
        "keySchema",
        "valueSchema",
    )
)


class SchemaError(ValueError):
    """A schema setting that cannot be read or used; the message names the key."""


@dataclass(frozen=True)
class FieldSpec:
    """A top-level field of a struct schema: its name, its kind (a primitive type name,
    ``TIMESTAMP`` or ``DATE``, or ``NESTED`` for a struct, array or map), whether it is
    optional, and its schema node."""

    name: str
    kind: str
    optional: bool
    node: dict[str, Any]


def parse(text: str | None, key: str) -> dict[str, Any] | None:
    """The schema node of a setting (None when blank), checked throughout."""
    if text is None or not text.strip():
        return None
    try:
        node = json.loads(text)
    except ValueError as error:
        raise SchemaError(f"Could not read schema from '{key}': {error}") from None
    _check(node, key, key)
    return node


def _check(node: Any, key: str, where: str) -> None:
    if not isinstance(node, dict):
        raise SchemaError(f"Could not read schema from '{key}': {where} is not a JSON object")
    unknown = sorted(set(node) - PROPERTIES)
    if unknown:
        raise SchemaError(
            f"Could not read schema from '{key}': {where} has the unknown propert"
            f"{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)}"
        )
    kind = node.get("type")
    if kind not in TYPES:
        raise SchemaError(
            f"Could not read schema from '{key}': {where} has type {kind!r}, not one of "
            f"{', '.join(sorted(TYPES))}"
        )
    if "defaultValue" in node:
        raise SchemaError(f"'{key}': {where} has a defaultValue, which this connector ignores")
    name = node.get("name")
    if name == DECIMAL:
        raise SchemaError(
            f"'{key}': {where} is a Decimal, which connect-lite's SpoolDir source does not "
            "support yet"
        )
    if name == TIME:
        raise SchemaError(
            f"'{key}': {where} is a Time, which connect-lite's SpoolDir source does not support"
        )
    logical = {TIMESTAMP: "INT64", DATE: "INT32"}
    if name in logical and kind != logical[name]:
        raise SchemaError(f"'{key}': {where} is a {name} but has type {kind}")
    if kind == "STRUCT":
        fields = node.get("fieldSchemas") or {}
        if not isinstance(fields, dict):
            raise SchemaError(f"'{key}': {where}.fieldSchemas is not a JSON object")
        for field, child in fields.items():
            _check(child, key, f"{where}.{field}")
    elif kind in ("ARRAY", "MAP"):
        if kind == "MAP":
            _check(node.get("keySchema"), key, f"{where} keys")
        _check(node.get("valueSchema"), key, f"{where} values")


def fields(node: dict[str, Any]) -> list[FieldSpec]:
    """The top-level fields of a STRUCT schema, in their declared order."""
    out = []
    for name, child in (node.get("fieldSchemas") or {}).items():
        kind = child["type"]
        if child.get("name") == TIMESTAMP:
            kind = "TIMESTAMP"
        elif child.get("name") == DATE:
            kind = "DATE"
        elif kind in ("STRUCT", "ARRAY", "MAP"):
            kind = "NESTED"
        out.append(FieldSpec(name, kind, bool(child.get("isOptional", False)), child))
    return out


def spark_type(node: dict[str, Any]) -> str:
    """The Spark SQL type of a schema node (DDL text)."""
    kind, name = node["type"], node.get("name")
    if name == TIMESTAMP:
        return "timestamp"
    if name == DATE:
        return "date"
    if kind in PRIMITIVES:
        return PRIMITIVES[kind]
    if kind == "ARRAY":
        return f"array<{spark_type(node['valueSchema'])}>"
    if kind == "MAP":
        return f"map<{spark_type(node['keySchema'])},{spark_type(node['valueSchema'])}>"
    parts = [f"{quote(n)}:{spark_type(c)}" for n, c in (node.get("fieldSchemas") or {}).items()]
    return f"struct<{','.join(parts)}>"


def declaration(node: dict[str, Any]) -> dict[str, Any]:
    """The node in JsonConverter's schema form: a frame column's ``connect.schema``."""
    out: dict[str, Any] = {
        "type": node["type"].lower(),
        "optional": bool(node.get("isOptional", False)),
    }
    for prop in ("name", "version", "doc", "parameters"):
        if node.get(prop) is not None:
            out[prop] = node[prop]
    if node["type"] == "STRUCT":
        out["fields"] = [
            {**declaration(child), "field": name}
            for name, child in (node.get("fieldSchemas") or {}).items()
        ]
    elif node["type"] == "ARRAY":
        out["items"] = declaration(node["valueSchema"])
    elif node["type"] == "MAP":
        out["keys"] = declaration(node["keySchema"])
        out["values"] = declaration(node["valueSchema"])
    return out


def generated(
    key_name: str, value_name: str, columns: list[str], key_fields: list[str]
) -> tuple[str, str]:
    """Schema generation's key and value schemas (JSON text): the value a struct of every
    column as an optional STRING, the key a struct of the key fields found among them."""
    value = {
        "name": value_name,
        "type": "STRUCT",
        "isOptional": False,
        "fieldSchemas": {c: {"type": "STRING", "isOptional": True} for c in columns},
    }
    return json.dumps(
        {
            "name": key_name,
            "type": "STRUCT",
            "isOptional": False,
            "fieldSchemas": {
                c: {"type": "STRING", "isOptional": True} for c in key_fields if c in columns
            },
        }
    ), json.dumps(value)


def quote(name: str) -> str:
    """A Spark SQL identifier in backquotes."""
    return "`" + name.replace("`", "``") + "`"


def literal(text: str) -> str:
    """A Spark SQL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
