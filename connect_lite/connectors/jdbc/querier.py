"""One table's (or the query's) reads for the JDBC source, as Confluent's table queriers do:
the query of its mode from its last offset, kept open across polls until it is exhausted,
each row a record with Confluent's schema, topic, source partition and offset."""

from __future__ import annotations

import datetime
import decimal
import logging
import zoneinfo
from collections.abc import Sequence
from typing import Any

from connect_lite.api import (
    ConnectError,
    Schema,
    SchemaBuilder,
    SchemaType,
    SourceRecord,
    Struct,
)
from connect_lite.api import logical as connect_logical

from .dialects import Dialect, SqlColumn, TableId
from .source_config import Mode, SourceSettings

log = logging.getLogger(__name__)

PROTOCOL = "1"
"""The version of Confluent's source partitions (OffsetProtocols)."""

_INTS = {"smallint": 16, "int2": 16, "integer": 32, "int": 32, "int4": 32, "bigint": 64,
         "int8": 64, "tinyint": 8, "mediumint": 32}  # fmt: skip
_FLOATS = {"real": 32, "float4": 32, "double precision": 64, "float8": 64, "double": 64,
           "float": 64}  # fmt: skip
_STRINGS = (
    "text", "character varying", "varchar", "character", "char", "bpchar", "uuid", "json",
    "jsonb", "xml", "name", "citext", "clob", "nvarchar", "nchar", "string",
)  # fmt: skip


def field_schema(column: SqlColumn, numeric_mapping: str) -> Schema | None:
    """The Connect schema of a column, as Confluent's dialects map SQL types (None: a type
    Confluent skips, logged)."""
    kind = column.sql_type.split("(")[0].strip()
    optional = column.nullable
    builder: SchemaBuilder
    if kind in ("boolean", "bool", "bit"):
        builder = SchemaBuilder.of(SchemaType["BOOLEAN"])
    elif kind in _INTS:
        builder = SchemaBuilder.of(SchemaType[f"INT{_INTS[kind]}"])
    elif kind in _FLOATS:
        builder = SchemaBuilder.of(SchemaType[f"FLOAT{_FLOATS[kind]}"])
    elif kind == "numeric":
        return _numeric(column, numeric_mapping)
    elif kind == "decimal":  # JDBC's DECIMAL (PostgreSQL reports NUMERIC): never mapped
        return _numeric(column, "none")
    elif kind in _STRINGS or kind.startswith(("character", "varchar", "char")):
        builder = SchemaBuilder.of(SchemaType["STRING"])
    elif kind in ("bytea", "blob", "binary", "varbinary"):
        builder = SchemaBuilder.of(SchemaType["BYTES"])
    elif kind == "date":
        return connect_logical.date_schema(optional)
    elif kind.startswith("time") and "stamp" not in kind:
        return connect_logical.time_schema(optional)
    elif kind.startswith(("timestamp", "datetime")):
        return connect_logical.timestamp_schema(optional)
    else:
        return None
    return (builder.optional() if optional else builder).build()


def _numeric(column: SqlColumn, mapping: str) -> Schema:
    """NUMERIC and DECIMAL by ``numeric.mapping``, as Confluent's dialects map them."""
    precision, scale = column.precision or 0, column.scale if column.scale is not None else 0
    optional = column.nullable
    if precision == 0 and not column.scale:  # NUMERIC without precision: any scale, as Confluent
        return _unbounded_decimal(optional)
    if mapping in ("precision_only", "best_fit", "best_fit_eager_double") and precision > 0:
        if scale <= 0 and precision < 19 and (mapping != "precision_only" or scale == 0):
            bits = 8 if precision < 3 else 16 if precision < 5 else 32 if precision < 10 else 64
            built = SchemaBuilder.of(SchemaType[f"INT{bits}"])
            return (built.optional() if optional else built).build()
        if mapping != "precision_only" and scale > 0 and precision <= 15:
            built = SchemaBuilder.of(SchemaType["FLOAT64"])
            return (built.optional() if optional else built).build()
    if mapping == "best_fit_eager_double" and scale > 0:
        built = SchemaBuilder.of(SchemaType["FLOAT64"])
        return (built.optional() if optional else built).build()
    return connect_logical.decimal_schema(max(scale, 0), optional)


def _unbounded_decimal(optional: bool) -> Schema:
    """Confluent's Decimal for a NUMERIC of no declared precision: scale 127."""
    builder = SchemaBuilder.of(SchemaType["BYTES"]).name(connect_logical.DECIMAL).version(1)
    builder = builder.parameter("scale", "127").parameter("connect.decimal.precision", "0")
    return (builder.optional() if optional else builder).build()


class Querier:
    """A table's or the query's reads: ``poll`` returns its next rows as records."""

    def __init__(
        self,
        sql: Dialect,
        settings: SourceSettings,
        table: TableId | None,
        offset: dict[str, Any] | None,
    ) -> None:
        self.sql = sql
        self.settings = settings
        self.table = table
        self.partition: dict[str, Any]
        if table is None:
            self.partition = {"query": "query"}
        elif settings.mode is Mode.BULK:  # Confluent's first shape, without an offset
            self.partition = {"table": table.table}
        else:
            self.partition = {"protocol": PROTOCOL, "table": sql.table_key(table)}
        self.topic = settings.topic_prefix + (table.table if table is not None else "")
        self.offset: dict[str, Any] = dict(offset or {})
        self.next_due = 0.0
        self._cursor: Any = None
        self._ahead: list[Sequence[Any]] = []
        self._schema: Schema | None = None
        self._names: list[str] = []
        self._zone = zoneinfo.ZoneInfo(settings.timezone)
        self.incrementing = settings.incrementing
        """The incrementing column: the configured one, else found at the first query."""

    @property
    def reading(self) -> bool:
        """Whether a query is open (its next rows come at the next poll, without waiting)."""
        return self._cursor is not None

    def poll(self, conn: Any, now: float) -> list[SourceRecord]:
        """The next ``batch.max.rows`` rows; once the query is exhausted the querier waits
        ``poll.interval.ms`` before the next."""
        if self._cursor is None:
            self._start(conn)
        wanted = self.settings.batch_max_rows + 1 - len(self._ahead)  # one row ahead
        self._ahead.extend(self._cursor.fetchmany(wanted) if wanted > 0 else [])
        done = len(self._ahead) <= self.settings.batch_max_rows
        rows = self._ahead if done else self._ahead[:-1]
        following = self._ahead[1:]
        if self._schema is None:
            self._schema, self._names = self._value_schema(self._columns(conn, rows))
        records = [
            self._record(row, following[i] if i < len(following) else None)
            for i, row in enumerate(rows)
        ]
        self._ahead = [] if done else self._ahead[-1:]
        if done:
            self.close(conn)
            self.next_due = now + self.settings.poll_interval_ms / 1000
        return records

    def close(self, conn: Any) -> None:
        self._ahead = []
        if self._cursor is not None:
            try:
                self._cursor.close()
            finally:
                self._cursor = None
                conn.rollback()  # end the read's transaction: the next one sees new rows

    # -- the query -------------------------------------------------------------------------
    def _start(self, conn: Any) -> None:
        if not self.incrementing and self.settings.mode in (
            Mode.INCREMENTING,
            Mode.TIMESTAMP_INCREMENTING,
        ):
            self.incrementing = self._auto_increment_column(conn)
        initial = self.settings.timestamp_initial
        if "timestamp" not in self.offset and initial is not None and self.settings.timestamps:
            if initial == -1:  # the database's time, once: then the offset moves on from it
                now = self.sql.now(conn)
                initial = int(now.timestamp()) * 1000 + now.microsecond // 1000
            self.offset["timestamp"] = initial
        statement, params = self._statement(conn)
        self._cursor = self.sql.read_cursor(conn)
        self._cursor.execute(statement, params)
        self._schema = None

    def _auto_increment_column(self, conn: Any) -> str:
        """Confluent's default for an empty ``incrementing.column.name``: the table's first
        auto-incremented column."""
        found = self.sql.auto_increment_column(conn, self.table) if self.table else None
        conn.rollback()
        if not found:
            raise ConnectError(
                f"Cannot find an auto-incrementing column in the table {self.table}: set "
                "incrementing.column.name"
            )
        log.info("Using the auto-incrementing column %s of %s", found, self.table)
        return found

    def _columns(self, conn: Any, rows: Sequence[Sequence[Any]]) -> list[SqlColumn]:
        if self.table is not None and not self.sql.describes_results:
            return self.sql.describe(conn, self.table)
        return self.sql.result_columns(self._cursor, rows)

    def _value_schema(self, columns: Sequence[SqlColumn]) -> tuple[Schema, list[str]]:
        builder = SchemaBuilder.struct()
        if self.table is not None:
            builder = builder.name(self.table.table)
        names = []
        for column in columns:
            schema = field_schema(column, self.settings.numeric_mapping)
            if schema is None:
                log.warning("JDBC type %s of column %s not supported; it is left out",
                            column.sql_type, column.name)  # fmt: skip
                continue
            builder = builder.field(column.name, schema)
            names.append(column.name)
        return builder.build(), names

    def _statement(self, conn: Any) -> tuple[str, list[Any]]:
        """The mode's query from the current offset, as Confluent's criteria build it."""
        settings, sql = self.settings, self.sql
        base = (
            f"SELECT * FROM {sql.table(self.table)}"
            if self.table is not None
            else sql.text(settings.query)
        )
        mode = settings.mode
        if mode is Mode.BULK:
            return _suffixed(sql, base, settings), []
        incrementing = sql.ident(self.incrementing) if self.incrementing else ""
        timestamps = [sql.ident(c) for c in settings.timestamps]
        stamp = timestamps[0] if len(timestamps) == 1 else f"COALESCE({','.join(timestamps)})"
        mark = sql.placeholder
        glue = " WHERE "  # appended to a query as it is, as Confluent does
        if mode is Mode.INCREMENTING:
            where = f"{incrementing} > {mark} ORDER BY {incrementing} ASC"
            return _suffixed(sql, base + glue + where, settings), [self._last_incrementing()]
        end = self._end(conn)
        begin = self._last_timestamp()
        if mode is Mode.TIMESTAMP:
            where = f"{stamp} > {mark} AND {stamp} < {mark} ORDER BY {stamp} ASC"
            return _suffixed(sql, base + glue + where, settings), [begin, end]
        where = (
            f"{stamp} < {mark} AND (({stamp} = {mark} AND {incrementing} > {mark}) OR "
            f"{stamp} > {mark}) ORDER BY {stamp},{incrementing} ASC"
        )
        params = [end, begin, self._last_incrementing(), begin]
        return _suffixed(sql, base + glue + where, settings), params

    def _end(self, conn: Any) -> Any:
        now = self.sql.now(conn) - datetime.timedelta(milliseconds=self.settings.delay_ms)
        return self.sql.bind_timestamp(now, self._zone)

    def _last_incrementing(self) -> int:
        value = self.offset.get("incrementing")
        return -1 if value is None else int(value)

    def _last_timestamp(self) -> Any:
        millis = int(self.offset.get("timestamp") or 0)
        nanos = int(self.offset.get("timestamp_nanos") or (millis % 1000) * 1_000_000)
        moment = datetime.datetime.fromtimestamp(millis // 1000, datetime.UTC) + datetime.timedelta(
            microseconds=nanos // 1000
        )
        return self.sql.bind_timestamp(moment, self._zone)

    # -- rows ------------------------------------------------------------------------------
    def _record(self, row: Sequence[Any], following: Sequence[Any] | None) -> SourceRecord:
        schema = self._schema
        assert schema is not None
        names = self._cursor_names()
        by_name = dict(zip(names, row, strict=False))
        value = Struct(schema)
        for field in schema.fields:
            value.put(field.name, self._value(field.schema, by_name.get(field.name)))
        after = None if following is None else dict(zip(names, following, strict=False))
        self._advance(by_name, after)
        offset = None if self.settings.mode is Mode.BULK else dict(self.offset)
        return SourceRecord(dict(self.partition), offset, self.topic, value, value_schema=schema)

    def _cursor_names(self) -> list[str]:
        return [d[0] for d in self._cursor.description]

    def _value(self, schema: Schema, value: Any) -> Any:
        if value is None:
            return None
        name = schema.name
        if name == connect_logical.TIMESTAMP:
            return self._utc(value)
        if name == connect_logical.DECIMAL:
            return connect_logical.decimal_rescale(schema, decimal.Decimal(value))
        if name == connect_logical.DATE:
            return _day(value)
        if name == connect_logical.TIME and not isinstance(value, int | float):
            return self._time_of_day(value)
        kind = schema.type.name
        if kind == "BYTES":
            return bytes(value)
        if kind.startswith("INT"):
            return int(value)
        if kind.startswith("FLOAT"):
            return float(value)
        if kind == "BOOLEAN":
            return bool(value)
        if kind == "STRING" and not isinstance(value, str):
            return str(value)
        return value

    def _time_of_day(self, value: Any) -> datetime.time:
        """A TIME column's value (MySQL's come as a duration): wall-clock time in
        ``db.timezone``, as Confluent reads it, as a UTC time of day; text as it stands."""
        if isinstance(value, datetime.timedelta):
            value = (datetime.datetime.min + value % datetime.timedelta(days=1)).time()
        if isinstance(value, str):
            return datetime.time.fromisoformat(value)
        if value.tzinfo is None:
            value = value.replace(tzinfo=self._zone)
        moment = datetime.datetime.combine(datetime.date(1970, 1, 1), value)
        return moment.astimezone(datetime.UTC).time().replace(tzinfo=None)

    def _utc(self, value: Any) -> datetime.datetime:
        """A timestamp column's value as an instant: naive values are in ``db.timezone``;
        SQLite's numbers are epoch milliseconds, its text ISO 8601."""
        if isinstance(value, int | float):
            return datetime.datetime.fromtimestamp(value / 1000, datetime.UTC)
        if isinstance(value, str):
            value = datetime.datetime.fromisoformat(value)
        if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
            value = datetime.datetime.combine(value, datetime.time())
        if value.tzinfo is None:
            value = value.replace(tzinfo=self._zone)
        return value.astimezone(datetime.UTC)

    def _advance(self, row: dict[str, Any], following: dict[str, Any] | None) -> None:
        """The offset after this row, in the shape of the mode. In timestamp mode a row takes
        its timestamp as the offset only when the next row's is later (or it is the last):
        an offset never falls inside a run of equal timestamps, as in Confluent's."""
        mode = self.settings.mode
        if mode is Mode.BULK:
            return
        if mode in (Mode.INCREMENTING, Mode.TIMESTAMP_INCREMENTING):
            found = row.get(self.incrementing)
            if self.incrementing not in row:
                raise ConnectError(
                    f"Incrementing column {self.incrementing} not found in {','.join(row)}"
                )
            if found is None:
                raise ConnectError("Null value for incrementing column")
            self.offset["incrementing"] = int(found)
        if mode in (Mode.TIMESTAMP, Mode.TIMESTAMP_INCREMENTING):
            moment = self._stamp(row)
            if moment is None:
                return
            if mode is Mode.TIMESTAMP and following is not None:
                later = self._stamp(following)
                if later is not None and later <= moment:
                    return
            self.offset["timestamp"] = int(moment.timestamp()) * 1000 + moment.microsecond // 1000
            self.offset["timestamp_nanos"] = moment.microsecond * 1000

    def _stamp(self, row: dict[str, Any]) -> datetime.datetime | None:
        stamp = next((row[c] for c in self.settings.timestamps if row.get(c) is not None), None)
        return None if stamp is None else self._utc(stamp)


def _day(value: Any) -> datetime.date:
    """A DATE column's value, read in UTC as Confluent reads it: the day as it stands (SQLite's
    numbers are epoch milliseconds, its text ISO 8601)."""
    if isinstance(value, str):
        return datetime.date.fromisoformat(value[:10])
    if isinstance(value, int | float):
        return datetime.datetime.fromtimestamp(value / 1000, datetime.UTC).date()
    if isinstance(value, datetime.datetime):
        return value.date()
    return value


def _suffixed(sql: Dialect, statement: str, settings: SourceSettings) -> str:
    suffix = settings.query_suffix
    return f"{statement} {sql.text(suffix)}" if suffix else statement
