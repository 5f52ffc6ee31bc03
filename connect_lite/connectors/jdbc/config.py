"""The JDBC sink's configuration: Confluent's keys and defaults (``JdbcSinkConfig``), the
checks across keys, and the keys connect-lite refuses."""

from __future__ import annotations

import dataclasses
import enum
import logging
import zoneinfo
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from connect_lite.api import (
    ConfigDef,
    ConfigError,
    Importance,
    LocalPath,
    Range,
    Type,
    Validator,
    ValidString,
)

log = logging.getLogger(__name__)

CONNECTION_URL = "connection.url"
CONNECTION_USER = "connection.user"
CONNECTION_PASSWORD = "connection.password"
CONNECTION_ATTEMPTS = "connection.attempts"
CONNECTION_BACKOFF_MS = "connection.backoff.ms"
DIALECT_NAME = "dialect.name"
INSERT_MODE = "insert.mode"
BATCH_SIZE = "batch.size"
DELETE_ENABLED = "delete.enabled"
TABLE_NAME_FORMAT = "table.name.format"
PK_MODE = "pk.mode"
PK_FIELDS = "pk.fields"
FIELDS_WHITELIST = "fields.whitelist"
DB_TIMEZONE = "db.timezone"
AUTO_CREATE = "auto.create"
AUTO_EVOLVE = "auto.evolve"
QUOTE_IDENTIFIERS = "quote.sql.identifiers"
MAX_RETRIES = "max.retries"
RETRY_BACKOFF_MS = "retry.backoff.ms"
TABLE_TYPES = "table.types"
TRIM_SENSITIVE_LOG = "trim.sensitive.log"
MSSQL_HOLDLOCK = "mssql.use.merge.holdlock"
CREDENTIALS_PROVIDER = "jdbc.credentials.provider.class"
REPLACE_NULL_WITH_DEFAULT = "replace.null.with.default"
DATE_TIMEZONE = "date.timezone"
TIMESTAMP_FIELDS = "timestamp.fields.list"
TIMESTAMP_PRECISION = "timestamp.precision.mode"
DATE_CALENDAR = "date.calendar.system"
STRING_VALUE_COLUMN = "string.output.value.column.name"
DEFAULT_CREDENTIALS = "io.confluent.connect.jdbc.util.DefaultJdbcCredentialsProvider"

DIALECTS = ("MySqlDatabaseDialect", "PostgreSqlDatabaseDialect", "SqliteDatabaseDialect")
"""The dialects connect-lite has; Confluent's others are a validate error that names them."""
CONFLUENT_DIALECTS = (
    "Db2DatabaseDialect",
    "DerbyDatabaseDialect",
    "GenericDatabaseDialect",
    "OracleDatabaseDialect",
    "SapHanaDatabaseDialect",
    "SqlServerDatabaseDialect",
    "SybaseDatabaseDialect",
    "VerticaDatabaseDialect",
)


class InsertMode(enum.Enum):
    INSERT = "insert"
    UPSERT = "upsert"
    UPDATE = "update"


class PkMode(enum.Enum):
    NONE = "none"
    KAFKA = "kafka"
    RECORD_KEY = "record_key"
    RECORD_VALUE = "record_value"


def enum_check(*values: str) -> Validator:
    """Confluent's EnumValidator: a value in all lower case or all upper case."""
    allowed = {v.lower() for v in values} | {v.upper() for v in values}

    def check(name: str, value: Any) -> str | None:
        if value is None or value in allowed:
            return None
        return f"Invalid value {value} for configuration {name}: Invalid enumerator"

    return check


def _credentials(name: str, value: Any) -> str | None:
    shown = getattr(value, "__name__", value)
    if value in (None, "", DEFAULT_CREDENTIALS):
        return None
    return (
        f"Invalid value {shown} for configuration {name}: connect-lite takes the credentials "
        f"from {CONNECTION_USER} and {CONNECTION_PASSWORD} only ({DEFAULT_CREDENTIALS})"
    )


def _non_empty(name: str, value: Any) -> str | None:
    if value is None or not str(value).strip():
        return f"Invalid value {value} for configuration {name}: String must be non-empty"
    return None


def timezone_check(name: str, value: Any) -> str | None:
    try:
        zoneinfo.ZoneInfo(str(value))
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return (
            f"Invalid value {value} for configuration {name}: Invalid time zone. See the list "
            "of valid time zones at "
            "https://docs.oracle.com/javase/8/docs/api/java/time/ZoneId.html#shortIds"
        )
    return None


def dialect_check(name: str, value: Any) -> str | None:
    if not value or value in DIALECTS:
        return None
    if value in CONFLUENT_DIALECTS:
        return (
            f"Invalid value {value} for configuration {name}: connect-lite has no "
            f"{value}; it has {', '.join(DIALECTS)}"
        )
    return f"Invalid value {value} for configuration {name}: String must be one of: " + ", ".join(
        ("", *DIALECTS, *CONFLUENT_DIALECTS)
    )


def _table_types(name: str, value: Any) -> str | None:
    types = [str(v).strip().upper() for v in value or []]
    if types and types != ["TABLE"]:
        return (
            f"Invalid value {','.join(value)} for configuration {name}: connect-lite writes "
            "to tables only (TABLE)"
        )
    return None


def raise_errors(errors: Mapping[str, list[str]]) -> None:
    """ConfigError with every message, and the errors by key (validate reports them there)."""
    if errors:
        raise ConfigError("\n".join(m for ms in errors.values() for m in ms), dict(errors))


def warn_confluent_keys(config: Mapping[str, str], name: str) -> None:
    """One WARN for Confluent's licence keys (``confluent.license``, ``confluent.topic`` and
    ``confluent.topic.*``), which connect-lite accepts and does not use."""
    found = sorted(
        k for k in config
        if k in ("confluent.license", "confluent.topic") or k.startswith("confluent.topic.")
    )  # fmt: skip
    if found:
        log.warning("[%s] Ignoring Confluent licence keys (connect-lite needs none): %s", name,
                    ", ".join(found))  # fmt: skip


def check_across(
    config_def: ConfigDef,
    config: Mapping[str, str],
    across: Callable[[Mapping[str, Any]], Mapping[str, list[str]]],
) -> None:
    """A connector's ``validate``: the checks across keys of values that each passed their
    own (the ConfigDef checks each key alone)."""
    values = {name: cv.value for name, cv in config_def.validate(dict(config)).items()}
    raise_errors(across(values))


def connection_def() -> ConfigDef:
    """The connection keys Confluent's sink and source share, with their defaults."""
    return (
        ConfigDef()
        .define(CONNECTION_URL, Type.STRING, importance=Importance.HIGH, local_path=LocalPath.JDBC,
                doc="JDBC connection URL: jdbc:postgresql://host:port/db, "
                "jdbc:mysql://host:port/db (jdbc:mariadb: too) or jdbc:sqlite:/path.")
        .define(CONNECTION_USER, Type.STRING, None, importance=Importance.HIGH,
                doc="JDBC connection user.")
        .define(CONNECTION_PASSWORD, Type.PASSWORD, None, importance=Importance.HIGH,
                doc="JDBC connection password.")
        .define(CONNECTION_ATTEMPTS, Type.INT, 3, Range.at_least(1), Importance.LOW,
                "Maximum number of attempts to retrieve a valid JDBC connection.")
        .define(CONNECTION_BACKOFF_MS, Type.LONG, 10000, None, Importance.LOW,
                "Backoff time in milliseconds between connection attempts.")
        .define(DIALECT_NAME, Type.STRING, "", dialect_check, Importance.LOW,
                "The database dialect; inferred from the connection URL when empty.")
        .define(CREDENTIALS_PROVIDER, Type.STRING, DEFAULT_CREDENTIALS, _credentials,
                Importance.LOW, "Credentials provider; connect-lite has only the default one.")
        .define(QUOTE_IDENTIFIERS, Type.STRING, "ALWAYS",
                ValidString.in_ignore_case("ALWAYS", "NEVER"), Importance.MEDIUM,
                "When to quote table names, column names and other identifiers in SQL.")
        .define(DB_TIMEZONE, Type.STRING, "UTC", timezone_check, Importance.MEDIUM,
                "The time zone of time-based values without one.")
    )  # fmt: skip


@dataclass(frozen=True)
class Connection:
    """How to reach the database (picklable: the sink's executors connect with it)."""

    url: str
    user: str | None
    password: str | None = dataclasses.field(repr=False)
    dialect: str
    attempts: int
    backoff_ms: int
    quote: bool

    @staticmethod
    def of(values: Mapping[str, Any]) -> Connection:
        password = values[CONNECTION_PASSWORD]
        return Connection(
            url=values[CONNECTION_URL],
            user=values[CONNECTION_USER],
            password=None if password is None else str(password),
            dialect=values[DIALECT_NAME] or inferred_dialect(values[CONNECTION_URL]) or "",
            attempts=values[CONNECTION_ATTEMPTS],
            backoff_ms=values[CONNECTION_BACKOFF_MS],
            quote=values[QUOTE_IDENTIFIERS].upper() == "ALWAYS",
        )


def sink_config_def() -> ConfigDef:
    """Confluent's JdbcSinkConfig keys, with its defaults."""
    return (
        connection_def()
        .define(INSERT_MODE, Type.STRING, "insert", enum_check(*(m.value for m in InsertMode)),
                Importance.HIGH,
                "The insertion mode: insert, upsert or update.")
        .define(BATCH_SIZE, Type.INT, 3000, Range.at_least(0), Importance.MEDIUM,
                "How many records to batch together for insertion into the table.")
        .define(DELETE_ENABLED, Type.BOOLEAN, False, None, Importance.MEDIUM,
                "Whether to treat null record values as deletes. Requires pk.mode record_key.")
        .define(TABLE_NAME_FORMAT, Type.STRING, "${topic}", None, Importance.MEDIUM,
                "The destination table name; ${topic} is the record's topic.")
        .define(REPLACE_NULL_WITH_DEFAULT, Type.BOOLEAN, True, None, Importance.MEDIUM,
                "Whether a null field value is written as the field's default value.")
        .define(PK_MODE, Type.STRING, "none", enum_check(*(m.value for m in PkMode)),
                Importance.HIGH,
                "The primary key mode: none, kafka, record_key or record_value.")
        .define(PK_FIELDS, Type.LIST, [], None, Importance.MEDIUM,
                "The primary key field names; what they mean depends on pk.mode.")
        .define(FIELDS_WHITELIST, Type.LIST, [], None, Importance.MEDIUM,
                "The record value fields to write; empty for all of them.")
        .define(DATE_TIMEZONE, Type.STRING, "DB_TIMEZONE", enum_check("DB_TIMEZONE", "UTC"),
                Importance.MEDIUM, "The time zone of dates: DB_TIMEZONE (db.timezone) or UTC.")
        .define(TIMESTAMP_FIELDS, Type.LIST, [], None, Importance.MEDIUM,
                "Value fields of INT64 or numeric STRING epoch times to write as timestamps.")
        .define(TIMESTAMP_PRECISION, Type.STRING, "MICROSECONDS",
                enum_check("MICROSECONDS", "NANOSECONDS"), Importance.MEDIUM,
                "The unit of timestamp.fields.list values.")
        .define(DATE_CALENDAR, Type.STRING, "LEGACY",
                ValidString.in_("LEGACY", "PROLEPTIC_GREGORIAN"), Importance.LOW,
                "The calendar of dates and timestamps (they differ before 1582-10-15 only).")
        .define(STRING_VALUE_COLUMN, Type.STRING, "record_value", _non_empty, Importance.MEDIUM,
                "The column of a record whose value schema is STRING.")
        .define(AUTO_CREATE, Type.BOOLEAN, False, None, Importance.MEDIUM,
                "Whether to create a missing destination table with CREATE TABLE.")
        .define(AUTO_EVOLVE, Type.BOOLEAN, False, None, Importance.MEDIUM,
                "Whether to add missing columns with ALTER TABLE.")
        .define(MAX_RETRIES, Type.INT, 10, Range.at_least(0), Importance.MEDIUM,
                "The maximum number of times to retry on errors before failing the task.")
        .define(RETRY_BACKOFF_MS, Type.INT, 3000, Range.at_least(0), Importance.MEDIUM,
                "The time in milliseconds to wait after an error before a retry.")
        .define(TABLE_TYPES, Type.LIST, ["TABLE"], _table_types, Importance.LOW,
                "The types of database tables the sink writes to.")
        .define(TRIM_SENSITIVE_LOG, Type.BOOLEAN, False, None, Importance.LOW,
                "Whether to trim sensitive data from logged SQL errors.")
        .define(MSSQL_HOLDLOCK, Type.BOOLEAN, True, None, Importance.LOW,
                "SQL Server only; without effect on PostgreSQL and SQLite.")
    )  # fmt: skip


@dataclass(frozen=True)
class SinkSettings(Connection):
    """A task's parsed settings: what the executors need to write a batch (picklable)."""

    insert_mode: InsertMode
    pk_mode: PkMode
    pk_fields: tuple[str, ...]
    fields_whitelist: tuple[str, ...]
    table_format: str
    delete_enabled: bool
    batch_size: int
    auto_create: bool
    auto_evolve: bool
    timezone: str
    max_retries: int
    retry_backoff_ms: int
    trim_sensitive_log: bool
    replace_null_with_default: bool
    date_timezone: str
    timestamp_fields: tuple[str, ...]
    timestamp_nanos: bool
    string_column: str
    connector: str

    @staticmethod
    def parse(props: Mapping[str, str]) -> SinkSettings:
        values = sink_config_def().parse(props)
        raise_errors(cross_field_errors(values))
        return SinkSettings(
            **dataclasses.asdict(Connection.of(values)),
            insert_mode=InsertMode(values[INSERT_MODE].lower()),  # all lower or all upper
            pk_mode=PkMode(values[PK_MODE].lower()),
            pk_fields=tuple(f.strip() for f in values[PK_FIELDS] if f.strip()),
            fields_whitelist=tuple(f.strip() for f in values[FIELDS_WHITELIST] if f.strip()),
            table_format=values[TABLE_NAME_FORMAT],
            delete_enabled=values[DELETE_ENABLED],
            batch_size=values[BATCH_SIZE],
            auto_create=values[AUTO_CREATE],
            auto_evolve=values[AUTO_EVOLVE],
            timezone=values[DB_TIMEZONE],
            max_retries=values[MAX_RETRIES],
            retry_backoff_ms=values[RETRY_BACKOFF_MS],
            trim_sensitive_log=values[TRIM_SENSITIVE_LOG],
            replace_null_with_default=values[REPLACE_NULL_WITH_DEFAULT],
            date_timezone=(
                "UTC" if values[DATE_TIMEZONE].upper() == "UTC" else values[DB_TIMEZONE]
            ),
            timestamp_fields=tuple(f.strip() for f in values[TIMESTAMP_FIELDS] if f.strip()),
            timestamp_nanos=values[TIMESTAMP_PRECISION].upper() == "NANOSECONDS",
            string_column=values[STRING_VALUE_COLUMN],
            connector=props.get("name", "null"),
        )


def inferred_dialect(url: str | None) -> str | None:
    """The dialect a JDBC URL implies, as Confluent's DatabaseDialects picks it."""
    text = (url or "").lower()
    if text.startswith("jdbc:postgresql:"):
        return "PostgreSqlDatabaseDialect"
    if text.startswith("jdbc:sqlite:"):
        return "SqliteDatabaseDialect"
    if text.startswith(("jdbc:mysql:", "jdbc:mariadb:")):
        return "MySqlDatabaseDialect"
    return None


DRIVERS = {
    "PostgreSqlDatabaseDialect": ("psycopg", "postgres"),
    "MySqlDatabaseDialect": ("pymysql", "mysql"),
}
"""Dialect -> (the Python module it needs, the connect-lite extra that installs it)."""


def connection_errors(
    values: Mapping[str, Any], importable: Callable[[str], bool] | None = None
) -> dict[str, list[str]]:
    """The errors of the connection keys together (the URL's dialect, its driver)."""
    errors: dict[str, list[str]] = {}
    url = values.get(CONNECTION_URL)
    dialect = values.get(DIALECT_NAME) or inferred_dialect(url)
    bad_url = f"Invalid value {url} for configuration {CONNECTION_URL}"
    if url is not None and not str(url).lower().startswith("jdbc:"):
        errors[CONNECTION_URL] = [f"{bad_url}: Not a valid JDBC URL: {url}"]
    elif url is not None and dialect is None:
        errors[CONNECTION_URL] = [
            f"{bad_url}: connect-lite has no dialect for this URL; it has {', '.join(DIALECTS)}"
        ]
    inferred = inferred_dialect(url)
    if url is not None and inferred and dialect != inferred:
        errors.setdefault(DIALECT_NAME, []).append(
            f"Invalid value {dialect} for configuration {DIALECT_NAME}: the URL is for the "
            f"{inferred}"
        )
    if url is not None and inferred in _URL_CHECKS:
        try:
            _URL_CHECKS[inferred](str(url))
        except Exception as error:
            from .dialects import redact_url

            shown = f"Invalid value {redact_url(str(url))} for configuration {CONNECTION_URL}"
            errors.setdefault(CONNECTION_URL, []).append(f"{shown}: {error}")
    if (
        url is not None
        and str(url).lower().startswith("jdbc:sqlite::memory:")
        and (str(url).split("?", 1)[0].lower() != "jdbc:sqlite::memory:")
    ):
        errors.setdefault(CONNECTION_URL, []).append(
            f"{bad_url}: an in-memory SQLite URL is jdbc:sqlite::memory: exactly"
        )
    module, extra = DRIVERS.get(dialect or "", (None, None))
    if module is not None and not (importable or _importable)(module):
        errors.setdefault(CONNECTION_URL, []).append(
            f"The {dialect} needs the Python driver '{module}', which is not installed: "
            f"pip install 'connect-lite[{extra}]'"
        )
    return errors


def _postgres_url(url: str) -> None:
    from .dialects import postgres_params

    postgres_params(url)


def _mysql_url(url: str) -> None:
    from .mysql import mysql_params

    mysql_params(url)


_URL_CHECKS: dict[str, Callable[[str], None]] = {
    "PostgreSqlDatabaseDialect": _postgres_url,
    "MySqlDatabaseDialect": _mysql_url,
}
"""The dialects whose URL's parameters are checked at validate (what the driver is given)."""


def cross_field_errors(
    values: Mapping[str, Any], importable: Callable[[str], bool] | None = None
) -> dict[str, list[str]]:
    """The errors across keys (and a missing driver), by the key at fault."""
    errors = connection_errors(values, importable)

    def fail(key: str, message: str) -> None:
        errors.setdefault(key, []).append(message)

    pk_mode = str(values.get(PK_MODE, "none")).lower()
    pk_fields = [f for f in values.get(PK_FIELDS) or [] if str(f).strip()]
    if values.get(DELETE_ENABLED) and pk_mode != PkMode.RECORD_KEY.value:
        fail(PK_MODE, "Deletes are only supported for pk.mode record_key")
        fail(DELETE_ENABLED, "Deletes are only supported for pk.mode record_key")
    mode = str(values.get(INSERT_MODE, "insert")).lower()
    if mode in ("upsert", "update") and pk_mode == PkMode.NONE.value:
        fail(PK_MODE, f"Write to table '{values.get(TABLE_NAME_FORMAT)}' in {mode.upper()} mode "
                      "requires key field names to be known, check the primary key "
                      "configuration")  # fmt: skip
    if pk_mode == PkMode.KAFKA.value and pk_fields and len(pk_fields) != 3:
        fail(PK_FIELDS, "PK mode is KAFKA so there should either be no field names defined "
                        "for defaults [__connect_topic, __connect_partition, __connect_offset] "
                        "to be applicable, or exactly 3, defined fields are: "
                        f"{_java_list(pk_fields)}")  # fmt: skip
    return errors


def _java_list(items: Any) -> str:
    return "[" + ", ".join(str(i) for i in items) + "]"


def _importable(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None
