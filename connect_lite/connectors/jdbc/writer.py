"""The JDBC sink's writes, run in Spark's executors (the ``mapInArrow`` function of a batch).

Each Kafka partition's rows of a Spark task are written in offset order, in one transaction:
consecutive rows of one kind (insert/upsert/update, or delete) go together in
``executemany`` calls of at most ``batch.size`` rows, so each key sees its records in order.
A table is created or amended (``auto.create``, ``auto.evolve``) before the partition's
transaction. The function yields one row per partition: how far it wrote, or why it could
not (``transient``: the database may take it later; ``data``: this record cannot be
written)."""

from __future__ import annotations

import contextlib
import datetime
import decimal
import functools
import logging
import threading
import zoneinfo
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from connect_lite.api import ConnectError

from .config import InsertMode, PkMode, SinkSettings
from .dialects import (
    DATE,
    DECIMAL,
    EPOCH_UNIT,
    TIME,
    TIMESTAMP,
    Column,
    Dialect,
    TableId,
    redact_url,
)
from .fields import Layout
from .registry import dialect

if TYPE_CHECKING:  # the worker scans this module for plugins: pyarrow is the data plane's
    import pyarrow as pa

log = logging.getLogger(__name__)

RESULT_DDL = "topic string, partition int, written long, last long, kind string, message string"
"""One row per Kafka partition of a Spark task: ``kind`` is "" (written up to ``last``),
``transient`` or ``data`` (nothing of the partition written; ``message`` says why)."""

_known: dict[tuple[str, str], set[str]] = {}
"""(url, table) -> the table's columns, as this Python worker last saw them."""
_known_lock = threading.Lock()


@dataclass(frozen=True)
class WritePlan:
    """What a batch's writers need besides its rows (pickled to the executors)."""

    settings: SinkSettings
    layout: Layout
    value_schemaless: bool
    key_schemaless: bool
    written: dict[tuple[str, int], int]
    """(topic, partition) -> the last offset this task already wrote (a redelivery skips it)."""
    tolerate: bool = False
    """Whether a record the database refuses is reported alone (the task has an errant
    record reporter), the rest of its partition written; else the partition fails."""


class RecordError(Exception):
    """A record that cannot be written (bad data, a constraint): it is the record's fault."""


def write_batches(plan: WritePlan, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The ``mapInArrow`` function: the frame's rows in, one result row per partition out
    (with ``plan.tolerate``, also one ``record`` row per record that could not be written)."""
    rows = _partitions(plan, list(batches))
    if not rows:
        return
    sql = dialect(plan.settings.dialect, plan.settings.quote)
    results: list[tuple[tuple[str, int], int, int, str, str]] = []
    conn = None
    try:
        for tp, part in sorted(rows.items()):
            offsets = part.column("offset").to_pylist()
            try:
                if conn is None:
                    conn = sql.connect_retrying(plan.settings)
                    sql.prepare(conn, plan.settings.timezone)
                count = _write_partition(sql, conn, plan, tp[0], part, None)
                results.append((tp, count, offsets[-1], "", ""))
                continue
            except Exception as error:
                _rollback(conn)
                if sql.is_transient(error):
                    _close(conn)
                    conn = None
                    results.append((tp, 0, -1, TRANSIENT, _message(plan.settings, error)))
                    continue
                if conn is None or not plan.tolerate:  # no connection: a refused login
                    results.append((tp, 0, -1, DATA, _message(plan.settings, error)))
                    continue
            failures: list[tuple[int, str]] = []  # again, each record on its own
            try:
                count = _write_partition(sql, conn, plan, tp[0], part, failures)
            except Exception as error:
                _rollback(conn)
                message = _message(plan.settings, error)
                if sql.is_transient(error):
                    results.append((tp, 0, -1, TRANSIENT, message))
                else:  # the partition cannot be written (its table): each record reported
                    results.extend((tp, 0, offset, RECORD, message) for offset in offsets)
                    results.append((tp, 0, offsets[-1], "", ""))
                continue
            results.extend((tp, 0, offset, RECORD, message) for offset, message in failures)
            results.append((tp, count, offsets[-1], "", ""))
    finally:
        _close(conn)
    import pyarrow as pa

    yield pa.RecordBatch.from_pylist(
        [
            {"topic": t, "partition": p, "written": n, "last": last, "kind": k, "message": m}
            for (t, p), n, last, k, m in results
        ],
        schema=_result_schema(),
    )


def _partitions(plan: WritePlan, batches: list[pa.RecordBatch]) -> dict[tuple[str, int], pa.Table]:
    """The frame's rows by Kafka partition, each in offset order, without those this task
    already wrote (``plan.written``)."""
    if not batches:
        return {}
    import pyarrow as pa
    import pyarrow.compute as pc

    table = pa.Table.from_batches(batches)
    topic, partition, offset = (table.column(n) for n in ("topic", "partition", "offset"))
    for (t, p), last in plan.written.items():
        done = pc.and_(pc.and_(pc.equal(topic, t), pc.equal(partition, p)),
                       pc.less_equal(offset, last))  # fmt: skip
        table = table.filter(pc.invert(done))
        topic, partition, offset = (table.column(n) for n in ("topic", "partition", "offset"))
    pairs = table.select(["topic", "partition"]).group_by(["topic", "partition"]).aggregate([])
    found = zip(
        pairs.column("topic").to_pylist(), pairs.column("partition").to_pylist(), strict=True
    )
    return {
        (t, p): table.filter(pc.and_(pc.equal(topic, t), pc.equal(partition, p))).sort_by("offset")
        for t, p in found
    }


TRANSIENT, DATA, RECORD = "transient", "data", "record"


@functools.cache
def _result_schema() -> pa.Schema:
    """One row per partition written (and per record refused): what ``write_batches`` yields."""
    import pyarrow as pa

    return pa.schema(
        [
            ("topic", pa.string()),
            ("partition", pa.int32()),
            ("written", pa.int64()),
            ("last", pa.int64()),
            ("kind", pa.string()),
            ("message", pa.string()),
        ]
    )


def _rollback(conn: Any) -> None:
    if conn is not None:
        with contextlib.suppress(Exception):  # the connection is gone: nothing to roll back
            conn.rollback()


def _close(conn: Any) -> None:
    if conn is not None:
        with contextlib.suppress(Exception):
            conn.close()


def _message(settings: SinkSettings, error: BaseException) -> str:
    """The error as the task reports it: the password hidden, and with
    ``trim.sensitive.log=true`` only its class and SQL state (a database's message may quote
    the row, as Confluent's LogUtil trims it)."""
    if settings.trim_sensitive_log:
        state = getattr(error, "sqlstate", None)
        return f"<redacted> [class={type(error).__name__}; SQLState={state}]"
    text = f"{type(error).__name__}: {error}"
    if settings.password:
        text = text.replace(settings.password, "[hidden]")
    return redact_url(text)


def _write_partition(
    sql: Dialect,
    conn: Any,
    plan: WritePlan,
    topic: str,
    part: pa.Table,
    failures: list[tuple[int, str]] | None,
) -> int:
    """Write one partition's rows in offset order and commit; how many were written. With
    ``failures``, each record goes alone in a savepoint, and one that the database refuses is
    rolled back and listed (offset, why) while the others are written. When every record is
    a write (no tombstone, no record to refuse), the parameters are made a column at a time."""
    settings = plan.settings
    table = TableId.parse(settings.table_format.replace("${topic}", topic))
    if plan.layout.columns:  # none: every record is refused (no schema), no table is touched
        _ensure_table(sql, conn, settings, table, plan.layout, plan.value_schemaless)
    keys, others = plan.layout.keys, plan.layout.others
    zones = zoneinfo.ZoneInfo(settings.timezone), zoneinfo.ZoneInfo(settings.date_timezone)
    sources = _sources(sql, plan, keys + others, zones)
    params_of = (_compiled(sources), _compiled(_sources(sql, plan, keys, zones)))
    statements = {
        "write": _write_statement(sql, settings.insert_mode, table, keys, others),
        "delete": sql.delete(table, keys) if settings.delete_enabled else "",
    }
    pending: list[tuple[Any, ...]] = []
    pending_kind = ""
    written = 0

    bulk = sql.bulk_rows > 0 and settings.insert_mode is not InsertMode.UPDATE

    def flush() -> None:
        nonlocal pending
        if bulk and pending_kind == "write" and len(pending) >= sql.bulk_rows:
            upsert = settings.insert_mode is InsertMode.UPSERT
            sql.bulk_write(conn, table, keys, others, upsert, pending)
            pending = []
            return
        size = settings.batch_size or len(pending) or 1
        for start in range(0, len(pending), size):
            _execute_many(conn, statements[pending_kind], pending[start : start + size])
        pending = []

    if failures is None and _all_writes(plan, part):
        pending, pending_kind = _column_params(plan, sources, part), "write"
        written = len(pending)
        flush()
        conn.commit()
        return written
    for row in part.to_pylist():
        try:
            kind, params = _operation(plan, row, params_of)
            if failures is None:
                if kind != pending_kind:
                    flush()
                    pending_kind = kind
                pending.append(params)
            else:
                _execute_alone(sql, conn, statements[kind], params)
            written += 1
        except Exception as error:
            if failures is None or sql.is_transient(error):
                raise
            failures.append((row["offset"], _message(settings, error)))
    flush()
    conn.commit()
    return written


def _operation(
    plan: WritePlan,
    row: dict[str, Any],
    params_of: tuple[Params, Params],
) -> tuple[str, tuple[Any, ...]]:
    """What a record asks: ("write" or "delete", its statement's parameters); ``params_of``
    gives a row's parameters for all its columns, and for its keys."""
    settings = plan.settings
    keys = plan.layout.keys
    if (settings.delete_enabled or settings.pk_mode is PkMode.RECORD_KEY) and (
        row.get("key") is None or plan.key_schemaless
    ):
        raise RecordError(_invalid_message(plan, row, "key"))
    value = row.get("value")
    if value is None and settings.delete_enabled:
        return "delete", params_of[1](row)
    if value is None or plan.value_schemaless:
        raise RecordError(_invalid_message(plan, row, "value"))
    params = params_of[0](row)
    if settings.insert_mode is InsertMode.UPDATE:  # SET the others, WHERE the keys
        params = params[len(keys) :] + params[: len(keys)]
    return "write", params


def _execute_alone(sql: Dialect, conn: Any, statement: str, params: tuple[Any, ...]) -> None:
    sql.begin(conn)  # the savepoints nest in the partition's transaction
    sql.execute(conn, "SAVEPOINT connect_lite_record")
    try:
        sql.execute(conn, statement, params)
    except Exception:
        sql.execute(conn, "ROLLBACK TO SAVEPOINT connect_lite_record")
        raise
    sql.execute(conn, "RELEASE SAVEPOINT connect_lite_record")


def _write_statement(
    sql: Dialect,
    mode: InsertMode,
    table: TableId,
    keys: tuple[Column, ...],
    others: tuple[Column, ...],
) -> str:
    if mode is InsertMode.UPSERT:
        return sql.upsert(table, keys, others)
    if mode is InsertMode.UPDATE:
        return sql.update(table, keys, others)
    return sql.insert(table, keys + others)


def _execute_many(conn: Any, statement: str, rows: list[tuple[Any, ...]]) -> None:
    cursor = conn.cursor()
    try:
        cursor.executemany(statement, rows)
    finally:
        cursor.close()


_JAVA_CLASSES = {"{": "HashMap", "[": "ArrayList", '"': "String", "t": "Boolean", "f": "Boolean"}


def _invalid_message(plan: WritePlan, row: dict[str, Any], side: str) -> str:
    """Confluent's RecordValidator message for a record without the value (or key) its
    settings need."""
    settings = plan.settings
    held = row.get(side)
    schemaless = plan.value_schemaless if side == "value" else plan.key_schemaless
    if held is None:
        shown, schema = "null", "null"
    elif schemaless:  # JSON text: the class JsonConverter would have given
        text = str(held).lstrip()
        shown = _JAVA_CLASSES.get(text[:1], "Long" if text[:1].isdigit() else "String")
        schema = "null"
    else:
        shown = "Struct" if isinstance(held, dict) else type(held).__name__
        schema = "Struct" if isinstance(held, dict) else "string"
    timestamp = row.get("timestamp")
    millis = "null" if timestamp is None else str(int(timestamp.timestamp() * 1000))
    wanted = (
        "a non-null Struct or String value and non-null Struct or String schema"
        if side == "value"
        else "a non-null key and non-null Struct or primitive key schema"
    )
    return (
        f"Sink connector '{settings.connector}' is configured with "
        f"'delete.enabled={str(settings.delete_enabled).lower()}' and "
        f"'pk.mode={settings.pk_mode.value}' and therefore requires records with {wanted}, but "
        f"found record at (topic='{row['topic']}',partition={row['partition']},"
        f"offset={row['offset']},timestamp={millis}) with a {shown} {side} and {schema} {side} "
        "schema."
    )


Params = Callable[[dict[str, Any]], tuple[Any, ...]]
"""A row's statement parameters."""

_PLAIN_TYPES = frozenset(
    ("int8", "int16", "int32", "int64", "float32", "float64", "boolean", "string", "bytes")
)


Source = tuple[str, Any, Any, Callable[[Any], Any] | None]
"""Where a parameter comes from (the layout's side and name), its default, and how it is
bound (None: as it is)."""


def _sources(
    sql: Dialect,
    plan: WritePlan,
    columns: tuple[Column, ...],
    zones: tuple[zoneinfo.ZoneInfo, zoneinfo.ZoneInfo],
) -> list[Source]:
    """Each of ``columns``' source, default and binding, worked out once per partition (a
    primitive is bound as it is)."""
    replace = plan.settings.replace_null_with_default
    parts: list[Source] = []
    for (side, name), column in zip(plan.layout.sources, columns, strict=False):
        form = column.form
        default = form.get("default") if replace or column.primary else None
        plain = form.get("type") in _PLAIN_TYPES and not form.get("name")
        bind = None if plain and EPOCH_UNIT not in form else functools.partial(
            _bind, sql, form, zone=zones[0], date_zone=zones[1])  # fmt: skip
        parts.append((side, name, default, bind))
    return parts


def _compiled(parts: list[Source]) -> Params:
    """A row's parameters, from its columns' ``_sources``."""

    def params(row: dict[str, Any]) -> tuple[Any, ...]:
        values = []
        for side, name, default, bind in parts:
            if side == "kafka":
                value = (row["topic"], row["partition"], row["offset"])[name]
            elif name is None:
                value = row.get(side)
            else:
                value = (row.get(side) or {}).get(name)
            if value is None:
                value = default
            values.append(value if bind is None or value is None else bind(value))
        return tuple(values)

    return params


def _all_writes(plan: WritePlan, part: pa.Table) -> bool:
    """Whether every record of the partition is a write (``_operation`` would neither delete
    nor refuse one): a value with a schema in each, and a key where the settings need one."""
    settings = plan.settings
    names = part.column_names
    if plan.value_schemaless or "value" not in names or part.column("value").null_count:
        return False
    needs_key = settings.delete_enabled or settings.pk_mode is PkMode.RECORD_KEY
    return not needs_key or (
        not plan.key_schemaless and "key" in names and not part.column("key").null_count
    )


def _column_params(plan: WritePlan, parts: list[Source], part: pa.Table) -> list[tuple[Any, ...]]:
    """Every row's parameters as ``_compiled`` gives them, made a column at a time."""
    columns: list[list[Any]] = []
    for side, name, default, bind in parts:
        if side == "kafka":
            array = part.column(("topic", "partition", "offset")[name])
        elif name is None:
            array = part.column(side)
        else:  # a field of the key or value (null where the struct is)
            import pyarrow.compute as pc

            array = pc.struct_field(part.column(side), name)
        values = array.to_pylist()
        if default is not None:
            values = [default if v is None else v for v in values]
        if bind is not None:
            values = [None if v is None else bind(v) for v in values]
        columns.append(values)
    if plan.settings.insert_mode is InsertMode.UPDATE:  # SET the others, WHERE the keys
        keys = len(plan.layout.keys)
        columns = columns[keys:] + columns[:keys]
    return list(zip(*columns, strict=True))


def _bind(
    sql: Dialect,
    form: dict[str, Any],
    value: Any,
    *,
    zone: zoneinfo.ZoneInfo,
    date_zone: zoneinfo.ZoneInfo,
) -> Any:
    """A frame value as Confluent's dialect binds it: Timestamp and Time as wall-clock time
    in ``db.timezone``, Date in ``date.timezone``; SQLite gets epoch milliseconds."""
    if value is None:
        return None
    logical = form.get("name")
    sqlite = sql.epoch_times
    unit = form.get(EPOCH_UNIT)
    if unit is not None:  # timestamp.fields.list: epoch micro- or nanoseconds
        count = int(value)
        value = _EPOCH + datetime.timedelta(microseconds=count // 1000 if unit == "ns" else count)
    if logical == TIMESTAMP:
        if sqlite:
            return int(value.timestamp() * 1000)
        return value.astimezone(zone).replace(tzinfo=None)
    if logical == TIME:
        millis = int(value)
        if sqlite:
            return millis
        return (_EPOCH + datetime.timedelta(milliseconds=millis)).astimezone(zone).time()
    if logical == DATE:
        midnight = datetime.datetime.combine(value, datetime.time(), datetime.UTC)
        if sqlite:
            return int(midnight.timestamp() * 1000)
        return midnight.astimezone(date_zone).date()
    if logical == DECIMAL:
        return str(value) if sqlite else decimal.Decimal(value)
    if isinstance(value, dict) or form.get("type") in ("struct", "map"):
        raise RecordError(f"Unsupported source data type: {str(form.get('type', '')).upper()}")
    return value


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def _ensure_table(
    sql: Dialect,
    conn: Any,
    settings: SinkSettings,
    table: TableId,
    layout: Layout,
    deletes_only: bool,
) -> None:
    """Create the table or add its missing columns (``auto.create``, ``auto.evolve``), as
    Confluent's DbStructure does; the columns seen are cached per Python worker."""
    cache_key = (settings.url, str(table))
    wanted = layout.keys if deletes_only else layout.create_order()
    with _known_lock:
        known = _known.get(cache_key)
    if known is not None and all(c.name in known for c in wanted):
        return
    found = sql.columns_of(conn, table)
    shown = sql.display(conn, table)
    conn.commit()
    if found is None:
        if not settings.auto_create:
            raise ConnectError(f"Table {shown} is missing and auto-creation is disabled")
        try:
            sql.execute(conn, sql.create_table(table, wanted))
            conn.commit()
        except Exception:
            _rollback(conn)
            if sql.columns_of(conn, table) is None:  # not made by another task meanwhile
                raise
            conn.commit()
        found = {c.name for c in wanted}
    lowered = {name.lower() for name in found}
    missing = [c for c in wanted if c.name.lower() not in lowered]
    if missing:
        for column in missing:  # before the auto.evolve check, as in Confluent's DbStructure
            if not column.optional and column.form.get("default") is None:
                raise ConnectError(
                    f"Cannot ALTER TABLE {shown} to add missing field {_field(column)}, as the "
                    "field is not optional and does not have a default value"
                )
        if not settings.auto_evolve:
            names = ", ".join(_field(c) for c in missing)
            raise ConnectError(
                f"Table {shown} is missing fields ([{names}]) and auto-evolution is disabled"
            )
        try:
            for statement in sql.alter_table(table, missing):
                sql.execute(conn, statement)
            conn.commit()
        except Exception:
            _rollback(conn)
            now = sql.columns_of(conn, table) or set()
            conn.commit()
            if any(c.name.lower() not in {n.lower() for n in now} for c in missing):
                raise
        found = found | {c.name for c in missing}
    with _known_lock:
        _known[cache_key] = set(found)


def _field(column: Column) -> str:
    """A column as Confluent's SinkRecordField prints in its messages."""
    kind = str(column.form.get("type", "")).upper()
    shown = (
        f"Schema{{{column.form['name']}:{kind}}}"
        if column.form.get("name")
        else f"Schema{{{kind}}}"
    )
    primary = "true" if column.primary else "false"
    return f"SinkRecordField{{schema={shown}, name='{column.name}', isPrimaryKey={primary}}}"


def forget_tables() -> None:
    """Drop what this process knows of tables (tests; a table dropped behind the sink)."""
    with _known_lock:
        _known.clear()
