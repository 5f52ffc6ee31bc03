"""SQL dialects of the JDBC sink, as Confluent's PostgreSqlDatabaseDialect and
SqliteDatabaseDialect write it: column types, CREATE and ALTER TABLE, INSERT, upsert,
UPDATE and DELETE, identifier quoting, and the connection (psycopg 3, the standard
library's sqlite3).

A column is described by its field's Connect schema in JsonConverter's schema form (the
``connect.schema`` metadata of the frame's key and value columns)."""

from __future__ import annotations

import datetime
import logging
import re
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from connect_lite.api import ConnectError, LocalPath

log = logging.getLogger(__name__)

DECIMAL = "org.apache.kafka.connect.data.Decimal"
DATE = "org.apache.kafka.connect.data.Date"
TIME = "org.apache.kafka.connect.data.Time"
TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"
EPOCH_UNIT = "connect-lite.epoch.unit"
"""Set on a ``timestamp.fields.list`` column's form: "us" or "ns"."""


@dataclass(frozen=True)
class Column:
    """A column the sink writes: its name, its field's schema form, whether it is a key."""

    name: str
    form: dict[str, Any]
    primary: bool = False

    @property
    def optional(self) -> bool:
        return bool(self.form.get("optional")) and not self.primary


@dataclass(frozen=True)
class SqlColumn:
    """A column as the database describes it: its name, its SQL type (lower case), whether it
    may be null, and a NUMERIC's precision and scale."""

    name: str
    sql_type: str
    nullable: bool
    precision: int | None = None
    scale: int | None = None


@dataclass(frozen=True)
class TableId:
    """A table name as ``table.name.format`` gives it, split at dots: [[catalog.]schema.]table."""

    parts: tuple[str, ...]

    @staticmethod
    def parse(text: str) -> TableId:
        parts = tuple(p for p in text.split("."))
        if not parts or any(not p for p in parts) or len(parts) > 3:
            raise ConnectError(f"Invalid table name '{text}'")
        return TableId(parts)

    @property
    def table(self) -> str:
        return self.parts[-1]

    @property
    def schema(self) -> str | None:
        return self.parts[-2] if len(self.parts) >= 2 else None

    def __str__(self) -> str:
        return ".".join(self.parts)


class Dialect:
    """What the dialects share: statements in Confluent's shapes."""

    name = ""
    placeholder = "?"
    quote_char = '"'
    transient_codes: frozenset[Any] = frozenset()
    epoch_times = False
    """Whether timestamps, times and dates are bound as epoch milliseconds (SQLite's)."""
    describes_results = False
    """Whether a table's columns are read from its query's result rather than the catalog."""

    def __init__(self, quote: bool) -> None:
        self.quote = quote

    def text(self, sql: str) -> str:
        """SQL text (a query of the config, a quoted name) as it stands in a statement run with
        parameters: a ``%s`` driver reads ``%%`` as ``%``."""
        return sql.replace("%", "%%") if self.placeholder == "%s" else sql

    def execute(self, conn: Any, statement: str, params: Sequence[Any] = ()) -> Any:
        """Run a statement (always with parameters, so ``%%`` is ``%`` whatever it holds)."""
        return conn.execute(statement, params)

    # -- identifiers -----------------------------------------------------------------------
    def ident(self, name: str) -> str:
        """A quoted identifier (its quotes doubled); unquoted (``quote.sql.identifiers=never``)
        only a plain name is taken: a field name comes from whoever writes the topic."""
        if self.quote:
            q = self.quote_char
            return self.text(q + name.replace(q, q + q) + q)
        if not _PLAIN.fullmatch(name):
            raise ConnectError(
                f"The name {name!r} cannot be used without quotes in SQL: it is not a plain "
                "identifier (letters, digits, _ and $). Set quote.sql.identifiers=always"
            )
        return name

    def table(self, table: TableId) -> str:
        return ".".join(self.ident(p) for p in table.parts)

    # -- types -----------------------------------------------------------------------------
    def sql_type(self, form: dict[str, Any]) -> str:
        raise NotImplementedError

    def default_literal(self, form: dict[str, Any]) -> str | None:
        default = form.get("default")
        if default is None or form.get("name"):
            return None
        if isinstance(default, bool):
            return self.boolean_literal(default)
        if isinstance(default, int | float):
            return str(default)
        return self.text("'" + str(default).replace("'", "''") + "'")

    def boolean_literal(self, value: bool) -> str:
        return "1" if value else "0"

    def column_spec(self, column: Column) -> str:
        """``name TYPE``, then ``DEFAULT x`` (which takes the place of the nullability, as in
        Confluent's writeColumnSpec), else ``NULL`` or ``NOT NULL``."""
        spec = f"{self.ident(column.name)} {self.sql_type(column.form)}"
        default = self.default_literal(column.form)
        if default is not None:
            return f"{spec} DEFAULT {default}"
        return spec + (" NULL" if column.optional else " NOT NULL")

    # -- statements ------------------------------------------------------------------------
    def create_table(self, table: TableId, columns: Sequence[Column]) -> str:
        lines = [self.column_spec(c) for c in columns]
        keys = [self.ident(c.name) for c in columns if c.primary]
        if keys:
            lines.append(f"PRIMARY KEY({','.join(keys)})")
        return f"CREATE TABLE {self.table(table)} (\n" + ",\n".join(lines) + ")"

    def alter_table(self, table: TableId, columns: Sequence[Column]) -> list[str]:
        adds = ",\n".join(f"ADD {self.column_spec(c)}" for c in columns)
        return [f"ALTER TABLE {self.table(table)} \n{adds}"]

    insert_spacing = ""
    """PostgreSQL's dialect writes ``INSERT INTO t (a) VALUES (?)``; the generic one has no
    spaces there."""

    def insert(self, table: TableId, columns: Sequence[Column]) -> str:
        names = ",".join(self.ident(c.name) for c in columns)
        marks = ",".join(self.placeholder for _ in columns)
        space = self.insert_spacing
        return f"INSERT INTO {self.table(table)}{space}({names}) VALUES{space}({marks})"

    def upsert(self, table: TableId, keys: Sequence[Column], others: Sequence[Column]) -> str:
        raise NotImplementedError

    def update(self, table: TableId, keys: Sequence[Column], others: Sequence[Column]) -> str:
        sets = ", ".join(f"{self.ident(c.name)} = {self.placeholder}" for c in others)
        where = " AND ".join(f"{self.ident(c.name)} = {self.placeholder}" for c in keys)
        return f"UPDATE {self.table(table)} SET {sets} WHERE {where}"

    bulk_rows = 0
    """From how many rows ``bulk_write`` is worth it (0: never; executemany then)."""

    def bulk_write(
        self,
        conn: Any,
        table: TableId,
        keys: Sequence[Column],
        others: Sequence[Column],
        upsert: bool,
        rows: Sequence[Sequence[Any]],
    ) -> None:
        """Write rows in offset order as ``insert`` (or ``upsert``) statements would, leaving
        the table as they would (the last row of a key wins), in the open transaction."""
        raise NotImplementedError

    def delete(self, table: TableId, keys: Sequence[Column]) -> str:
        where = " AND ".join(f"{self.ident(c.name)} = {self.placeholder}" for c in keys)
        return f"DELETE FROM {self.table(table)} WHERE {where}"

    # -- the database ----------------------------------------------------------------------
    def connect(self, url: str, user: str | None, password: str | None) -> Any:
        raise NotImplementedError

    def driver(self, module: str, extra: str) -> Any:
        """The dialect's Python driver, imported; else what to install (validate says so
        first)."""
        import importlib

        try:
            return importlib.import_module(module)
        except ImportError as error:
            raise ConnectError(
                f"The {self.name} needs the Python driver '{module}': "
                f"pip install 'connect-lite[{extra}]'"
            ) from error

    @staticmethod
    def login(params: dict[str, Any], user: str | None, password: str | None) -> dict[str, Any]:
        """The URL's connection keywords with ``connection.user`` and ``connection.password``
        in place of the URL's, where they are set."""
        return {**params, **({"user": user} if user is not None else {}),
                **({"password": password} if password is not None else {})}  # fmt: skip

    def begin(self, conn: Any) -> None:
        """Open a transaction, if none is open (psycopg opens one with the first statement)."""

    def connect_retrying(self, settings: Any) -> Any:
        """A connection for ``settings`` (a Connection's fields), tried
        ``connection.attempts`` times ``connection.backoff.ms`` apart."""
        for attempt in range(1, settings.attempts + 1):
            try:
                return self.connect(settings.url, settings.user, settings.password)
            except Exception as error:
                if attempt >= settings.attempts:
                    raise
                log.info(
                    "Unable to connect to database on attempt %d/%d (%s). Will retry in %d ms.",
                    attempt, settings.attempts, redact_url(str(error)), settings.backoff_ms,
                )  # fmt: skip
                time.sleep(settings.backoff_ms / 1000)
        raise AssertionError("unreachable")

    def display(self, conn: Any, table: TableId) -> str:
        """The table as Confluent's messages show it (TableId.toString: always quoted)."""
        return ".".join(f'"{p}"' for p in table.parts)

    def columns_of(self, conn: Any, table: TableId) -> set[str] | None:
        """The table's column names, or None when it does not exist."""
        raise NotImplementedError

    def is_transient(self, error: BaseException) -> bool:
        """Whether an error may pass by itself (connection lost, deadlock, serialization)."""
        raise NotImplementedError

    def is_database_error(self, error: BaseException) -> bool:
        """Whether the driver raised it (an SQLException, in Confluent's terms)."""
        raise NotImplementedError

    # -- the source's side -----------------------------------------------------------------
    def list_tables(
        self, conn: Any, schema_pattern: str | None, types: Sequence[str]
    ) -> list[TableId]:
        """The tables (and views, when ``types`` names VIEW) a source may copy."""
        raise NotImplementedError

    def describe(self, conn: Any, table: TableId) -> list[SqlColumn]:
        """The table's columns, in order."""
        raise NotImplementedError

    def now(self, conn: Any) -> datetime.datetime:
        """The database's current time (UTC), the end of a timestamp query's range."""
        raise NotImplementedError

    def auto_increment_column(self, conn: Any, table: TableId) -> str | None:
        """The table's first auto-incremented column, as the driver reports
        ``IS_AUTOINCREMENT`` (an empty ``incrementing.column.name`` picks it)."""
        raise NotImplementedError

    def table_key(self, table: TableId) -> str:
        """The table's id in a source partition, as Confluent's dialect writes it."""
        return str(table)

    def read_cursor(self, conn: Any) -> Any:
        """A cursor whose rows come as they are fetched (a query stays open across polls)."""
        return conn.cursor()

    def result_columns(self, cursor: Any, rows: Sequence[Sequence[Any]]) -> list[SqlColumn]:
        """A query's columns, from what the driver says of them (and the first rows)."""
        raise NotImplementedError

    def bind_timestamp(self, moment: datetime.datetime, zone: Any) -> Any:
        """An instant as a timestamp query's parameter: wall-clock time in ``db.timezone``."""
        return moment.astimezone(zone).replace(tzinfo=None)

    def isolate(self, conn: Any, mode: str) -> None:
        """``transaction.isolation.mode`` for a source's reads (DEFAULT: the database's).
        SQLite's transactions are serializable whatever is asked: the strongest level."""

    def prepare(self, conn: Any, timezone: str) -> None:
        """Set up a connection: its session time zone, ``db.timezone`` (a naive timestamp
        bound to a ``timestamptz`` column is read in it)."""


class PostgreSqlDialect(Dialect):
    name = "PostgreSqlDatabaseDialect"
    placeholder = "%s"
    insert_spacing = " "
    transient_codes = frozenset(("40001", "40P01", "55P03", "57P01", "57P02", "57P03", "53300"))

    _TYPES = {
        "int8": "SMALLINT",
        "int16": "SMALLINT",
        "int32": "INT",
        "int64": "BIGINT",
        "float32": "REAL",
        "float64": "DOUBLE PRECISION",
        "boolean": "BOOLEAN",
        "string": "TEXT",
        "bytes": "BYTEA",
    }
    _LOGICAL = {DECIMAL: "DECIMAL", DATE: "DATE", TIME: "TIME", TIMESTAMP: "TIMESTAMP"}

    def sql_type(self, form: dict[str, Any]) -> str:
        logical = _LOGICAL_TYPES.get(form.get("name") or "")
        if logical:
            return self._LOGICAL[logical]
        kind = form.get("type", "")
        if kind == "array":
            return self.sql_type(form.get("items") or {}) + "[]"
        if kind in self._TYPES:
            return self._TYPES[kind]
        raise ConnectError(f"{self.name} does not support the type {kind.upper()}")

    def boolean_literal(self, value: bool) -> str:
        return "TRUE" if value else "FALSE"

    def table(self, table: TableId) -> str:
        """Unquoted (``quote.sql.identifiers=never``), PostgreSQL's dialect lowercases the
        table's name (not its schema's)."""
        if self.quote:
            return super().table(table)
        return ".".join((*table.parts[:-1], table.table.lower()))

    def upsert(self, table: TableId, keys: Sequence[Column], others: Sequence[Column]) -> str:
        conflict = ",".join(self.ident(c.name) for c in keys)
        insert = self.insert(table, [*keys, *others])
        if not others:
            return f"{insert} ON CONFLICT ({conflict}) DO NOTHING"
        sets = ",".join(f"{self.ident(c.name)}=EXCLUDED.{self.ident(c.name)}" for c in others)
        return f"{insert} ON CONFLICT ({conflict}) DO UPDATE SET {sets}"

    bulk_rows = 200

    def bulk_write(
        self,
        conn: Any,
        table: TableId,
        keys: Sequence[Column],
        others: Sequence[Column],
        upsert: bool,
        rows: Sequence[Sequence[Any]],
    ) -> None:
        """COPY: an insert straight into the table; an upsert into a temporary table, then one
        ``INSERT ... SELECT DISTINCT ON (keys) ... ON CONFLICT`` of each key's last row (about
        three times the rows a second of ``executemany`` here)."""
        columns = ",".join(self.ident(c.name) for c in (*keys, *others))
        if not upsert:
            self._copy(conn, f"COPY {self.table(table)} ({columns}) FROM STDIN", rows)
            return
        stage = self.ident("connect_lite_stage")
        self.execute(conn, f"CREATE TEMPORARY TABLE {stage} ON COMMIT DROP AS SELECT {columns}, "
                           f"0::bigint AS {self.ident('connect_lite_seq')} FROM "
                           f"{self.table(table)} WITH NO DATA")  # fmt: skip
        numbered = [(*row, i) for i, row in enumerate(rows)]
        copy = f"COPY {stage} ({columns},{self.ident('connect_lite_seq')}) FROM STDIN"
        self._copy(conn, copy, numbered)
        key_names = ",".join(self.ident(c.name) for c in keys)
        last = (
            f"INSERT INTO {self.table(table)} ({columns}) SELECT DISTINCT ON ({key_names}) "
            f"{columns} FROM {stage} ORDER BY {key_names}, "
            f"{self.ident('connect_lite_seq')} DESC"
        )
        self.execute(conn, self.upsert(table, keys, others).replace(
            self.insert(table, [*keys, *others]), last, 1))  # fmt: skip
        self.execute(conn, f"DROP TABLE {stage}")

    def _copy(self, conn: Any, statement: str, rows: Sequence[Sequence[Any]]) -> None:
        """COPY rows in (the statement has no parameters: a name's ``%%`` is ``%`` again)."""
        with conn.cursor() as cursor, cursor.copy(statement.replace("%%", "%")) as copy:
            for row in rows:
                copy.write_row(row)

    def connect(self, url: str, user: str | None, password: str | None) -> Any:
        psycopg = self.driver("psycopg", "postgres")
        return psycopg.connect(**self.login(postgres_params(url), user, password),
                               autocommit=False)  # fmt: skip

    def display(self, conn: Any, table: TableId) -> str:
        """With the database and schema of the connection where the name leaves them out."""
        database, schema = conn.execute("SELECT current_database(), current_schema()").fetchone()
        name = table.table if self.quote else table.table.lower()
        parts = (*(table.parts[:-2] if len(table.parts) == 3 else (database,)),
                 table.schema or schema, name)  # fmt: skip
        return ".".join(f'"{p}"' for p in parts)

    @staticmethod
    def _where_table(table: TableId, name: str) -> tuple[str, list[Any]]:
        """The information_schema condition on the table ``name`` in the table's schema (the
        connection's current one when the name has none), and its parameters."""
        if table.schema is None:
            return "table_schema = current_schema() AND table_name = %s", [name]
        return "table_schema = %s AND table_name = %s", [table.schema, name]

    def columns_of(self, conn: Any, table: TableId) -> set[str] | None:
        name = table.table if self.quote else table.table.lower()
        where, args = self._where_table(table, name)
        rows = conn.execute(
            f"SELECT column_name FROM information_schema.columns WHERE {where}", args
        ).fetchall()
        if rows:
            return {r[0] for r in rows}
        exists = conn.execute(
            f"SELECT 1 FROM information_schema.tables WHERE {where} AND table_type = 'BASE TABLE'",
            args,
        ).fetchall()
        return set() if exists else None

    def list_tables(
        self, conn: Any, schema_pattern: str | None, types: Sequence[str]
    ) -> list[TableId]:
        return _pg_list_tables(conn, schema_pattern, types)

    def describe(self, conn: Any, table: TableId) -> list[SqlColumn]:
        where, args = self._where_table(table, table.table)
        rows = conn.execute(
            "SELECT column_name, data_type, is_nullable, numeric_precision, numeric_scale "
            f"FROM information_schema.columns WHERE {where} ORDER BY ordinal_position",
            args,
        ).fetchall()
        return [SqlColumn(n, t.lower(), nullable == "YES", p, sc) for n, t, nullable, p, sc in rows]

    def now(self, conn: Any) -> datetime.datetime:
        found = conn.execute("SELECT CURRENT_TIMESTAMP").fetchone()[0]
        return found.astimezone(datetime.UTC)

    def auto_increment_column(self, conn: Any, table: TableId) -> str | None:
        """A serial (its default a ``nextval``) or identity column, as pgjdbc reports them."""
        where, args = self._where_table(table, table.table)
        found = conn.execute(
            f"SELECT column_name FROM information_schema.columns WHERE {where} AND "
            "(column_default LIKE 'nextval(%%' OR is_identity = 'YES') "
            "ORDER BY ordinal_position LIMIT 1",
            args,
        ).fetchone()
        return None if found is None else str(found[0])

    def table_key(self, table: TableId) -> str:
        """``schema.table``, without the database, as Confluent's PostgreSQL dialect."""
        return ".".join(table.parts[-2:])

    def read_cursor(self, conn: Any) -> Any:
        """A server-side cursor: rows stream as they are fetched."""
        import uuid

        return conn.cursor(name=f"connect_lite_{uuid.uuid4().hex[:12]}")

    def result_columns(self, cursor: Any, rows: Sequence[Sequence[Any]]) -> list[SqlColumn]:
        types = cursor.connection.adapters.types
        found = []
        for column in cursor.description:
            info = types.get(column.type_code)
            name = info.name if info is not None else ""
            found.append(SqlColumn(column.name, _PG_TYPE_NAMES.get(name, name), True,
                                   column.precision, column.scale))  # fmt: skip
        return found

    def prepare(self, conn: Any, timezone: str) -> None:
        conn.execute("SELECT set_config('TimeZone', %s, false)", [timezone])
        conn.commit()

    def isolate(self, conn: Any, mode: str) -> None:
        if mode in ISOLATION_LEVELS:
            conn.execute(f"SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL "
                         f"{ISOLATION_LEVELS[mode]}")  # fmt: skip
            conn.commit()

    def is_database_error(self, error: BaseException) -> bool:
        import psycopg

        return isinstance(error, psycopg.Error)

    def is_transient(self, error: BaseException) -> bool:
        """Connection losses, deadlocks, serialization failures, too many connections; not a
        refused login (28xxx) or a missing database (3D000), which retrying cannot mend."""
        import psycopg

        code = getattr(error, "sqlstate", None)
        text = str(error).lower()
        if (code or "").startswith("28") or code == "3D000" or _PERMANENT.search(text):
            return False
        if isinstance(error, psycopg.OperationalError | psycopg.InterfaceError):
            return code is None or code in self.transient_codes or code.startswith("08")
        return code is not None and (code in self.transient_codes or code.startswith("08"))


_PG_TYPE_NAMES = {
    "int2": "smallint",
    "int4": "integer",
    "int8": "bigint",
    "float4": "real",
    "float8": "double precision",
    "bool": "boolean",
    "timestamptz": "timestamp with time zone",
    "timetz": "time with time zone",
}


def _pg_list_tables(conn: Any, schema_pattern: str | None, types: Sequence[str]) -> list[TableId]:
    kinds = [{"TABLE": "BASE TABLE", "VIEW": "VIEW"}[t] for t in types if t in ("TABLE", "VIEW")]
    rows = conn.execute(
        "SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema "
        "NOT IN ('pg_catalog', 'information_schema') AND table_schema NOT LIKE 'pg_toast%%' "
        "AND table_schema LIKE %s AND table_type = ANY(%s) ORDER BY table_schema, table_name",
        [schema_pattern or "%", kinds],
    ).fetchall()
    return [TableId((schema, name)) for schema, name in rows]


class SqliteDialect(Dialect):
    name = "SqliteDatabaseDialect"
    placeholder = "?"
    epoch_times = True

    _TYPES = {
        "int8": "INTEGER",
        "int16": "INTEGER",
        "int32": "INTEGER",
        "int64": "INTEGER",
        "float32": "REAL",
        "float64": "REAL",
        "boolean": "INTEGER",
        "string": "TEXT",
        "bytes": "BLOB",
    }

    def sql_type(self, form: dict[str, Any]) -> str:
        if form.get("name") in _LOGICAL_TYPES:
            return "NUMERIC"
        kind = form.get("type", "")
        if kind in self._TYPES:
            return self._TYPES[kind]
        raise ConnectError(f"{self.name} does not support the type {kind.upper()}")

    def begin(self, conn: Any) -> None:
        """sqlite3 opens a transaction only before a data statement, not a SAVEPOINT."""
        if not conn.in_transaction:
            conn.execute("BEGIN")

    def alter_table(self, table: TableId, columns: Sequence[Column]) -> list[str]:
        """SQLite adds one column per statement."""
        return [f"ALTER TABLE {self.table(table)} ADD {self.column_spec(c)}" for c in columns]

    def upsert(self, table: TableId, keys: Sequence[Column], others: Sequence[Column]) -> str:
        return "INSERT OR REPLACE" + self.insert(table, [*keys, *others])[len("INSERT") :]

    def connect(self, url: str, user: str | None, password: str | None) -> Any:
        """The file the URL names, as LocalPath.JDBC reads it (the worker holds that file to
        connector.allowed.paths): only an SQLite URL is taken."""
        if not url.lower().startswith("jdbc:sqlite:"):
            raise ConnectError(f"Not an SQLite JDBC URL: {redact_url(url)}")
        found = LocalPath.JDBC.paths(url)
        path = found[0] if found else ":memory:"
        if not found and url.split("?", 1)[0].lower() != "jdbc:sqlite::memory:":
            raise ConnectError(f"Not an SQLite JDBC URL: {redact_url(url)}")
        return sqlite3.connect(path, timeout=30, isolation_level="DEFERRED")

    def columns_of(self, conn: Any, table: TableId) -> set[str] | None:
        schema = f"{self.ident(table.schema)}." if table.schema else ""
        rows = conn.execute(f"PRAGMA {schema}table_info({self.ident(table.table)})").fetchall()
        return {r[1] for r in rows} if rows else None

    def list_tables(
        self, conn: Any, schema_pattern: str | None, types: Sequence[str]
    ) -> list[TableId]:
        kinds = [t.lower() for t in types if t in ("TABLE", "VIEW")]
        marks = ",".join("?" for _ in kinds) or "''"
        rows = conn.execute(
            f"SELECT name FROM sqlite_master WHERE type IN ({marks}) AND name NOT LIKE "
            "'sqlite_%' ORDER BY name",
            kinds,
        ).fetchall()
        return [TableId((name,)) for (name,) in rows]

    def describe(self, conn: Any, table: TableId) -> list[SqlColumn]:
        """The declared types as Confluent's SQLite driver reports them (INTEGER is 32 bits,
        INT 64: the driver calls INT unsigned), NOT NULL and primary-key columns required."""
        rows = conn.execute(f"PRAGMA table_info({self.ident(table.table)})").fetchall()
        found = []
        for row in rows:
            declared = (row[2] or "").upper().split("(")[0].strip()
            kind = _SQLITE_TYPES.get(declared, declared.lower())
            found.append(SqlColumn(row[1], kind, not row[3] and not row[5]))
        return found

    def now(self, conn: Any) -> datetime.datetime:
        return datetime.datetime.now(datetime.UTC)

    def auto_increment_column(self, conn: Any, table: TableId) -> str | None:
        """The INTEGER PRIMARY KEY of a table declared AUTOINCREMENT, as SQLite's driver
        reports it."""
        found = conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", [table.table]
        ).fetchone()
        if found is None or "AUTOINCREMENT" not in str(found[0]).upper():
            return None
        rows = conn.execute(f"PRAGMA table_info({self.ident(table.table)})").fetchall()
        keys = [r for r in rows if r[5]]
        if len(keys) == 1 and str(keys[0][2]).upper() == "INTEGER":
            return str(keys[0][1])
        return None

    def result_columns(self, cursor: Any, rows: Sequence[Sequence[Any]]) -> list[SqlColumn]:
        """sqlite3 says nothing of a query's types: each column's comes from its first
        non-null value in the first rows (text when all are null)."""
        found = []
        for i, column in enumerate(cursor.description):
            sample = next((r[i] for r in rows if r[i] is not None), None)
            kind = {int: "bigint", float: "double precision", bytes: "blob"}.get(
                type(sample), "text"
            )
            found.append(SqlColumn(column[0], kind, True))
        return found

    def bind_timestamp(self, moment: datetime.datetime, zone: Any) -> Any:
        """Epoch milliseconds, as Confluent's SQLite driver stores timestamps."""
        return int(moment.timestamp() * 1000)

    def is_database_error(self, error: BaseException) -> bool:
        return isinstance(error, sqlite3.Error)

    def is_transient(self, error: BaseException) -> bool:
        text = str(error).lower()
        return isinstance(error, sqlite3.OperationalError) and (
            "locked" in text or "busy" in text or "disk i/o" in text
        )


_PERMANENT = re.compile(
    r"password authentication failed|authentication failed|role .* does not exist|"
    r"database .* does not exist|no pg_hba.conf entry"
)
ISOLATION_LEVELS = {
    "READ_UNCOMMITTED": "READ UNCOMMITTED",
    "READ_COMMITTED": "READ COMMITTED",
    "REPEATABLE_READ": "REPEATABLE READ",
    "SERIALIZABLE": "SERIALIZABLE",
}
"""``transaction.isolation.mode`` values as SQL's isolation levels (PostgreSQL, MySQL)."""
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")

_SQLITE_TYPES = {
    "INTEGER": "integer",
    "INT": "bigint",
    "MEDIUMINT": "bigint",
    "SMALLINT": "integer",
    "INT2": "integer",
    "TINYINT": "smallint",
    "BIGINT": "bigint",
    "INT8": "bigint",
    "UNSIGNED BIG INT": "bigint",
    "REAL": "real",
    "DOUBLE": "double precision",
    "FLOAT": "double precision",
    "BOOLEAN": "boolean",
    "DATETIME": "date",
    "": "text",
}
"""SQLite declared types as the SQL types Confluent's driver reports."""

_LOGICAL_TYPES = {DECIMAL: DECIMAL, DATE: DATE, TIME: TIME, TIMESTAMP: TIMESTAMP}


_JDBC_PG = re.compile(r"^jdbc:postgresql:(?://(?P<hosts>[^/?]*))?/?(?P<db>[^?]*)(?:\?(?P<q>.*))?$")


def postgres_params(url: str) -> dict[str, Any]:
    """psycopg's connection keywords for a ``jdbc:postgresql:`` URL (host, port, database,
    and the URL's ``user``, ``password``, ``sslmode`` and ``connectTimeout`` parameters)."""
    found = _JDBC_PG.match(url.strip())
    if not found:
        raise ConnectError(f"Not a PostgreSQL JDBC URL: {redact_url(url)}")
    params: dict[str, Any] = {}
    hosts = found.group("hosts") or ""
    if hosts:
        parsed = urlsplit("//" + hosts)
        params["host"] = parsed.hostname or "localhost"
        if parsed.port:
            params["port"] = parsed.port
    params["dbname"] = unquote(found.group("db") or "") or None
    query = {k: v[-1] for k, v in parse_qs(found.group("q") or "").items()}
    for key, value in query.items():
        if key in _PG_PARAMS:
            params[_PG_PARAMS[key]] = value
        elif key == "ssl":  # pgjdbc's ssl=true verifies the server: verify-full
            if value.lower() == "true" and "sslmode" not in query:
                params["sslmode"] = "verify-full"
        elif key == "currentSchema":
            params["options"] = f"-csearch_path={value}"
        else:
            raise ConnectError(
                f"connect-lite does not take the PostgreSQL JDBC URL parameter {key}; it takes "
                + ", ".join(sorted([*_PG_PARAMS, "ssl", "currentSchema"]))
            )
    return {k: v for k, v in params.items() if v is not None}


_PG_PARAMS = {
    "user": "user",
    "password": "password",
    "sslmode": "sslmode",
    "sslrootcert": "sslrootcert",
    "sslcert": "sslcert",
    "sslkey": "sslkey",
    "connectTimeout": "connect_timeout",
    "ApplicationName": "application_name",
    "applicationName": "application_name",
}
"""pgjdbc URL parameters and their libpq names."""


def redact_url(url: str) -> str:
    """The URL with its passwords hidden (a ``password=`` parameter, a ``user:password@``),
    for messages and logs."""
    hidden = re.sub(r"(?i)(password=)[^&;,)]*", r"\1[hidden]", url)
    return re.sub(r"(://[^:/@]*:)([^@/]*)@", r"\1[hidden]@", hidden)
