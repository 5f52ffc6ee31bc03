"""Spark SQL expressions for one batch: the value to write, each record's time and its
directory (the partitioner). Built from the batch's schema as JSON, so this is pure Python.

Types are Spark's ``DataType.jsonValue()`` form: a string for an atomic type (``"long"``),
a dict for a struct, array or map.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from connect_lite.api import DataError

from .config import Extractor, Format, LakeConfig, Partitioner

FILE_COLUMN = "__connect_lite_file"
"""The column naming the file a row goes to when files are written (Spark's partitionBy)."""

NULL_DIRECTORY_VALUE = "__HIVE_DEFAULT_PARTITION__"
"""A null field value in a FieldPartitioner directory, as Hive, Spark and pyarrow read it."""

_UTC_ZONES = {"UTC", "Etc/UTC", "GMT", "Etc/GMT", "Z", "+00:00", "Zulu", "UCT", "Universal"}
_INTEGRAL = {"byte", "short", "integer", "long"}
_NESTED_KINDS = {"struct", "array", "map"}


@dataclass(frozen=True)
class BatchPlan:
    """How one batch is buffered: SQL over the batch's columns."""

    value_sql: str
    """The value written to files: its fields are the columns if it is a struct."""
    value_is_struct: bool
    type_key: str
    """The value type, without nullability: a different key is a schema change."""
    time_sql: str
    """The record's time by ``timestamp.extractor``, as epoch milliseconds (may be null)."""
    dir_sql: str
    """The record's directory under ``<topics.dir>/<topic>/``."""


def ident(name: str) -> str:
    """A column or field name quoted for Spark SQL."""
    return "`" + name.replace("`", "``") + "`"


def sql_string(text: str) -> str:
    """A Spark SQL string literal (backslash escapes, Spark's default)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def canonical_type(kind: Any) -> Any:
    """A type without nullability and metadata: two batches whose values differ only in
    those have the same schema for the files."""
    if isinstance(kind, dict):
        drop = {"nullable", "containsNull", "valueContainsNull", "metadata"}
        return {k: canonical_type(v) for k, v in kind.items() if k not in drop}
    if isinstance(kind, list):
        return [canonical_type(v) for v in kind]
    return kind


def is_struct(kind: Any) -> bool:
    return isinstance(kind, dict) and kind.get("type") == "struct"


def _is_nested(kind: Any) -> bool:
    return isinstance(kind, dict) and kind.get("type") in _NESTED_KINDS


def _field(kind: Any, name: str) -> Any:
    for field in kind.get("fields", []) if is_struct(kind) else []:
        if field["name"] == name:
            return field["type"]
    return None


def plan_batch(
    config: LakeConfig, schema: dict[str, Any], now_ms: int, session_tz: str
) -> BatchPlan:
    """The plan for a batch with this schema (``df.schema.jsonValue()``).

    Schemaless batches carry ``value_struct`` (the type inferred from the values) when one
    could be inferred; it is written instead of the JSON text. Raises DataError when the
    values cannot be partitioned or written as configured."""
    columns = {f["name"]: f["type"] for f in schema.get("fields", [])}
    column = "value_struct" if "value_struct" in columns else "value"
    kind = columns.get(column)
    if kind is None:
        raise DataError("The batch has no value column")
    struct = is_struct(kind)
    if struct and _field(kind, FILE_COLUMN) is not None:
        raise DataError(f"A value field may not be named {FILE_COLUMN}")
    if config.format is Format.CSV:
        _check_csv(kind)
    value_sql = ident(column)
    time_sql = _time_sql(config, value_sql, kind, now_ms)
    return BatchPlan(
        value_sql=value_sql,
        value_is_struct=struct,
        type_key=json.dumps(canonical_type(kind), sort_keys=True),
        time_sql=f"unix_millis({time_sql})",
        dir_sql=_dir_sql(config, value_sql, kind, time_sql, session_tz),
    )


def _check_csv(kind: Any) -> None:
    columns = [f["type"] for f in kind["fields"]] if is_struct(kind) else [kind]
    if any(_is_nested(c) or c == "binary" for c in columns):
        raise DataError(
            "The csv format holds only flat values: a value or a value field is a struct, "
            "an array, a map or bytes"
        )


def _time_sql(config: LakeConfig, value_sql: str, kind: Any, now_ms: int) -> str:
    """A timestamp expression: the record's time by the extractor (wall clock when no
    setting uses record times, so a missing field matters only where it is used)."""
    if config.extractor is Extractor.WALLCLOCK or (
        config.time is None and config.rotate_interval_ms <= 0
    ):
        return f"timestamp_millis({int(now_ms)})"
    if config.extractor is Extractor.RECORD:
        return ident("timestamp")
    path = [p for p in config.timestamp_field.split(".") if p]
    expr, field_kind = value_sql, kind
    for name in path:
        field_kind = _field(field_kind, name)
        if field_kind is None:
            raise DataError(
                f"timestamp.field {config.timestamp_field}: the record value has no field "
                f"{name!r} (value type {_describe(kind)})"
            )
        expr = f"{expr}.{ident(name)}"
    if field_kind in _INTEGRAL or (
        isinstance(field_kind, str) and field_kind.startswith("decimal")
    ):
        return f"timestamp_millis(CAST({expr} AS BIGINT))"
    if field_kind in ("timestamp", "timestamp_ntz", "date", "string"):
        return f"CAST({expr} AS TIMESTAMP)"
    raise DataError(
        f"timestamp.field {config.timestamp_field} is of type {_describe(field_kind)}: it must "
        "hold epoch milliseconds, a timestamp, a date or an ISO-8601 string"
    )


def _dir_sql(config: LakeConfig, value_sql: str, kind: Any, time_sql: str, session_tz: str) -> str:
    if config.partitioner is Partitioner.DEFAULT:
        return "concat('partition=', `partition`)"
    if config.partitioner is Partitioner.FIELD:
        return _field_dir_sql(config.field_names, value_sql, kind)
    layout = config.time
    assert layout is not None
    local_ms = f"unix_millis(from_utc_timestamp({time_sql}, {sql_string(layout.timezone)}))"
    bucket = f"timestamp_millis({local_ms} - pmod({local_ms}, {int(layout.duration_ms)}))"
    if session_tz not in _UTC_ZONES:  # date_format renders in the session's zone
        bucket = f"to_utc_timestamp({bucket}, {sql_string(session_tz)})"
    return f"date_format({bucket}, {sql_string(layout.pattern)})"


def _field_dir_sql(names: tuple[str, ...], value_sql: str, kind: Any) -> str:
    """``<field>=<value>`` per field, nested in order. ``%``, ``/`` and ``:`` in values
    are escaped as ``%25``, ``%2F`` and ``%3A``, as Hive escapes them (so Spark reads the
    values back): a value never adds a directory level, and Hadoop paths stay valid."""
    if not is_struct(kind):
        raise DataError(
            f"FieldPartitioner needs struct values; the record value is {_describe(kind)}"
        )
    parts = []
    for name in names:
        field_kind = _field(kind, name)
        if field_kind is None:
            raise DataError(f"partition.field.name: the record value has no field {name!r}")
        if _is_nested(field_kind) or field_kind == "binary":
            raise DataError(
                f"partition.field.name: field {name!r} is of type {_describe(field_kind)}; "
                "a directory needs a string, number, boolean or date"
            )
        text = f"CAST({value_sql}.{ident(name)} AS STRING)"
        escaped = f"replace(replace(replace({text}, '%', '%25'), '/', '%2F'), ':', '%3A')"
        value = f"coalesce({escaped}, {sql_string(NULL_DIRECTORY_VALUE)})"
        parts.append(f"concat({sql_string(name + '=')}, {value})")
    return f"concat_ws('/', {', '.join(parts)})"


def _describe(kind: Any) -> str:
    if isinstance(kind, dict):
        return str(kind.get("type", "unknown"))
    return str(kind)
