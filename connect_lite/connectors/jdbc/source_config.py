"""The JDBC source's configuration: Confluent's keys and defaults (``JdbcSourceConnectorConfig``)
and the checks across keys."""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from connect_lite.api import ConfigDef, Importance, Type, ValidString

from .config import (
    DB_TIMEZONE,
    Connection,
    connection_def,
    connection_errors,
    enum_check,
    raise_errors,
)

MODE = "mode"
INCREMENTING_COLUMN = "incrementing.column.name"
TIMESTAMP_COLUMNS = "timestamp.column.name"
TIMESTAMP_INITIAL = "timestamp.initial"
VALIDATE_NON_NULL = "validate.non.null"
TABLE_WHITELIST = "table.whitelist"
TABLE_BLACKLIST = "table.blacklist"
TABLE_INCLUDE = "table.include.list"
TABLE_EXCLUDE = "table.exclude.list"
CATALOG_PATTERN = "catalog.pattern"
SCHEMA_PATTERN = "schema.pattern"
TABLE_TYPES = "table.types"
QUERY = "query"
QUERY_SUFFIX = "query.suffix"
TOPIC_PREFIX = "topic.prefix"
POLL_INTERVAL_MS = "poll.interval.ms"
BATCH_MAX_ROWS = "batch.max.rows"
TABLE_POLL_INTERVAL_MS = "table.poll.interval.ms"
TIMESTAMP_DELAY_MS = "timestamp.delay.interval.ms"
NUMERIC_MAPPING = "numeric.mapping"
NUMERIC_PRECISION_MAPPING = "numeric.precision.mapping"
TRANSACTION_ISOLATION = "transaction.isolation.mode"
QUERY_RETRY_ATTEMPTS = "query.retry.attempts"
TIMESTAMP_MAPPING = "timestamp.columns.mapping"
INCREMENTING_MAPPING = "incrementing.column.mapping"
QUERY_MASKED = "query.masked"
TIMESTAMP_GRANULARITY = "timestamp.granularity"
MAX_BUFFER_SIZE = "max.buffer.size"
POLL_LINGER_MS = "poll.linger.ms"
DATE_CALENDAR = "date.calendar.system"
GRANULARITIES = (
    "connect_logical", "micros_long", "micros_string", "micros_iso_datetime_string",
    "nanos_long", "nanos_string", "nanos_iso_datetime_string",
)  # fmt: skip
UNSUPPORTED = (TABLE_INCLUDE, TABLE_EXCLUDE, TIMESTAMP_MAPPING, INCREMENTING_MAPPING)
"""Confluent's newer regex-based keys, which connect-lite does not take (use table.whitelist,
table.blacklist, timestamp.column.name and incrementing.column.name)."""
TABLES = "tables"
"""A task's tables (its task config only), as their ids, comma-separated."""


class Mode(enum.Enum):
    BULK = "bulk"
    TIMESTAMP = "timestamp"
    INCREMENTING = "incrementing"
    TIMESTAMP_INCREMENTING = "timestamp+incrementing"


NUMERIC_MAPPINGS = ("none", "precision_only", "best_fit", "best_fit_eager_double")


def _granularity(name: str, value: Any) -> str | None:
    if value in (None, "connect_logical", "CONNECT_LOGICAL"):
        return None
    if value in GRANULARITIES or str(value).lower() in GRANULARITIES:
        return (
            f"Invalid value {value} for configuration {name}: connect-lite gives TIMESTAMP "
            "columns as Connect's Timestamp only (connect_logical)"
        )
    return f"Invalid value {value} for configuration {name}: Invalid enumerator"


def _mode(name: str, value: Any) -> str | None:
    allowed = ("", *(m.value for m in Mode))
    if value in allowed:
        return None
    return f"Invalid value {value} for configuration {name}: String must be one of: " + ", ".join(
        allowed
    )


def source_config_def() -> ConfigDef:
    """Confluent's JdbcSourceConnectorConfig keys, with its defaults."""
    return (
        connection_def()
        .define(MODE, Type.STRING, "", _mode, Importance.HIGH,
                "bulk, timestamp, incrementing or timestamp+incrementing.")
        .define(INCREMENTING_COLUMN, Type.STRING, "", None, Importance.MEDIUM,
                "The strictly incrementing column that detects new rows.")
        .define(TIMESTAMP_COLUMNS, Type.LIST, [], None, Importance.MEDIUM,
                "Timestamp columns that detect new or modified rows; COALESCEd in order.")
        .define(TIMESTAMP_INITIAL, Type.LONG, None, None, Importance.LOW,
                "The epoch milliseconds to start from in timestamp modes; -1 for now.")
        .define(VALIDATE_NON_NULL, Type.BOOLEAN, True, None, Importance.LOW,
                "Whether to check that the incrementing and timestamp columns are NOT NULL.")
        .define(TABLE_WHITELIST, Type.LIST, [], None, Importance.MEDIUM,
                "The tables to copy; empty for all.")
        .define(TABLE_BLACKLIST, Type.LIST, [], None, Importance.MEDIUM,
                "The tables not to copy.")
        .define(TABLE_INCLUDE, Type.LIST, [], None, Importance.MEDIUM,
                "Regexes of the tables to copy: not supported by connect-lite.")
        .define(TABLE_EXCLUDE, Type.LIST, [], None, Importance.MEDIUM,
                "Regexes of the tables not to copy: not supported by connect-lite.")
        .define(TIMESTAMP_MAPPING, Type.LIST, [], None, Importance.MEDIUM,
                "Per-table timestamp columns: not supported by connect-lite.")
        .define(INCREMENTING_MAPPING, Type.LIST, [], None, Importance.MEDIUM,
                "Per-table incrementing columns: not supported by connect-lite.")
        .define(QUERY_MASKED, Type.PASSWORD, "", None, Importance.MEDIUM,
                "The query, hidden in logs and REST answers.")
        .define(TIMESTAMP_GRANULARITY, Type.STRING, "connect_logical", _granularity,
                Importance.LOW, "How TIMESTAMP columns are represented: connect_logical.")
        .define(MAX_BUFFER_SIZE, Type.INT, 0, None, Importance.LOW,
                "Confluent's read-ahead buffer; connect-lite reads on the task's thread.")
        .define(POLL_LINGER_MS, Type.LONG, 5000, None, Importance.LOW,
                "Confluent's wait for its buffer; connect-lite reads on the task's thread.")
        .define(DATE_CALENDAR, Type.STRING, "LEGACY",
                ValidString.in_("LEGACY", "PROLEPTIC_GREGORIAN"), Importance.LOW,
                "The calendar of dates and timestamps (they differ before 1582-10-15 only).")
        .define(CATALOG_PATTERN, Type.STRING, None, None, Importance.MEDIUM,
                "The catalog of the tables; connect-lite reads the connection's database.")
        .define(SCHEMA_PATTERN, Type.STRING, None, None, Importance.MEDIUM,
                "The schema (a LIKE pattern) of the tables; empty for all but the system's.")
        .define(TABLE_TYPES, Type.LIST, ["TABLE"], None, Importance.LOW,
                "The types of tables to copy: TABLE, VIEW.")
        .define(QUERY, Type.STRING, "", None, Importance.MEDIUM,
                "A query to run instead of copying tables.")
        .define(QUERY_SUFFIX, Type.STRING, "", None, Importance.LOW,
                "A suffix appended to the generated query.")
        .define(TOPIC_PREFIX, Type.STRING, importance=Importance.HIGH,
                doc="The prefix of each table's topic, or the topic of the query.")
        .define(POLL_INTERVAL_MS, Type.INT, 5000, None, Importance.HIGH,
                "How often to poll each table for new data, in milliseconds.")
        .define(BATCH_MAX_ROWS, Type.INT, 1000, None, Importance.LOW,
                "The most rows one poll returns of one table.")
        .define(TABLE_POLL_INTERVAL_MS, Type.LONG, 60000, None, Importance.LOW,
                "How often to look for new or dropped tables, in milliseconds.")
        .define(TIMESTAMP_DELAY_MS, Type.LONG, 0, None, Importance.HIGH,
                "How long after a row's timestamp it is copied, for slow transactions.")
        .define(NUMERIC_MAPPING, Type.STRING, None, enum_check(*NUMERIC_MAPPINGS),
                Importance.LOW, "How NUMERIC columns map to Connect types.")
        .define(NUMERIC_PRECISION_MAPPING, Type.BOOLEAN, False, None, Importance.LOW,
                "Deprecated: numeric.mapping=precision_only.")
        .define(TRANSACTION_ISOLATION, Type.STRING, "DEFAULT",
                ValidString.in_("DEFAULT", "READ_UNCOMMITTED", "READ_COMMITTED",
                                "REPEATABLE_READ", "SERIALIZABLE", "SQL_SERVER_SNAPSHOT"),
                Importance.LOW, "The isolation level of the queries.")
        .define(QUERY_RETRY_ATTEMPTS, Type.INT, -1, None, Importance.LOW,
                "How often a failed query is retried; -1 for ever.")
    )  # fmt: skip


@dataclass(frozen=True)
class SourceSettings(Connection):
    """A connector's or task's parsed settings."""

    mode: Mode
    incrementing: str
    timestamps: tuple[str, ...]
    timestamp_initial: int | None
    validate_non_null: bool
    include: tuple[str, ...]
    exclude: tuple[str, ...]
    schema_pattern: str | None
    table_types: tuple[str, ...]
    query: str
    query_suffix: str
    topic_prefix: str
    poll_interval_ms: int
    batch_max_rows: int
    table_poll_interval_ms: int
    delay_ms: int
    timezone: str
    numeric_mapping: str
    isolation: str
    retry_attempts: int

    @staticmethod
    def parse(props: Mapping[str, str]) -> SourceSettings:
        values = source_config_def().parse(props)
        raise_errors(source_errors(values))
        mapping = values[NUMERIC_MAPPING] or (
            "precision_only" if values[NUMERIC_PRECISION_MAPPING] else "none"
        )
        return SourceSettings(
            **dataclasses.asdict(Connection.of(values)),
            mode=Mode(values[MODE]),
            incrementing=values[INCREMENTING_COLUMN].strip(),
            timestamps=tuple(c.strip() for c in values[TIMESTAMP_COLUMNS] if c.strip()),
            timestamp_initial=values[TIMESTAMP_INITIAL],
            validate_non_null=values[VALIDATE_NON_NULL],
            include=_names(values[TABLE_WHITELIST]),
            exclude=_names(values[TABLE_BLACKLIST]),
            schema_pattern=values[SCHEMA_PATTERN],
            table_types=tuple(t.strip().upper() for t in values[TABLE_TYPES] if t.strip()),
            query=(str(values[QUERY_MASKED] or "") or values[QUERY]).strip(),
            query_suffix=values[QUERY_SUFFIX],
            topic_prefix=values[TOPIC_PREFIX].strip(),
            poll_interval_ms=values[POLL_INTERVAL_MS],
            batch_max_rows=max(1, values[BATCH_MAX_ROWS]),
            table_poll_interval_ms=values[TABLE_POLL_INTERVAL_MS],
            delay_ms=values[TIMESTAMP_DELAY_MS],
            timezone=values[DB_TIMEZONE],
            numeric_mapping=mapping.lower(),
            isolation=values[TRANSACTION_ISOLATION],
            retry_attempts=values[QUERY_RETRY_ATTEMPTS],
        )


def _names(items: list[str]) -> tuple[str, ...]:
    return tuple(i.strip() for i in items if i.strip())


def source_errors(values: Mapping[str, Any]) -> dict[str, list[str]]:
    """The errors across keys, by the key at fault (Confluent's texts where it has them)."""
    errors = connection_errors(values)

    def fail(key: str, message: str) -> None:
        errors.setdefault(key, []).append(message)

    for key in UNSUPPORTED:
        if values.get(key):
            fail(key, f"{key} is not supported by connect-lite: use table.whitelist, table."
                      "blacklist, timestamp.column.name and incrementing.column.name")  # fmt: skip
    _mode_errors(values, fail)
    _query_errors(values, fail)
    types = {str(t).strip().upper() for t in values.get(TABLE_TYPES) or []}
    if types - {"TABLE", "VIEW"}:
        fail(TABLE_TYPES, f"Invalid value {','.join(sorted(types))} for configuration "
                          f"{TABLE_TYPES}: connect-lite reads TABLE and VIEW")  # fmt: skip
    if values.get(TRANSACTION_ISOLATION) == "SQL_SERVER_SNAPSHOT":
        fail(TRANSACTION_ISOLATION, "Isolation mode of `SQL_SERVER_SNAPSHOT` can only be "
                                    "configured with a Sql Server Dialect")  # fmt: skip
    prefix = str(values.get(TOPIC_PREFIX) or "").strip()
    if prefix and not re.fullmatch(r"[A-Za-z0-9._-]+", prefix):
        fail(TOPIC_PREFIX, "Topic prefix must not contain any character other than ASCII "
                           "alphanumerics, '.', '_' and '-'.")  # fmt: skip
    if len(prefix) > 249:
        fail(TOPIC_PREFIX, "Topic prefix length must not exceed max topic name length, 249 chars")
    return errors


def _mode_errors(values: Mapping[str, Any], fail: Callable[[str, str], None]) -> None:
    mode = values.get(MODE)
    if mode == "":
        for key in (INCREMENTING_COLUMN, TIMESTAMP_COLUMNS, TIMESTAMP_MAPPING,
                    INCREMENTING_MAPPING, VALIDATE_NON_NULL, TIMESTAMP_INITIAL):  # fmt: skip
            fail(key, "Query mode must be specified")
    if (
        mode in (Mode.INCREMENTING.value, Mode.TIMESTAMP_INCREMENTING.value)
        and not (values.get(INCREMENTING_COLUMN) or "").strip()
        and (values.get(QUERY) or values.get(QUERY_MASKED))
    ):  # a table's auto-incremented column is found when its task starts
        fail(INCREMENTING_COLUMN, f"'{INCREMENTING_COLUMN}' must be provided when using mode "
                                  f"'{Mode.INCREMENTING.value}' or "
                                  f"'{Mode.TIMESTAMP_INCREMENTING.value}' with a custom query. "
                                  "The incrementing column cannot be auto-discovered in query "
                                  "mode because there is no table to inspect. Note that "
                                  "'incrementing.column.mapping' is not applied in query mode "
                                  "(it maps columns by table-name regex, and a custom query has "
                                  "no underlying table to match), so "
                                  f"'{INCREMENTING_COLUMN}' must be set explicitly.")  # fmt: skip
    if mode in (Mode.TIMESTAMP.value, Mode.TIMESTAMP_INCREMENTING.value) and not [
        c for c in values.get(TIMESTAMP_COLUMNS) or [] if c.strip()
    ]:
        fail(TIMESTAMP_COLUMNS, f"'{TIMESTAMP_COLUMNS}' must be provided when using mode "
                                f"'{mode}'")  # fmt: skip


def _query_errors(values: Mapping[str, Any], fail: Callable[[str, str], None]) -> None:
    filters = [k for k in (TABLE_WHITELIST, TABLE_BLACKLIST) if values.get(k)]
    query = (values.get(QUERY) or "").strip()
    masked = str(values.get(QUERY_MASKED) or "").strip()
    if query and masked:
        for key in (QUERY, QUERY_MASKED):
            fail(key, "Both 'query' and 'query.masked' configs cannot be set at the same time. "
                      "Please use only one of them.")  # fmt: skip
    given, key = (masked, QUERY_MASKED) if masked else (query, QUERY)
    if given and filters:
        for at in (key, *filters):
            fail(at, "Do not specify table filtering configs with 'query'. Remove "
                     "table.whitelist / table.blacklist / table.include.list / "
                     "table.exclude.list when using query mode or 'query' when using table "
                     "filtering mode.")  # fmt: skip
    if given and not re.match(r"(?is)^SELECT\b", given):
        fail(key, f"Only SELECT statements are supported for '{key}'. Please provide a "
                  "statement that starts with SELECT.")  # fmt: skip
