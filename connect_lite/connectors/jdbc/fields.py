"""Which columns a record becomes, by ``pk.mode``, ``pk.fields`` and ``fields.whitelist``:
Confluent's FieldsMetadata, over the schema forms of the frame's key and value columns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from connect_lite.api import ConnectError

from .config import PkMode
from .dialects import Column

KAFKA_PK_NAMES = ("__connect_topic", "__connect_partition", "__connect_offset")
_KAFKA_FORMS = (
    {"type": "string", "optional": False},
    {"type": "int32", "optional": False},
    {"type": "int64", "optional": False},
)
_STRING_VALUE = {"type": "string", "optional": True}


@dataclass(frozen=True)
class Layout:
    """A run's columns: the keys (in order) and the others, and where each value comes from:
    ``("kafka", i)`` (topic, partition, offset), ``("key", None)`` (a primitive key),
    ``("key", name)``, ``("value", name)``, ``("value", None)`` (a STRING value)."""

    keys: tuple[Column, ...]
    others: tuple[Column, ...]
    sources: tuple[tuple[str, Any], ...]
    """One per column of ``keys + others``: the order of the statements' placeholders."""
    value_order: tuple[str, ...] = ()
    """The value schema's field names, in its order (for CREATE TABLE's column order)."""

    @property
    def columns(self) -> tuple[Column, ...]:
        return self.keys + self.others

    def create_order(self) -> tuple[Column, ...]:
        """CREATE TABLE's order, as Confluent's: the default Kafka key columns that are
        present, then the value's fields in its order, then the rest alphabetically."""
        by_name = {c.name: c for c in self.columns}
        first = [by_name[n] for n in KAFKA_PK_NAMES if n in by_name]
        first += [by_name[n] for n in self.value_order if n in by_name and n not in KAFKA_PK_NAMES]
        placed = {c.name for c in first}
        return tuple(first) + tuple(sorted((c for c in self.columns if c.name not in placed),
                                           key=lambda c: c.name))  # fmt: skip


def _java_list(items: Sequence[str]) -> str:
    return "[" + ", ".join(items) + "]"


def layout(
    pk_mode: PkMode,
    pk_fields: Sequence[str],
    whitelist: Sequence[str],
    key_form: dict[str, Any] | None,
    value_form: dict[str, Any] | None,
    table: str,
    string_column: str = "record_value",
) -> Layout:
    """The columns of records with these key and value schemas (``value_form`` None: only
    deletes, whose rows hold keys); ConnectError with Confluent's messages."""
    string_value = value_form is not None and value_form.get("type") == "string"
    value_fields = {} if string_value else _struct_fields(value_form)
    pairs: list[tuple[Column, tuple[str, Any]]] = []
    if pk_mode is PkMode.KAFKA:
        pairs = _kafka_keys(pk_fields, table)
    elif pk_mode is PkMode.RECORD_KEY:
        pairs = _record_keys(pk_fields, key_form, table)
    elif pk_mode is PkMode.RECORD_VALUE:
        if value_form is None:
            raise ConnectError(
                f"PK mode for table '{table}' is RECORD_VALUE, but record value schema is missing"
            )
        if string_value:
            raise ConnectError("pk.mode record_value is not supported with String value schemas")
        pairs = _named_keys("RECORD_VALUE", "value", pk_fields, value_fields, table)
    key_names = {c.name for c, _ in pairs}
    if string_value:
        if string_column in key_names:
            raise ConnectError(
                f"Configured string.output.value.column.name '{string_column}' conflicts with a "
                f"primary key column for table '{table}'"
            )
        pairs.append((Column(string_column, dict(_STRING_VALUE)), ("value", None)))
    for name, form in value_fields.items():
        if name not in key_names and (not whitelist or name in whitelist):
            pairs.append((Column(name, form), ("value", name)))
    if not pairs:
        raise ConnectError(f"No fields found using key and value schemas for table: {table}")
    keys = tuple(c for c, _ in pairs if c.primary)
    others = tuple(c for c, _ in pairs if not c.primary)
    order = (string_column,) if string_value else tuple(value_fields)
    return Layout(keys, others, tuple(source for _, source in pairs), order)


def _kafka_keys(pk_fields: Sequence[str], table: str) -> list[tuple[Column, tuple[str, Any]]]:
    names = list(pk_fields) or list(KAFKA_PK_NAMES)
    if len(names) != 3:
        raise ConnectError(
            f"PK mode for table '{table}' is KAFKA so there should either be no field names "
            f"defined for defaults {_java_list(KAFKA_PK_NAMES)} to be applicable, or "
            f"exactly 3, defined fields are: {_java_list(pk_fields)}"
        )
    return [
        (Column(name, dict(form), primary=True), ("kafka", i))
        for i, (name, form) in enumerate(zip(names, _KAFKA_FORMS, strict=True))
    ]


def _record_keys(
    pk_fields: Sequence[str], key_form: dict[str, Any] | None, table: str
) -> list[tuple[Column, tuple[str, Any]]]:
    if key_form is None:
        raise ConnectError(
            f"PK mode for table '{table}' is RECORD_KEY, but record key schema is missing"
        )
    kind = key_form.get("type")
    if kind == "struct":
        return _named_keys("RECORD_KEY", "key", pk_fields, _struct_fields(key_form), table)
    if kind in ("map", "array"):
        raise ConnectError(
            f"Key schema must be primitive type or Struct, but is of type: {str(kind).upper()}"
        )
    if len(pk_fields) != 1:
        raise ConnectError(
            "Need exactly one PK column defined since the key schema for records is a "
            f"primitive type, defined columns are: {_java_list(pk_fields)}"
        )
    return [(Column(pk_fields[0], key_form, primary=True), ("key", None))]


def _named_keys(
    mode: str,
    side: str,
    pk_fields: Sequence[str],
    fields: dict[str, dict[str, Any]],
    table: str,
) -> list[tuple[Column, tuple[str, Any]]]:
    """The key columns named by ``pk.fields`` (all the fields when it is empty)."""
    pairs = []
    for name in list(pk_fields) or list(fields):
        if name not in fields:
            raise ConnectError(
                f"PK mode for table '{table}' is {mode} with configured PK fields "
                f"{_java_list(pk_fields)}, but record {side} schema does not contain field: "
                f"{name}"
            )
        pairs.append((Column(name, fields[name], primary=True), (side, name)))
    return pairs


def _struct_fields(form: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    if form is None:
        return {}
    return {f["field"]: f for f in form.get("fields") or []}
