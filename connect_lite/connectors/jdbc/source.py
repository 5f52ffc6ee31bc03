"""The JDBC source connector, under Confluent's class name: it copies tables (or a query) into
topics by Confluent's modes, with Confluent's records, source partitions and offsets."""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from typing import Any

from connect_lite.api import (
    ConfigDef,
    ConnectError,
    SourceConnector,
    SourceRecord,
    SourceTask,
)

from .config import check_across, warn_confluent_keys
from .dialects import Dialect, TableId
from .querier import Querier
from .registry import dialect
from .sink import VERSION
from .source_config import (
    TABLES,
    Mode,
    SourceSettings,
    source_config_def,
    source_errors,
)

log = logging.getLogger(__name__)

_DEF = source_config_def()


def connect(settings: SourceSettings) -> tuple[Dialect, Any]:
    """The dialect and a connection, tried ``connection.attempts`` times."""
    sql = dialect(settings.dialect, settings.quote)
    conn = sql.connect_retrying(settings)
    sql.prepare(conn, settings.timezone)
    sql.isolate(conn, settings.isolation)
    return sql, conn


def find_tables(sql: Dialect, conn: Any, settings: SourceSettings) -> list[TableId]:
    """The tables to copy: the dialect's tables, by ``table.whitelist`` (or
    ``table.blacklist``), each named bare or as ``schema.table``."""
    found = sql.list_tables(conn, settings.schema_pattern, settings.table_types)
    conn.rollback()

    def named(table: TableId, names: tuple[str, ...]) -> bool:
        return table.table in names or sql.table_key(table) in names or str(table) in names

    if settings.include:
        return [t for t in found if named(t, settings.include)]
    return [t for t in found if not named(t, settings.exclude)]


class JdbcSourceConnector(SourceConnector):
    """Tables or a query of a database into topics, with Confluent's JDBC source keys."""

    __connect_class_name__ = "io.confluent.connect.jdbc.JdbcSourceConnector"

    def __init__(self) -> None:
        self._props: dict[str, str] = {}
        self._settings: SourceSettings | None = None
        self._tables: list[TableId] = []
        self._stop = threading.Event()
        self._monitor: threading.Thread | None = None

    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return _DEF

    def validate(self, config: dict[str, str]) -> None:
        check_across(_DEF, config, source_errors)

    def start(self, config: dict[str, str]) -> None:
        settings = SourceSettings.parse(config)
        warn_confluent_keys(config, config.get("name", "jdbc-source"))
        self._props, self._settings = dict(config), settings
        if settings.query:
            return
        self._tables = _unique_topics(self._list())
        self._stop = threading.Event()  # a stopped monitor that is still listing stays stopped
        self._monitor = threading.Thread(
            target=self._watch, args=(self._stop,), name="jdbc-table-monitor", daemon=True
        )
        self._monitor.start()

    def _list(self) -> list[TableId]:
        assert self._settings is not None
        sql, conn = connect(self._settings)
        try:
            return find_tables(sql, conn, self._settings)
        finally:
            conn.close()

    def _watch(self, stop: threading.Event) -> None:
        """Look for new and dropped tables every ``table.poll.interval.ms``; a change asks
        for new task configs."""
        assert self._settings is not None
        while not stop.wait(self._settings.table_poll_interval_ms / 1000):
            try:
                tables = self._list()
            except Exception as error:
                log.warning("Could not list the tables: %s", error)
                continue
            if stop.is_set():
                return
            if tables != self._tables:
                try:
                    tables = _unique_topics(tables)
                except ConnectError as error:
                    self.context.raise_error(error)
                    return
                log.info("Tables changed (%s); reconfiguring the tasks",
                         ", ".join(str(t) for t in tables) or "none")  # fmt: skip
                self._tables = tables
                self.context.request_task_reconfiguration()

    def task_class(self) -> type[SourceTask]:
        return JdbcSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        assert self._settings is not None
        if self._settings.query:
            return [dict(self._props)]
        tables = list(self._tables)  # the monitor may replace it meanwhile
        if not tables:
            log.warning("No tables were found so there's no work to be done.")
            return []
        groups = _groups(tables, min(max_tasks, len(tables)))
        return [{**self._props, TABLES: json.dumps([list(t.parts) for t in g])} for g in groups]

    def stop(self) -> None:
        self._stop.set()
        if self._monitor is not None:
            self._monitor.join(5)


def _unique_topics(tables: list[TableId]) -> list[TableId]:
    """The tables, unless two share a bare name (and so a topic): Confluent refuses that."""
    seen: dict[str, list[str]] = {}
    for table in tables:
        seen.setdefault(table.table, []).append(str(table))
    clashes = [names for names in seen.values() if len(names) > 1]
    if clashes:
        raise ConnectError(
            "The connector uses the unqualified table name as the topic name and has detected "
            "duplicate unqualified table names. This could lead to mixed data types in the topic "
            "and downstream processing errors. To prevent such processing errors, the JDBC "
            "Source connector fails to start when it detects duplicate table name "
            "configurations. Update the connector's 'table.whitelist' or 'table.blacklist' "
            f"config to include exactly one table in each of the tables listed below.\n\t{clashes}"
        )
    return tables


def _groups(tables: list[TableId], count: int) -> list[list[TableId]]:
    """Contiguous groups of nearly equal size (Kafka's ConnectorUtils.groupPartitions)."""
    size, extra = divmod(len(tables), count)
    groups, start = [], 0
    for i in range(count):
        end = start + size + (1 if i < extra else 0)
        groups.append(tables[start:end])
        start = end
    return groups


class JdbcSourceTask(SourceTask):
    """Polls its tables (or the query) in turn, each at most every ``poll.interval.ms``."""

    __connect_class_name__ = "io.confluent.connect.jdbc.source.JdbcSourceTask"

    def __init__(self) -> None:
        self._settings: SourceSettings | None = None
        self._sql: Dialect | None = None
        self._conn: Any = None
        self._queriers: list[Querier] = []
        self._stop = threading.Event()
        self._using = threading.Lock()
        """Held while the task's thread uses the connection: stop() closes it only if free."""
        self._failures = 0

    def version(self) -> str:
        return VERSION

    def start(self, config: dict[str, str]) -> None:
        settings = SourceSettings.parse(config)
        self._settings = settings
        tables = (
            [None]
            if settings.query
            else [TableId(tuple(parts)) for parts in json.loads(config.get(TABLES) or "[]")]
        )
        self._sql, self._conn = connect(settings)
        reader = self.context.offset_storage_reader()
        for table in tables:
            querier = Querier(self._sql, settings, table, None)
            if settings.mode is not Mode.BULK:  # the protocol-1 partition, else the first shape
                legacy = None if table is None else reader.offset({"table": table.table})
                querier.offset = dict(reader.offset(querier.partition) or legacy or {})
            if table is not None and settings.validate_non_null:
                self._check_non_null(table)
            self._queriers.append(querier)

    def _check_non_null(self, table: TableId) -> None:
        assert self._settings is not None and self._sql is not None
        settings = self._settings
        columns = {c.name: c for c in self._sql.describe(self._conn, table)}
        self._conn.rollback()
        shown = ".".join(f'"{p}"' for p in table.parts)
        if settings.incrementing and settings.mode in (
            Mode.INCREMENTING,
            Mode.TIMESTAMP_INCREMENTING,
        ):  # an auto-incremented column (found, as Confluent's, when none is named) is not null
            column = columns.get(settings.incrementing)
            if column is None:
                raise ConnectError(
                    f"Incrementing column: {settings.incrementing} does not exist in table "
                    f"'{shown}'"
                )
            if column.nullable:
                raise ConnectError(
                    f"Cannot make incremental queries using incrementing column "
                    f"{settings.incrementing} on {shown} because this column is nullable."
                )
        if settings.mode in (Mode.TIMESTAMP, Mode.TIMESTAMP_INCREMENTING):
            missing = [c for c in settings.timestamps if c not in columns]
            if missing:
                raise ConnectError(
                    f"Timestamp columns: {', '.join(missing)} do not exist in table '{shown}'"
                )
            if all(columns[c].nullable for c in settings.timestamps):
                raise ConnectError(
                    f"Cannot make incremental queries using timestamp columns "
                    f"{','.join(settings.timestamps)} on {shown} because all of these columns "
                    "are nullable."
                )

    def poll(self) -> list[SourceRecord] | None:
        """The next rows of the querier whose turn it is: one reading on, else the one due
        first, after waiting for it (at most 1 s, so that the worker commits and stops
        meanwhile)."""
        assert self._settings is not None
        if self._stop.is_set() or not self._queriers:
            self._stop.wait(1.0)
            return None
        querier = min(self._queriers, key=lambda q: (not q.reading, q.next_due))
        wait = querier.next_due - time.monotonic()
        if wait > 0 and not querier.reading:
            self._stop.wait(min(wait, 1.0))
            if wait > 1.0 or self._stop.is_set():
                return None
        try:
            with self._using:
                if self._stop.is_set():
                    return None
                records = querier.poll(self._reconnected(), time.monotonic())
        except Exception as error:
            if self._stop.is_set():
                return None
            assert self._sql is not None
            if not self._sql.is_database_error(error):
                raise ConnectError("Error while processing table querier") from error
            self._failed(querier, error)
            return None
        self._failures = 0
        if self._stop.is_set():
            with self._using:
                self._close()
        return records or None

    def _reconnected(self) -> Any:
        if self._conn is None:
            assert self._settings is not None
            self._sql, self._conn = connect(self._settings)
            for querier in self._queriers:
                querier.sql = self._sql
        return self._conn

    def _failed(self, querier: Querier, error: Exception) -> None:
        """A failed query is tried again, after a new connection, ``query.retry.attempts``
        times (-1: for ever); then the task fails."""
        assert self._settings is not None
        self._failures += 1
        attempts = self._settings.retry_attempts
        log.warning("Failed to run query for table %s: %s (attempt %d)",
                    querier.table or "query", error, self._failures)  # fmt: skip
        with contextlib.suppress(Exception):  # the connection may be gone already
            querier.close(self._conn)
        with contextlib.suppress(Exception):
            self._conn.close()
        self._conn = None
        if 0 < attempts <= self._failures:
            raise ConnectError(f"Failed to query table after retries: {error}") from error
        self._stop.wait(min(self._settings.poll_interval_ms, 5000) / 1000)

    def stop(self) -> None:
        """Stop polling; the connection is closed here if no poll uses it, else by the poll
        when it returns."""
        self._stop.set()
        if self._using.acquire(timeout=5):
            try:
                self._close()
            finally:
                self._using.release()

    def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()
