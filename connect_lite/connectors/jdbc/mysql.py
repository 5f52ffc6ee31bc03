"""The MySQL and MariaDB dialect, as Confluent's MySqlDatabaseDialect writes it (backquoted
identifiers, ``insert ... on duplicate key update`` upserts, its column types), over PyMySQL
(``pip install 'connect-lite[mysql]'``).

A ``jdbc:mysql:`` or ``jdbc:mariadb:`` URL's host, port, database and the Connector/J
parameters that matter to a Python client become PyMySQL's connection keywords
(``mysql_params``). MySQL keeps tables in databases (JDBC catalogs): a source partition names
a table ``database.table``, as Confluent's does."""

from __future__ import annotations

import datetime
import functools
import logging
import re
import zoneinfo
from collections.abc import Sequence
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from connect_lite.api import ConnectError

from .dialects import (
    DATE,
    DECIMAL,
    EPOCH_UNIT,
    ISOLATION_LEVELS,
    TIME,
    TIMESTAMP,
    Column,
    Dialect,
    SqlColumn,
    TableId,
    redact_url,
)

log = logging.getLogger(__name__)


class MySqlDialect(Dialect):
    name = "MySqlDatabaseDialect"
    placeholder = "%s"
    quote_char = "`"
    transient_codes = frozenset((1040, 1053, 1205, 1213, 1927, 2003, 2006, 2013, 2055))
    """Too many connections, shutdown, lock wait timeout, deadlock, connection killed, can't
    connect, server gone away, connection lost."""

    _TYPES = {
        "int8": "TINYINT",
        "int16": "SMALLINT",
        "int32": "INT",
        "int64": "BIGINT",
        "float32": "FLOAT",
        "float64": "DOUBLE",
        "boolean": "TINYINT",
        "string": "TEXT",
        "key string": "VARCHAR(256)",
        "bytes": "VARBINARY(1024)",
    }

    def sql_type(self, form: dict[str, Any]) -> str:
        logical = form.get("name")
        if logical == DECIMAL:  # MySQL's largest precision is 65
            return f"DECIMAL(65,{int((form.get('parameters') or {}).get('scale', 0))})"
        if logical == DATE:
            return "DATE"
        if logical == TIME:
            return "TIME(3)"
        if logical == TIMESTAMP:  # timestamp.fields.list: DATETIME(6), as Confluent's
            return "DATETIME(6)" if form.get(EPOCH_UNIT) else "DATETIME(3)"
        kind = form.get("type", "")
        if kind in self._TYPES:
            return self._TYPES[kind]
        raise ConnectError(f"{self.name} does not support the type {kind.upper()}")

    def column_spec(self, column: Column) -> str:
        """As Confluent's, but a STRING key column is ``VARCHAR(256)``: MySQL refuses a TEXT
        column in a primary key (Confluent's DDL fails there, with pk.mode=kafka too)."""
        form = column.form
        if column.primary and form.get("type") == "string" and not form.get("name"):
            return super().column_spec(Column(column.name, {**form, "type": "key string"}, True))
        return super().column_spec(column)

    def upsert(self, table: TableId, keys: Sequence[Column], others: Sequence[Column]) -> str:
        """``insert into t(a,b) values(?,?) on duplicate key update b=values(b)`` (the keys
        themselves when there is nothing else)."""
        names = ",".join(self.ident(c.name) for c in (*keys, *others))
        marks = ",".join(self.placeholder for _ in (*keys, *others))
        sets = ",".join(
            f"{self.ident(c.name)}=values({self.ident(c.name)})" for c in (others or keys)
        )
        return (
            f"insert into {self.table(table)}({names}) values({marks}) "
            f"on duplicate key update {sets}"
        )

    # -- the database ----------------------------------------------------------------------
    def connect(self, url: str, user: str | None, password: str | None) -> Any:
        pymysql = self.driver("pymysql", "mysql")
        params = self.login(mysql_params(url), user, password)
        from pymysql.constants import FIELD_TYPE
        from pymysql.converters import conversions

        converters = dict(conversions)  # a YEAR is a DATE, January 1st, as Connector/J's
        converters[FIELD_TYPE.YEAR] = lambda text: datetime.date(int(text), 1, 1)
        return pymysql.connect(**params, autocommit=False, charset="utf8mb4", conv=converters)

    def execute(self, conn: Any, statement: str, params: Sequence[Any] = ()) -> Any:
        cursor = conn.cursor()
        cursor.execute(statement, tuple(params))
        return cursor

    def display(self, conn: Any, table: TableId) -> str:
        """With the connection's database where the name leaves it out."""
        parts = table.parts
        if len(parts) == 1:
            database = self.execute(conn, "SELECT DATABASE()").fetchone()[0]
            parts = (*((database,) if database else ()), table.table)
        return ".".join(f'"{p}"' for p in parts)

    def _where_table(self, table: TableId) -> tuple[str, list[Any]]:
        database = table.parts[-2] if len(table.parts) >= 2 else None
        if database is None:
            return "table_schema = DATABASE() AND table_name = %s", [table.table]
        return "table_schema = %s AND table_name = %s", [database, table.table]

    def columns_of(self, conn: Any, table: TableId) -> set[str] | None:
        where, args = self._where_table(table)
        rows = self.execute(
            conn, f"SELECT column_name FROM information_schema.columns WHERE {where}", args
        ).fetchall()
        if rows:
            return {r[0] for r in rows}
        exists = self.execute(
            conn,
            f"SELECT 1 FROM information_schema.tables WHERE {where} AND table_type = 'BASE TABLE'",
            args,
        ).fetchall()
        return set() if exists else None

    def is_database_error(self, error: BaseException) -> bool:
        import pymysql

        return isinstance(error, pymysql.err.MySQLError)

    def is_transient(self, error: BaseException) -> bool:
        """Connection losses, deadlocks, lock waits, too many connections; not a refused login
        (1044, 1045) or a missing database (1049), which retrying cannot mend."""
        import pymysql

        code = error.args[0] if error.args and isinstance(error.args[0], int) else None
        if isinstance(error, pymysql.err.InterfaceError):
            return True  # the connection is closed
        if not isinstance(error, pymysql.err.MySQLError):
            return isinstance(error, ConnectionError | TimeoutError)
        return code in self.transient_codes

    # -- the source's side -----------------------------------------------------------------
    def list_tables(
        self, conn: Any, schema_pattern: str | None, types: Sequence[str]
    ) -> list[TableId]:
        """The connection's database's tables as ``database.table`` (JDBC catalogs: the
        schema pattern has no part in MySQL's listing, as in Connector/J's)."""
        named = {"TABLE": "BASE TABLE", "VIEW": "VIEW"}
        kinds = [named[t] for t in types if t in named]
        if not kinds:
            return []
        marks = ",".join("%s" for _ in kinds)
        rows = self.execute(
            conn,
            "SELECT table_schema, table_name FROM information_schema.tables WHERE "
            "table_schema = DATABASE() AND table_type IN "
            f"({marks}) ORDER BY table_schema, table_name",
            kinds,
        ).fetchall()
        return [TableId((database, name)) for database, name in rows]

    def describe(self, conn: Any, table: TableId) -> list[SqlColumn]:
        where, args = self._where_table(table)
        rows = self.execute(
            conn,
            "SELECT column_name, data_type, column_type, is_nullable, numeric_precision, "
            f"numeric_scale FROM information_schema.columns WHERE {where} "
            "ORDER BY ordinal_position",
            args,
        ).fetchall()
        return [
            SqlColumn(name, _jdbc_type(kind.lower(), full.lower()), nullable == "YES",
                      precision, scale)
            for name, kind, full, nullable, precision, scale in rows
        ]  # fmt: skip

    describes_results = True
    """A table query's columns come from its result, as Confluent reads them (an unbuffered
    cursor leaves the connection busy until its rows are read)."""

    def now(self, conn: Any) -> datetime.datetime:
        found = self.execute(conn, "SELECT UTC_TIMESTAMP(6)").fetchone()[0]
        return found.replace(tzinfo=datetime.UTC)

    def auto_increment_column(self, conn: Any, table: TableId) -> str | None:
        where, args = self._where_table(table)
        found = self.execute(
            conn,
            f"SELECT column_name FROM information_schema.columns WHERE {where} AND extra LIKE "
            "'%%auto_increment%%' ORDER BY ordinal_position LIMIT 1",
            args,
        ).fetchone()
        return None if found is None else str(found[0])

    def table_key(self, table: TableId) -> str:
        """``database.table``, as Confluent's MySQL dialect writes it."""
        return ".".join(table.parts[-2:])

    def read_cursor(self, conn: Any) -> Any:
        """An unbuffered cursor: rows stream as they are fetched."""
        import pymysql.cursors

        return conn.cursor(pymysql.cursors.SSCursor)

    def result_columns(self, cursor: Any, rows: Sequence[Sequence[Any]]) -> list[SqlColumn]:
        from pymysql.constants import FLAG

        found = []
        for field in cursor._result.fields:  # PyMySQL's column definitions
            kind = _field_types().get(field.type_code, "")
            if field.type_code in _TEXT_OR_BLOB:
                kind = "varbinary" if field.charsetnr == _BINARY_CHARSET else "text"
            unsigned = bool(field.flags & FLAG.UNSIGNED)
            if unsigned and kind in _UNSIGNED:
                kind = _UNSIGNED[kind]
            precision = None
            if kind == "decimal":
                signs = (0 if unsigned else 1) + (1 if field.scale else 0)
                precision = field.length - signs
            nullable = not field.flags & FLAG.NOT_NULL
            found.append(SqlColumn(field.name, kind, nullable, precision, field.scale))
        return found

    def bind_timestamp(self, moment: datetime.datetime, zone: Any) -> Any:
        return moment.astimezone(zone).replace(tzinfo=None)

    def prepare(self, conn: Any, timezone: str) -> None:
        """The session time zone: ``db.timezone`` when the server knows the name, else its
        present offset from UTC (a server without time zone tables knows only offsets)."""
        import pymysql

        try:
            self.execute(conn, "SET time_zone = %s", [timezone])
        except pymysql.err.MySQLError as error:
            if not error.args or error.args[0] != _UNKNOWN_TIME_ZONE:
                raise
            offset = datetime.datetime.now(zoneinfo.ZoneInfo(timezone)).strftime("%z")
            self.execute(conn, "SET time_zone = %s", [f"{offset[:3]}:{offset[3:]}"])
        conn.commit()

    def isolate(self, conn: Any, mode: str) -> None:
        if mode in ISOLATION_LEVELS:
            level = ISOLATION_LEVELS[mode]
            self.execute(conn, f"SET SESSION TRANSACTION ISOLATION LEVEL {level}")
            conn.commit()


_UNKNOWN_TIME_ZONE = 1298
_BINARY_CHARSET = 63


@functools.cache
def _field_types() -> dict[int, str]:
    """PyMySQL's column type codes as the JDBC types Connector/J reports."""
    from pymysql.constants import FIELD_TYPE as F

    return {
        F.TINY: "tinyint", F.SHORT: "smallint", F.INT24: "integer", F.LONG: "integer",
        F.LONGLONG: "bigint", F.FLOAT: "real", F.DOUBLE: "double precision",
        F.DECIMAL: "decimal", F.NEWDECIMAL: "decimal", F.DATE: "date", F.NEWDATE: "date",
        F.YEAR: "date", F.TIME: "time", F.DATETIME: "timestamp", F.TIMESTAMP: "timestamp",
        F.VARCHAR: "varchar", F.VAR_STRING: "varchar", F.STRING: "char", F.ENUM: "char",
        F.SET: "char", F.JSON: "text", F.BIT: "bit",
    }  # fmt: skip


_TEXT_OR_BLOB = frozenset((249, 250, 251, 252))  # TINY_BLOB, MEDIUM_BLOB, LONG_BLOB, BLOB
_UNSIGNED = {"tinyint": "smallint", "smallint": "integer", "integer": "bigint"}
"""An unsigned column takes the next wider Connect type, as Confluent maps it."""


def _jdbc_type(kind: str, full: str) -> str:
    """A MySQL column type as the type Connector/J reports (an unsigned column the next wider,
    ``text`` and ``blob`` by their family). ``tinyint(1)``, Connector/J's BIT, is INT8 in
    Confluent's generic mapping, as any TINYINT."""
    if kind in ("int", "mediumint"):
        kind = "integer"
    if "unsigned" in full and kind in _UNSIGNED:
        return _UNSIGNED[kind]
    if kind.endswith("text") or kind in ("enum", "set", "json", "longtext"):
        return "text"
    if kind.endswith("blob"):
        return "varbinary"
    if kind in ("datetime", "timestamp"):
        return "timestamp"
    if kind == "year":
        return "date"
    if kind == "double":
        return "double precision"
    if kind == "float":
        return "real"
    return kind


_JDBC_MYSQL = re.compile(
    r"^jdbc:(?:mysql|mariadb):(?://(?P<hosts>[^/?]*))?/?(?P<db>[^?]*)(?:\?(?P<q>.*))?$"
)


def mysql_params(url: str) -> dict[str, Any]:
    """PyMySQL's connection keywords for a ``jdbc:mysql:`` or ``jdbc:mariadb:`` URL."""
    found = _JDBC_MYSQL.match(url.strip())
    if not found:
        raise ConnectError(f"Not a MySQL JDBC URL: {redact_url(url)}")
    params: dict[str, Any] = {"host": "localhost", "port": 3306}
    hosts = found.group("hosts") or ""
    if "," in hosts:
        raise ConnectError(
            f"connect-lite connects to one MySQL host; the URL names several: {redact_url(url)}"
        )
    if hosts:
        parsed = urlsplit("//" + hosts)
        params["host"] = parsed.hostname or "localhost"
        if parsed.port:
            params["port"] = parsed.port
        if parsed.username:
            params["user"] = unquote(parsed.username)
        if parsed.password is not None:
            params["password"] = unquote(parsed.password)
    database = unquote(found.group("db") or "")
    if database:
        params["database"] = database
    query = {k: v[-1] for k, v in parse_qs(found.group("q") or "").items()}
    ssl_mode = query.pop("sslMode", None)
    use_ssl = query.pop("useSSL", None)
    if ssl_mode is None and use_ssl is not None:
        ssl_mode = "REQUIRED" if use_ssl.lower() == "true" else "DISABLED"
    for key, value in query.items():
        if key in ("user", "password"):
            params[key] = value
        elif key == "connectTimeout":
            params["connect_timeout"] = max(1, int(value) // 1000) if value.isdigit() else 10
        elif key not in _INERT_PARAMS:
            taken = sorted(["user", "password", "connectTimeout", "sslMode", "useSSL",
                            *_INERT_PARAMS])  # fmt: skip
            raise ConnectError(
                f"connect-lite does not take the MySQL JDBC URL parameter {key}; it takes "
                + ", ".join(taken)
            )
    mode = (ssl_mode or "PREFERRED").upper()
    if mode in ("REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY"):
        params["ssl"] = {}
        params["ssl_verify_cert"] = mode != "REQUIRED"
        params["ssl_verify_identity"] = mode == "VERIFY_IDENTITY"
    elif mode not in ("DISABLED", "PREFERRED"):
        raise ConnectError(
            f"Invalid sslMode {ssl_mode} in the MySQL JDBC URL: DISABLED, PREFERRED, REQUIRED, "
            "VERIFY_CA or VERIFY_IDENTITY"
        )
    return params


_INERT_PARAMS = frozenset(
    (
        "allowPublicKeyRetrieval",
        "autoReconnect",
        "characterEncoding",
        "nullCatalogMeansCurrent",
        "rewriteBatchedStatements",
        "serverTimezone",
        "useUnicode",
        "connectionTimeZone",
    )
)
"""Connector/J parameters that change nothing for connect-lite: it always batches, speaks
utf8mb4, reconnects, reads the connection's database, and binds times in ``db.timezone``."""
