"""The PostgreSQL CDC source connector, under Debezium's class name: a snapshot of the captured
tables (``op=r``), then their changes from a logical replication slot (pgoutput), as Debezium's
change events, with Debezium's source partition and offsets.

Snapshot. When the task creates the slot, it creates it with an exported snapshot and reads
the tables in a REPEATABLE READ transaction on that snapshot: the snapshot holds exactly what
was committed before the slot's consistent point, and the stream starts there, so nothing is
lost and nothing is read twice. When the slot already exists (``snapshot.mode=always``, or the
offsets were deleted), the snapshot is read in a transaction of its own after the slot, and
the stream starts at the slot's confirmed position: what was committed in between is delivered
at least once (in the snapshot and again as changes), never lost.

Stream. Changes come over the replication protocol (pgoutput.py), one message at a time, so a
large transaction never has to fit in memory. Each event's offset says how far the task got
(``lsn_commit``: its transaction's commit position; ``lsn_proc`` and ``lsn_events_processed``:
the event within it). The slot's confirmed position moves only in ``commit``, once the
framework committed the offsets, and only to the commit position of the transaction of the
last committed event: after a crash, the server sends that transaction again, and the task
skips what it had delivered. Events are delivered at least once, as Debezium's are."""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from connect_lite.api import (
    ConfigDef,
    ConfigError,
    ConnectError,
    RetriableError,
    Schema,
    SchemaBuilder,
    SchemaType,
    SourceConnector,
    SourceRecord,
    SourceTask,
    Struct,
)

from . import pgoutput
from .config import Settings, config_def
from .values import Mapped, TypeFacts, mapped, with_default

log = logging.getLogger(__name__)

VERSION = "2.7.4.Final"
"""The Debezium release whose events and offsets this connector follows (``source.version``)."""

_DEF = config_def()
_OPS = {"c": "INSERT", "u": "UPDATE", "d": "DELETE", "t": "TRUNCATE"}


def connect(settings: Settings, replication: bool = False, **extra: Any) -> Any:
    """A psycopg connection (the JDBC connectors' PostgreSQL driver, the ``postgres`` extra);
    ``extra``: more connection parameters (``connect_timeout``)."""
    from connect_lite.connectors.jdbc.dialects import PostgreSqlDialect

    psycopg = PostgreSqlDialect(True).driver("psycopg", "postgres")
    cursor = psycopg.ClientCursor if replication else psycopg.Cursor
    return psycopg.connect(autocommit=True, cursor_factory=cursor,
                           **settings.conninfo(replication), **extra)  # fmt: skip


_RETAINED = """
SELECT (pg_current_wal_lsn() - restart_lsn)::int8, active FROM pg_replication_slots
 WHERE slot_name = %s
"""
"""The WAL the server keeps for the slot (from its restart position on), and whether a
connection streams from it."""


class PostgresConnector(SourceConnector):
    """Changes of PostgreSQL tables into topics, with Debezium's keys, events and offsets."""

    __connect_class_name__ = "io.debezium.connector.postgresql.PostgresConnector"

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return _DEF

    def validate(self, config: dict[str, str]) -> None:
        Settings.parse(config)

    def start(self, config: dict[str, str]) -> None:
        Settings.parse(config)
        self._props = dict(config)

    def task_class(self) -> type[SourceTask]:
        return PostgresConnectorTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props)]  # one slot, one reader: Debezium runs one task

    def stop(self) -> None:
        """Nothing runs in the connector itself."""

    def alter_offsets(self, connector_config: dict[str, str], offsets: dict[Any, Any]) -> bool:
        """KIP-875: the offsets live in the worker's store; the slot follows them at the next
        commit (a deleted offset makes the next start take a snapshot as snapshot.mode says)."""
        return True

    def status_details(self, connector_config: dict[str, str]) -> dict[str, int | str] | None:
        """The slot and the WAL it retains, in any state: while the connector is STOPPED or
        PAUSED nothing reads the slot, and the server keeps every write's WAL for it."""
        settings = Settings.parse(connector_config)
        with connect(settings, connect_timeout=10) as conn:
            row = conn.execute(_RETAINED, [settings.slot]).fetchone()
        if row is None:
            return None
        return {"slot": settings.slot, "retained_wal_bytes": int(row[0] or 0),
                "slot_active": "true" if row[1] else "false"}  # fmt: skip


# -- tables -------------------------------------------------------------------------------


@dataclass(frozen=True)
class CapturedColumn:
    name: str
    mapped: Mapped
    index: int
    """The column's position in the server's tuples."""
    key: bool


@dataclass(frozen=True)
class Table:
    schema: str
    name: str
    columns: tuple[CapturedColumn, ...]
    key_schema: Schema | None
    value_schema: Schema
    envelope: Schema
    source_schema: Schema

    @property
    def topic(self) -> str:
        return self.envelope.name.rsplit(".", 1)[0]  # type: ignore[union-attr]


def source_schema() -> Schema:
    """``io.debezium.connector.postgresql.Source``, in Debezium 2.7's field order."""
    snapshot = (
        SchemaBuilder.of(SchemaType.STRING).name("io.debezium.data.Enum").version(1)
        .parameter("allowed", "true,last,false,incremental").optional().default_value("false")
        .build()
    )  # fmt: skip
    opt_string, opt_long = Schema.OPTIONAL_STRING_SCHEMA, Schema.OPTIONAL_INT64_SCHEMA
    return (
        SchemaBuilder.struct().name("io.debezium.connector.postgresql.Source")
        .field("version", Schema.STRING_SCHEMA).field("connector", Schema.STRING_SCHEMA)
        .field("name", Schema.STRING_SCHEMA).field("ts_ms", Schema.INT64_SCHEMA)
        .field("snapshot", snapshot).field("db", Schema.STRING_SCHEMA)
        .field("sequence", opt_string).field("ts_us", opt_long).field("ts_ns", opt_long)
        .field("schema", Schema.STRING_SCHEMA).field("table", Schema.STRING_SCHEMA)
        .field("txId", opt_long).field("lsn", opt_long).field("xmin", opt_long)
        .build()
    )  # fmt: skip


_SOURCE = source_schema()
_BLOCK = (
    SchemaBuilder.struct().name("event.block").version(1).optional()
    .field("id", Schema.STRING_SCHEMA).field("total_order", Schema.INT64_SCHEMA)
    .field("data_collection_order", Schema.INT64_SCHEMA)
    .build()
)  # fmt: skip


_HEARTBEAT_KEY = (
    SchemaBuilder.struct().name("io.debezium.connector.common.ServerNameKey").version(1)
    .field("serverName", Schema.STRING_SCHEMA).build()
)  # fmt: skip
_HEARTBEAT_VALUE = (
    SchemaBuilder.struct().name("io.debezium.connector.common.Heartbeat").version(1)
    .field("ts_ms", Schema.INT64_SCHEMA).build()
)  # fmt: skip


def table_of(
    settings: Settings,
    schema: str,
    name: str,
    rows: list[tuple[Any, ...]],
    facts: Callable[[int], TypeFacts | None] = lambda oid: None,
) -> Table:
    """The table's schemas from its catalog rows (name, type oid, type modifier, not null,
    primary key, and the default's expression, if any) in column order; a column whose type
    is not mapped is left out (WARN)."""
    topic = f"{settings.prefix}.{schema}.{name}"
    columns = []
    for index, (column, type_oid, modifier, not_null, primary, *default) in enumerate(rows):
        if not settings.keeps_column(schema, name, column):
            continue
        type_facts = facts(type_oid)
        found = mapped(type_oid, modifier, not not_null, settings.modes, type_facts)
        if found is not None and default:
            found = with_default(found, type_oid, type_facts, default[0])
        if found is None:
            log.warning("Column %s.%s.%s has a type connect-lite does not map yet (oid %d); "
                        "it is left out of the events", schema, name, column, type_oid)  # fmt: skip
            continue
        columns.append(CapturedColumn(column, found, index, bool(primary)))
    value = SchemaBuilder.struct().name(f"{topic}.Value").optional()
    for c in columns:
        value.field(c.name, c.mapped.schema)
    value_schema = value.build()
    keys = [c for c in columns if c.key]
    key_schema = None
    if keys:
        key = SchemaBuilder.struct().name(f"{topic}.Key")
        for c in keys:
            key.field(c.name, c.mapped.schema)
        key_schema = key.build()
    envelope = (
        SchemaBuilder.struct().name(f"{topic}.Envelope").version(2)
        .field("before", value_schema).field("after", value_schema)
        .field("source", _SOURCE).field("transaction", _BLOCK)
        .field("op", Schema.STRING_SCHEMA).field("ts_ms", Schema.OPTIONAL_INT64_SCHEMA)
        .field("ts_us", Schema.OPTIONAL_INT64_SCHEMA).field("ts_ns", Schema.OPTIONAL_INT64_SCHEMA)
        .build()
    )  # fmt: skip
    return Table(schema, name, tuple(columns), key_schema, value_schema, envelope, _SOURCE)


_CATALOG = """
SELECT a.attname, a.atttypid::int8, a.atttypmod, a.attnotnull,
       EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary
               AND a.attnum = ANY (i.indkey)),
       CASE WHEN a.attgenerated = '' THEN pg_get_expr(d.adbin, d.adrelid) END
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
 WHERE n.nspname = %s AND c.relname = %s AND a.attnum > 0 AND NOT a.attisdropped
 ORDER BY a.attnum
"""

_TYPE = """
SELECT t.typtype, t.typcategory, t.typelem::int8,
       (SELECT array_agg(e.enumlabel::text ORDER BY e.enumsortorder) FROM pg_enum e
         WHERE e.enumtypid = t.oid)
  FROM pg_type t WHERE t.oid = %s
"""
_FIRST_UNMAPPED = 10_000
"""Types from here on are made by users (enums, their arrays, domains...)."""
_BUILTIN_ARRAYS = frozenset(
    (
        1000,
        1001,
        1005,
        1007,
        1009,
        1014,
        1015,
        1016,
        1021,
        1022,
        1115,
        1182,
        1183,
        1185,
        1231,
        1270,
        2951,
        199,
        3807,
    )
)
"""The arrays of the built-in types the connector maps (``_bool`` ... ``_jsonb``)."""

_TABLES = """
SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
   AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%%'
 ORDER BY 1, 2
"""


_FALLBACK = {SchemaType.INT8: 0, SchemaType.INT16: 0, SchemaType.INT32: 0, SchemaType.INT64: 0,
             SchemaType.FLOAT32: 0.0, SchemaType.FLOAT64: 0.0, SchemaType.BOOLEAN: False,
             SchemaType.STRING: "", SchemaType.BYTES: b""}  # fmt: skip


def _value(column: CapturedColumn, text: Any, placeholder: str) -> Any:
    schema = column.mapped.schema
    if text is pgoutput.UNCHANGED:
        return placeholder.encode() if schema.type is SchemaType.BYTES else placeholder
    if text is None:  # a column the server did not send (an old key): Debezium's fallback
        return None if schema.optional else _FALLBACK.get(schema.type)
    return column.mapped.convert(text)


def row_struct(table: Table, values: tuple[Any, ...], placeholder: str) -> Struct:
    return Struct(table.value_schema, {c.name: _value(c, values[c.index], placeholder)
                                       for c in table.columns})  # fmt: skip


def key_struct(table: Table, values: tuple[Any, ...], placeholder: str) -> Struct | None:
    if table.key_schema is None:
        return None
    return Struct(table.key_schema, {c.name: _value(c, values[c.index], placeholder)
                                     for c in table.columns if c.key})  # fmt: skip


# -- the task ---------------------------------------------------------------------------


@dataclass
class _Txn:
    xid: int
    final_lsn: int
    commit_us: int
    events: int = 0


class PostgresConnectorTask(SourceTask):
    """One slot's reader: a snapshot, then the stream (see the module's doc)."""

    __connect_class_name__ = "io.debezium.connector.postgresql.PostgresConnectorTask"

    def __init__(self) -> None:
        self._settings: Settings | None = None
        self._partition: dict[str, str] = {}
        self._catalog: Any = None
        self._replication: Any = None
        self._stream: pgoutput.Stream | None = None
        self._snapshot: Iterator[list[SourceRecord]] | None = None
        self._stream_after_snapshot = True
        self._tables: dict[int, Table] = {}
        self._relations: dict[int, pgoutput.Relation] = {}
        self._txn: _Txn | None = None
        self._skip: tuple[int, int, int] | None = None
        self._last_commit_lsn: int | None = None
        self._heartbeat_at = 0.0
        self._confirm_to = 0
        """How far the committed offsets let the slot go (``commit`` notes it, ``poll`` sends
        it: libpq's connection is not shared between threads)."""
        self._last_end_lsn = 0
        self._retry_at = 0.0
        self._types: dict[int, TypeFacts | None] = {}
        self._backoff = 0.0

    def version(self) -> str:
        return VERSION

    # -- start ----------------------------------------------------------------------------
    def start(self, config: dict[str, str]) -> None:
        settings = self._settings = Settings.parse(config)
        self._partition = {"server": settings.prefix}
        offset = self.context.offset_storage_reader().offset(self._partition)
        try:
            self._catalog = connect(settings)
            self._ensure_publication()
            slot_exists = self._slot_exists()
        except ConfigError:
            raise
        except Exception as error:
            raise ConnectError(f"Cannot connect to PostgreSQL: {error}") from error
        snapshot_done = offset is not None and (
            not offset.get("snapshot") or bool(offset.get("last_snapshot_record"))
        )
        mode = settings.snapshot_mode
        wants_snapshot = (
            mode == "always"
            or (mode in ("initial", "initial_only", "when_needed") and not snapshot_done)
            or (mode == "when_needed" and not slot_exists)
        )
        self._stream_after_snapshot = mode != "initial_only"
        if mode == "initial_only" and snapshot_done:
            log.info("[%s] snapshot.mode=initial_only: the snapshot is done; nothing to stream",
                     settings.prefix)  # fmt: skip
        exported = None
        if not slot_exists and self._stream_after_snapshot:  # initial_only: no slot left behind
            exported = self._create_slot(export=wants_snapshot)
        if wants_snapshot:
            self._snapshot = self._snapshot_batches(exported)
        elif offset and not offset.get("snapshot"):
            self._resume_from(offset)

    def _cat(self) -> Any:
        """The connection for catalog queries, made again after the server was away."""
        if self._catalog is None:
            assert self._settings is not None
            self._catalog = connect(self._settings)
        return self._catalog

    def _facts(self, oid: int) -> TypeFacts | None:
        """The catalog's word on a type that is not built in (an enum, an array), cached."""
        if oid < _FIRST_UNMAPPED and oid not in _BUILTIN_ARRAYS:
            return None
        if oid not in self._types:
            row = self._cat().execute(_TYPE, [oid]).fetchone()
            found = None
            if row is not None and row[0] == "e":
                found = TypeFacts(enum_labels=tuple(row[3] or ()))
            elif row is not None and row[1] == "A" and row[2]:
                found = TypeFacts(element=int(row[2]), element_facts=self._facts(int(row[2])))
            self._types[oid] = found
        return self._types[oid]

    def _resume_from(self, offset: dict[str, Any]) -> None:
        """After a restart: skip what the committed offset says was delivered, in the
        transaction the server sends again."""
        commit = offset.get("lsn_commit")
        if commit is not None:
            self._skip = (int(commit), int(offset.get("lsn_proc", 0)),
                          int(offset.get("lsn_events_processed", 0)))  # fmt: skip

    def _ensure_publication(self) -> None:
        settings = self._settings
        assert settings is not None
        found = self._cat().execute("SELECT puballtables FROM pg_publication WHERE pubname = %s",
                                      [settings.publication]).fetchall()  # fmt: skip
        if found or settings.autocreate == "disabled":
            if not found:
                raise ConnectError(
                    f"Publication '{settings.publication}' does not exist and "
                    "publication.autocreate.mode is disabled"
                )
            return
        name = _ident(settings.publication)
        if settings.autocreate == "all_tables":
            self._cat().execute(f"CREATE PUBLICATION {name} FOR ALL TABLES")
            return
        tables = self._captured()
        if not tables:
            raise ConnectError("publication.autocreate.mode=filtered: no table is captured")
        listed = ", ".join(f"{_ident(s)}.{_ident(t)}" for s, t in tables)
        self._cat().execute(f"CREATE PUBLICATION {name} FOR TABLE {listed}")

    def _captured(self) -> list[tuple[str, str]]:
        settings = self._settings
        assert settings is not None
        rows = self._cat().execute(_TABLES).fetchall()
        return [(s, t) for s, t in rows if settings.captures(s, t)]

    def _slot_exists(self) -> bool:
        settings = self._settings
        assert settings is not None
        rows = (
            self._cat()
            .execute(
                "SELECT plugin, database FROM pg_replication_slots WHERE slot_name = %s",
                [settings.slot],
            )
            .fetchall()
        )
        if rows and rows[0][0] != "pgoutput":
            raise ConnectError(f"Slot '{settings.slot}' exists with plugin {rows[0][0]}, not "
                               "pgoutput")  # fmt: skip
        return bool(rows)

    def _create_slot(self, export: bool) -> tuple[int, str | None]:
        """The slot, made now: its consistent point and, with ``export``, the exported
        snapshot's name (valid while the replication connection stays idle)."""
        settings = self._settings
        assert settings is not None
        self._replication = connect(settings, replication=True)
        kind = "EXPORT_SNAPSHOT" if export else "NOEXPORT_SNAPSHOT"
        row = self._replication.execute(
            f'CREATE_REPLICATION_SLOT "{settings.slot}" LOGICAL pgoutput {kind}'
        ).fetchone()
        log.info("[%s] Created the replication slot %s at %s", settings.prefix, settings.slot,
                 row[1])  # fmt: skip
        return pgoutput.lsn_int(row[1]), row[2]

    # -- the snapshot ---------------------------------------------------------------------
    def _snapshot_batches(
        self, exported: tuple[int, str | None] | None
    ) -> Iterator[list[SourceRecord]]:
        settings = self._settings
        assert settings is not None
        conn = connect(settings)
        conn.autocommit = False
        try:
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            if exported is not None and exported[1]:
                conn.execute(f"SET TRANSACTION SNAPSHOT '{exported[1]}'")
                lsn = exported[0]
            else:
                lsn = pgoutput.lsn_int(
                    conn.execute("SELECT pg_current_wal_lsn()::text").fetchone()[0]
                )
            xid, now_us = conn.execute(
                "SELECT txid_current(), (extract(epoch FROM now()) * 1000000)::int8"
            ).fetchone()
            if self._replication is not None:  # the snapshot is imported: the export may end
                self._replication.close()
                self._replication = None
            tables = self._captured()
            log.info("[%s] Snapshot of %d table(s) at %s", settings.prefix, len(tables),
                     pgoutput.lsn_text(lsn))  # fmt: skip
            held: tuple[Table, tuple[Any, ...], str] | None = None
            batch: list[SourceRecord] = []
            for n, (schema, name) in enumerate(tables):
                rows = conn.execute(_CATALOG, [schema, name]).fetchall()
                table = table_of(settings, schema, name, rows, self._facts)
                selected = ", ".join(f"{_ident(c.name)}::text" for c in table.columns) or "NULL"
                first = True
                with conn.cursor(name="connect_lite_snapshot") as cursor:
                    cursor.itersize = settings.fetch_size
                    cursor.execute(f"SELECT {selected} FROM {_ident(schema)}.{_ident(name)}")
                    for row in cursor:
                        values = _spread(table, row)
                        if held is not None:
                            batch.append(self._read_record(*held, lsn, xid, now_us, False))
                        marker = (
                            "first"
                            if first and n == 0
                            else ("first_in_data_collection" if first else "true")
                        )
                        held, first = (table, values, marker), False
                        if len(batch) >= settings.max_batch:
                            yield batch
                            batch = []
                if held is not None and held[0] is table:  # the table's last row
                    last = "last_in_data_collection"
                    held = (table, held[1], last if held[2] != "first" else held[2])
            if held is not None:
                batch.append(self._read_record(held[0], held[1], "last", lsn, xid, now_us, True))
            conn.commit()
            if batch:
                yield batch
        finally:
            conn.close()

    def _read_record(
        self,
        table: Table,
        values: tuple[Any, ...],
        marker: str,
        lsn: int,
        xid: int,
        now_us: int,
        last: bool,
    ) -> SourceRecord:
        settings = self._settings
        assert settings is not None
        offset = {"lsn": lsn, "txId": xid, "ts_usec": now_us, "snapshot": True,
                  "last_snapshot_record": last}  # fmt: skip
        source = self._source(table, now_us, marker, xid, lsn, None)
        return self._record(table, "r", None, values, source, offset)

    # -- records --------------------------------------------------------------------------
    def _source(
        self,
        table: Table,
        ts_us: int,
        snapshot: str | None,
        xid: int | None,
        lsn: int | None,
        sequence: str | None,
    ) -> Struct:
        settings = self._settings
        assert settings is not None
        fields = {"version": VERSION, "connector": "postgresql", "name": settings.prefix,
                  "ts_ms": ts_us // 1000, "db": settings.dbname, "sequence": sequence,
                  "ts_us": ts_us, "ts_ns": ts_us * 1000, "schema": table.schema,
                  "table": table.name, "txId": xid, "lsn": lsn, "xmin": None}  # fmt: skip
        if snapshot is not None:
            fields["snapshot"] = snapshot
        return Struct(_SOURCE, fields)

    def _record(
        self,
        table: Table,
        op: str,
        before: tuple[Any, ...] | None,
        after: tuple[Any, ...] | None,
        source: Struct,
        offset: dict[str, Any],
    ) -> SourceRecord:
        settings = self._settings
        assert settings is not None
        now_us = time.time_ns() // 1000
        placeholder = settings.placeholder
        envelope = Struct(table.envelope, {
            "before": None if before is None else row_struct(table, before, placeholder),
            "after": None if after is None else row_struct(table, after, placeholder),
            "source": source, "op": op, "ts_ms": now_us // 1000, "ts_us": now_us,
            "ts_ns": now_us * 1000,
        })  # fmt: skip
        key_values = after if after is not None else before
        key = None if key_values is None else key_struct(table, key_values, placeholder)
        return SourceRecord(self._partition, offset, table.topic, envelope, key, None,
                            table.key_schema, table.envelope)  # fmt: skip

    # -- poll -----------------------------------------------------------------------------
    def poll(self) -> list[SourceRecord] | None:
        settings = self._settings
        assert settings is not None
        if self._snapshot is not None:
            batch = next(self._snapshot, None)
            if batch is not None:
                return batch
            self._snapshot = None
            log.info("[%s] Snapshot done", settings.prefix)
        wait = self._retry_at - time.monotonic()
        if not self._stream_after_snapshot or wait > 0:
            time.sleep(min(max(wait, 0.0), settings.poll_ms / 1000) or settings.poll_ms / 1000)
            return None
        try:
            records = self._poll_stream()
        except Exception as error:
            if not isinstance(error, (ConnectionError, OSError)) and not type(
                error
            ).__module__.startswith("psycopg"):
                raise
            self._close_stream()
            self._backoff = min(max(0.5, self._backoff * 2), 10.0)
            self._retry_at = time.monotonic() + self._backoff
            raise RetriableError(
                f"The replication stream failed (again in {self._backoff:.1f} s): {error}"
            ) from error
        self._backoff = 0.0
        return records

    def _poll_stream(self) -> list[SourceRecord] | None:
        settings = self._settings
        assert settings is not None
        if self._stream is None:
            if self._replication is None:
                self._replication = connect(settings, replication=True)
            self._stream = pgoutput.Stream(self._replication, settings.slot, settings.publication,
                                           0, settings.status_interval_ms / 1000)  # fmt: skip
            self._stream.open()
            self._txn = None
        if self._confirm_to:
            self._stream.confirm(self._confirm_to)
        records: list[SourceRecord] = []
        wait = settings.poll_ms / 1000
        while len(records) < settings.max_batch:
            got = self._stream.read(wait if not records else 0.0)
            if got is None:
                break
            self._on_message(got[0], pgoutput.decode(got[1]), records)
        if settings.heartbeat_ms and self._txn is None:
            now = time.monotonic()
            if now - self._heartbeat_at >= settings.heartbeat_ms / 1000:
                self._heartbeat_at = now
                records.append(self._heartbeat())
        return records or None

    def _heartbeat(self) -> SourceRecord:
        """Debezium's heartbeat record; its offset is where the server's stream stands
        between transactions, so committing it lets the slot move while the captured tables
        are quiet."""
        settings = self._settings
        stream = self._stream
        assert settings is not None and stream is not None
        position = max(stream.sent, self._last_end_lsn)
        offset = {"lsn_proc": position, "lsn_commit": position, "lsn": position,
                  "ts_usec": time.time_ns() // 1000, "messageType": "NOOP",
                  "lsn_events_processed": 0}  # fmt: skip
        key = Struct(_HEARTBEAT_KEY, {"serverName": settings.prefix})
        value = Struct(_HEARTBEAT_VALUE, {"ts_ms": time.time_ns() // 1_000_000})
        topic = f"{settings.heartbeat_prefix}.{settings.prefix}"
        return SourceRecord(self._partition, offset, topic, value, key, 0, _HEARTBEAT_KEY,
                            _HEARTBEAT_VALUE)  # fmt: skip

    def _on_message(self, lsn: int, message: pgoutput.Message, out: list[SourceRecord]) -> None:
        settings = self._settings
        assert settings is not None
        if isinstance(message, pgoutput.Begin):
            self._txn = _Txn(message.xid, message.final_lsn, message.commit_us)
        elif isinstance(message, pgoutput.Commit):
            self._last_commit_lsn = message.commit_lsn
            self._last_end_lsn = message.end_lsn
            self._txn = None
        elif isinstance(message, pgoutput.Relation):
            self._relations[message.oid] = message
            self._tables.pop(message.oid, None)
        elif isinstance(message, pgoutput.Change) and self._txn is not None:
            txn = self._txn
            txn.events += 1
            if self._skipped(txn, lsn):
                return
            table = self._table(message.relation)
            if table is None or message.op in settings.skipped:
                return
            offset = _offset(txn, lsn, _OPS[message.op])
            sequence = json.dumps([None if self._last_commit_lsn is None
                                   else str(self._last_commit_lsn), str(lsn)])  # fmt: skip
            source = self._source(table, txn.commit_us, None, txn.xid, lsn, sequence)
            before = None if message.old is None else message.old
            record = self._record(table, message.op, before, message.new, source, offset)
            out.append(record)
            if message.op == "d" and settings.tombstones:
                out.append(SourceRecord(self._partition, offset, table.topic, None, record.key,
                                        None, table.key_schema, None))  # fmt: skip
        elif isinstance(message, pgoutput.Truncate) and self._txn is not None:
            txn = self._txn
            txn.events += 1
            if self._skipped(txn, lsn) or "t" in settings.skipped:
                return
            for oid in message.relations:
                table = self._table(oid)
                if table is None:
                    continue
                offset = _offset(txn, lsn, "TRUNCATE")
                source = self._source(table, txn.commit_us, None, txn.xid, lsn, None)
                millis = time.time_ns() // 1_000_000
                envelope = Struct(table.envelope, {"source": source, "op": "t", "ts_ms": millis})
                out.append(SourceRecord(self._partition, offset, table.topic, envelope, None,
                                        None, None, table.envelope))  # fmt: skip

    def _skipped(self, txn: _Txn, lsn: int) -> bool:
        """Whether the committed offset says this event was delivered before a restart."""
        if self._skip is None:
            return False
        commit, _proc, events = self._skip
        if txn.final_lsn < commit:
            return True
        if txn.final_lsn == commit and txn.events <= events:
            return True
        if txn.final_lsn > commit:
            self._skip = None
        return False

    def _table(self, oid: int) -> Table | None:
        settings = self._settings
        assert settings is not None
        if oid in self._tables:
            return self._tables[oid]
        relation = self._relations.get(oid)
        if relation is None or not settings.captures(relation.schema, relation.table):
            return None
        found = self._cat().execute(_CATALOG, [relation.schema, relation.table]).fetchall()
        catalog = {r[0]: r for r in found}
        rows = []
        for column in relation.columns:  # the stream's columns, in its order
            known = catalog.get(column.name)
            not_null = bool(known[3]) if known else False
            primary = bool(known[4]) if known else column.key
            default = known[5] if known else None
            rows.append((column.name, column.type_oid, column.type_modifier, not_null, primary,
                         default))  # fmt: skip
        table = table_of(settings, relation.schema, relation.table, rows, self._facts)
        self._tables[oid] = table
        return table

    # -- commit and stop ------------------------------------------------------------------
    def commit(self) -> None:
        """The offsets are committed: the slot may let go of every transaction before the one
        of the last committed event (a snapshot's offset: its consistent point)."""
        offset = self.context.offset_storage_reader().offset(self._partition)
        target = None if not offset else offset.get("lsn_commit", offset.get("lsn"))
        if target is not None:  # poll sends it: the stream's connection is poll's alone
            self._confirm_to = max(self._confirm_to, int(target))

    def _warn_retained(self, settings: Settings) -> None:
        """The slot stays while nothing reads it: the server keeps its WAL from the slot's
        restart position on, and more with every write."""
        row = self._cat().execute(_RETAINED, [settings.slot]).fetchone()
        if row is not None:
            log.warning(
                "[%s] The replication slot %s stays and retains %s bytes of WAL, growing with "
                "every write to the database, until the connector runs again or the slot is "
                "dropped (slot.drop.on.stop=true, or SELECT pg_drop_replication_slot('%s'))",
                settings.prefix, settings.slot, f"{row[0] or 0:,}", settings.slot,
            )  # fmt: skip

    def _close_stream(self) -> None:
        self._stream = None
        if self._catalog is not None and (self._catalog.closed or self._catalog.broken):
            self._catalog = None
        if self._replication is not None:
            with contextlib.suppress(Exception):
                self._replication.close()
            self._replication = None

    def stop(self) -> None:
        settings = self._settings
        self._snapshot = None
        self._close_stream()
        if settings is not None and self._catalog is not None:
            with contextlib.suppress(Exception):
                if settings.drop_slot:
                    self._cat().execute("SELECT pg_drop_replication_slot(%s)", [settings.slot])
                    log.info("[%s] Dropped the replication slot %s (slot.drop.on.stop)",
                             settings.prefix, settings.slot)  # fmt: skip
                else:
                    self._warn_retained(settings)
        if self._catalog is not None:
            with contextlib.suppress(Exception):
                self._catalog.close()
            self._catalog = None


def _offset(txn: _Txn, lsn: int, message_type: str) -> dict[str, Any]:
    """A streamed event's offset, with Debezium's keys."""
    return {"lsn_proc": lsn, "lsn_commit": txn.final_lsn, "lsn": lsn, "txId": txn.xid,
            "ts_usec": txn.commit_us, "messageType": message_type,
            "lsn_events_processed": txn.events}  # fmt: skip


def _spread(table: Table, row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A snapshot row (the captured columns, in order) as a tuple indexed like the stream's."""
    size = max((c.index for c in table.columns), default=-1) + 1
    values: list[Any] = [None] * size
    for column, value in zip(table.columns, row, strict=False):
        values[column.index] = value
    return tuple(values)


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
