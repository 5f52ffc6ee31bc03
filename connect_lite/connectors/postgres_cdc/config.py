"""The PostgreSQL CDC connector's configuration: Debezium's keys and defaults
(``PostgresConnectorConfig`` of Debezium 2.7 and 3.x), and the keys connect-lite does not take."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from connect_lite.api import ConfigDef, Importance, Range, Type, ValidString

from .values import Modes

SNAPSHOT_MODES = ("initial", "initial_only", "no_data", "never", "always", "when_needed")
SSL_MODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")

UNSUPPORTED: dict[str, str | None] = {
    "provide.transaction.metadata": "false",
    "message.key.columns": None,
    "column.propagate.source.type": None,
    "datatype.propagate.source.type": None,
    "include.unknown.datatypes": "false",
    "replica.identity.autoset.values": None,
    "heartbeat.action.query": None,
    "snapshot.select.statement.overrides": None,
    "snapshot.include.collection.list": None,
    "signal.data.collection": None,
    "topic.naming.strategy": "io.debezium.schema.SchemaTopicNamingStrategy",
    "topic.delimiter": ".",
    "read.only": "false",
    "slot.stream.params": None,
    "database.initial.statements": None,
    "custom.metric.tags": None,
    "hstore.handling.mode": "json",
    "snapshot.locking.mode": "none",
    "schema.refresh.mode": "columns_diff",
}
"""Debezium keys connect-lite does not take, with the value that means "unused" (None: any
value is refused). Set to anything else, each is a validate error that names it."""


def _regexes(name: str, value: Any) -> str | None:
    for pattern in value or []:
        try:
            re.compile(pattern)
        except re.error as error:
            return f"Invalid value {pattern} for configuration {name}: {error}"
    return None


def _skipped(name: str, value: Any) -> str | None:
    allowed = {"c", "u", "d", "t", "none"}
    bad = [v for v in value or [] if v.strip().lower() not in allowed]
    if bad:
        return (
            f"Invalid value {','.join(value)} for configuration {name}: the operations are "
            "c, u, d and t, or none"
        )
    return None


def _prefix(name: str, value: Any) -> str | None:
    if value is not None and not re.fullmatch(r"[A-Za-z0-9._-]+", value):
        return (
            f"Invalid value {value} for configuration {name}: only alphanumerics, '.', '_' "
            "and '-' are allowed"
        )
    return None


def _slot(name: str, value: Any) -> str | None:
    if value is not None and not re.fullmatch(r"[a-z0-9_]{1,63}", value):
        return (
            f"Invalid value {value} for configuration {name}: a slot name has 1 to 63 lower "
            "case letters, digits or underscores"
        )
    return None


def _plugin(name: str, value: Any) -> str | None:
    if value == "decoderbufs":
        return (
            f"Invalid value decoderbufs for configuration {name}: the decoderbufs plugin needs "
            "a server extension that stock PostgreSQL lacks; connect-lite reads pgoutput "
            "(plugin.name=pgoutput, its default)"
        )
    if value != "pgoutput":
        return f"Invalid value {value} for configuration {name}: connect-lite reads pgoutput"
    return None


def config_def() -> ConfigDef:
    d = ConfigDef()
    d.define(
        "database.hostname",
        Type.STRING,
        importance=Importance.HIGH,
        doc="Resolvable hostname or IP address of the database server.",
    )
    d.define(
        "database.port",
        Type.INT,
        5432,
        Range.between(1, 65535),
        Importance.HIGH,
        "Port of the database server.",
    )
    d.define(
        "database.user",
        Type.STRING,
        importance=Importance.HIGH,
        doc="Name of the database user to connect as.",
    )
    d.define(
        "database.password",
        Type.PASSWORD,
        None,
        importance=Importance.HIGH,
        doc="Password of the database user.",
    )
    d.define(
        "database.dbname",
        Type.STRING,
        importance=Importance.HIGH,
        doc="The name of the database from which to stream changes.",
    )
    d.define(
        "database.sslmode",
        Type.STRING,
        "prefer",
        ValidString.in_(*SSL_MODES),
        Importance.MEDIUM,
        "Whether to use an encrypted connection to the server.",
    )
    d.define(
        "database.tcpKeepAlive",
        Type.BOOLEAN,
        True,
        None,
        Importance.LOW,
        "Enable or disable TCP keep-alive probes.",
    )
    d.define(
        "topic.prefix",
        Type.STRING,
        importance=Importance.HIGH,
        validator=_prefix,
        doc="Topic prefix: the namespace of this connector's topics.",
    )
    d.define(
        "plugin.name",
        Type.STRING,
        "pgoutput",
        _plugin,
        Importance.MEDIUM,
        "The logical decoding plugin on the server: pgoutput.",
    )
    d.define(
        "slot.name",
        Type.STRING,
        "debezium",
        _slot,
        Importance.MEDIUM,
        "The name of the PostgreSQL logical decoding slot.",
    )
    d.define(
        "slot.drop.on.stop",
        Type.BOOLEAN,
        False,
        None,
        Importance.MEDIUM,
        "Whether to drop the slot when the connector is deleted.",
    )
    d.define(
        "slot.max.retries",
        Type.INT,
        6,
        Range.at_least(0),
        Importance.LOW,
        "How many times to retry connecting to a replication slot that is in use.",
    )
    d.define(
        "slot.retry.delay.ms",
        Type.LONG,
        10000,
        Range.at_least(0),
        Importance.LOW,
        "Time to wait between retries of the slot.",
    )
    d.define(
        "status.update.interval.ms",
        Type.INT,
        10000,
        Range.at_least(0),
        Importance.LOW,
        "How often the server is told how far the connector got.",
    )
    d.define(
        "publication.name",
        Type.STRING,
        "dbz_publication",
        None,
        Importance.LOW,
        "The name of the PostgreSQL publication for pgoutput.",
    )
    d.define(
        "publication.autocreate.mode",
        Type.STRING,
        "all_tables",
        ValidString.in_("disabled", "all_tables", "filtered"),
        Importance.LOW,
        "Whether and how to create the publication.",
    )
    for key in (
        "schema.include.list",
        "schema.exclude.list",
        "table.include.list",
        "table.exclude.list",
        "column.include.list",
        "column.exclude.list",
    ):
        d.define(
            key,
            Type.LIST,
            None,
            _regexes,
            Importance.MEDIUM,
            f"Regular expressions ({key}) matched against fully qualified names.",
        )
    d.define(
        "snapshot.mode",
        Type.STRING,
        "initial",
        ValidString.in_(*SNAPSHOT_MODES),
        Importance.LOW,
        "When to take a snapshot of the captured tables.",
    )
    d.define(
        "snapshot.fetch.size",
        Type.INT,
        10240,
        Range.at_least(1),
        Importance.MEDIUM,
        "Rows fetched at a time while a snapshot reads a table.",
    )
    d.define(
        "skipped.operations",
        Type.LIST,
        ["t"],
        _skipped,
        Importance.LOW,
        "The operations not emitted: c, u, d, t, or none.",
    )
    d.define(
        "tombstones.on.delete",
        Type.BOOLEAN,
        True,
        None,
        Importance.HIGH,
        "Whether a delete is followed by a tombstone.",
    )
    d.define(
        "decimal.handling.mode",
        Type.STRING,
        "precise",
        ValidString.in_("precise", "double", "string"),
        Importance.MEDIUM,
        "How DECIMAL and NUMERIC columns are represented.",
    )
    d.define(
        "time.precision.mode",
        Type.STRING,
        "adaptive",
        ValidString.in_("adaptive", "adaptive_time_microseconds", "connect"),
        Importance.MEDIUM,
        "How temporal columns are represented.",
    )
    d.define(
        "binary.handling.mode",
        Type.STRING,
        "bytes",
        ValidString.in_("bytes", "base64", "base64-url-safe", "hex"),
        Importance.LOW,
        "How binary columns are represented.",
    )
    d.define(
        "interval.handling.mode",
        Type.STRING,
        "numeric",
        ValidString.in_("numeric", "string"),
        Importance.LOW,
        "How interval columns are represented: microseconds, or ISO 8601 text.",
    )
    d.define("money.fraction.digits", Type.SHORT, 2, Range.between(0, 30), Importance.LOW,
             "The scale of money columns under decimal.handling.mode=precise.")  # fmt: skip
    d.define(
        "unavailable.value.placeholder",
        Type.STRING,
        "__debezium_unavailable_value",
        None,
        Importance.MEDIUM,
        "The value of an unchanged TOASTed column.",
    )
    d.define(
        "max.batch.size",
        Type.INT,
        2048,
        Range.at_least(1),
        Importance.MEDIUM,
        "Maximum number of events a poll returns.",
    )
    d.define(
        "max.queue.size",
        Type.INT,
        8192,
        Range.at_least(1),
        Importance.LOW,
        "Accepted for Debezium's configs; connect-lite has no queue (see the docs).",
    )
    d.define(
        "max.queue.size.in.bytes",
        Type.LONG,
        0,
        Range.at_least(0),
        Importance.LOW,
        "Accepted for Debezium's configs; connect-lite has no queue (see the docs).",
    )
    d.define(
        "poll.interval.ms",
        Type.LONG,
        500,
        Range.at_least(1),
        Importance.LOW,
        "How long a poll waits for new events.",
    )
    d.define(
        "heartbeat.interval.ms",
        Type.INT,
        0,
        Range.at_least(0),
        Importance.MEDIUM,
        "How often heartbeat records are sent (0: never).",
    )
    d.define(
        "topic.heartbeat.prefix",
        Type.STRING,
        "__debezium-heartbeat",
        None,
        Importance.LOW,
        "The prefix of the heartbeat topic.",
    )
    return d  # fmt: skip


def cross_errors(values: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    for key in ("database.hostname", "database.user", "database.dbname", "topic.prefix"):
        if not values.get(key):
            errors.setdefault(key, []).append(f"Missing required configuration \"{key}\" which "
                                              "has no default value.")  # fmt: skip
    for key, unused in UNSUPPORTED.items():
        given = config.get(key)
        if given is not None and (unused is None or given.strip().lower() != unused.lower()):
            errors.setdefault(key, []).append(
                f"connect-lite does not support {key} (set to {given}); remove it"
            )
    for key in config:
        if key.startswith(("signal.", "incremental.snapshot.")):
            errors.setdefault(key, []).append(
                f"connect-lite does not support {key} (signals and incremental snapshots); "
                "remove it"
            )
    return errors


@dataclass(frozen=True)
class Settings:
    host: str
    port: int
    user: str
    password: str | None
    dbname: str
    sslmode: str
    prefix: str
    slot: str
    drop_slot: bool
    slot_retries: int
    slot_retry_ms: int
    status_interval_ms: int
    publication: str
    autocreate: str
    schema_include: tuple[re.Pattern[str], ...]
    schema_exclude: tuple[re.Pattern[str], ...]
    table_include: tuple[re.Pattern[str], ...]
    table_exclude: tuple[re.Pattern[str], ...]
    column_include: tuple[re.Pattern[str], ...]
    column_exclude: tuple[re.Pattern[str], ...]
    snapshot_mode: str
    fetch_size: int
    skipped: frozenset[str]
    tombstones: bool
    modes: Modes
    placeholder: str
    max_batch: int
    poll_ms: int
    heartbeat_ms: int
    heartbeat_prefix: str

    @staticmethod
    def parse(config: Mapping[str, str]) -> Settings:
        checked = config_def().validate(dict(config))
        values = {k: v.value for k, v in checked.items()}
        errors = {k: v.errors for k, v in checked.items() if v.errors}
        for key, messages in cross_errors(values, config).items():
            errors.setdefault(key, []).extend(messages)
        from connect_lite.connectors.jdbc.config import raise_errors  # the connectors' one

        raise_errors(errors)

        def patterns(key: str) -> tuple[re.Pattern[str], ...]:
            return tuple(re.compile(p.strip(), re.IGNORECASE) for p in values.get(key) or [])

        skipped = {s.strip().lower() for s in values["skipped.operations"] or []}
        password = values.get("database.password")
        mode = values["snapshot.mode"]
        return Settings(
            host=values["database.hostname"],
            port=values["database.port"],
            user=values["database.user"],
            password=getattr(password, "value", password),
            dbname=values["database.dbname"],
            sslmode=values["database.sslmode"],
            prefix=values["topic.prefix"],
            slot=values["slot.name"],
            drop_slot=values["slot.drop.on.stop"],
            slot_retries=values["slot.max.retries"],
            slot_retry_ms=values["slot.retry.delay.ms"],
            status_interval_ms=values["status.update.interval.ms"],
            publication=values["publication.name"],
            autocreate=values["publication.autocreate.mode"],
            schema_include=patterns("schema.include.list"),
            schema_exclude=patterns("schema.exclude.list"),
            table_include=patterns("table.include.list"),
            table_exclude=patterns("table.exclude.list"),
            column_include=patterns("column.include.list"),
            column_exclude=patterns("column.exclude.list"),
            snapshot_mode="no_data" if mode == "never" else mode,
            fetch_size=values["snapshot.fetch.size"],
            skipped=frozenset() if "none" in skipped else frozenset(skipped),
            tombstones=values["tombstones.on.delete"],
            modes=Modes(
                values["decimal.handling.mode"],
                values["time.precision.mode"],
                values["binary.handling.mode"],
                values["money.fraction.digits"],
                values["interval.handling.mode"],
            ),
            placeholder=values["unavailable.value.placeholder"],
            max_batch=values["max.batch.size"],
            poll_ms=values["poll.interval.ms"],
            heartbeat_ms=values["heartbeat.interval.ms"],
            heartbeat_prefix=values["topic.heartbeat.prefix"],
        )

    def captures(self, schema: str, table: str) -> bool:
        """Whether the table is captured (the include and exclude lists, as Debezium's)."""
        if schema in ("pg_catalog", "information_schema") or schema.startswith("pg_temp"):
            return False
        if self.schema_include and not any(p.fullmatch(schema) for p in self.schema_include):
            return False
        if any(p.fullmatch(schema) for p in self.schema_exclude):
            return False
        name = f"{schema}.{table}"
        if self.table_include and not any(p.fullmatch(name) for p in self.table_include):
            return False
        return not any(p.fullmatch(name) for p in self.table_exclude)

    def keeps_column(self, schema: str, table: str, column: str) -> bool:
        name = f"{schema}.{table}.{column}"
        if self.column_include and not any(p.fullmatch(name) for p in self.column_include):
            return False
        return not any(p.fullmatch(name) for p in self.column_exclude)

    def conninfo(self, replication: bool = False) -> dict[str, Any]:
        options = ("-c TimeZone=UTC -c DateStyle=ISO -c IntervalStyle=iso_8601 "
                   "-c extra_float_digits=3")  # fmt: skip
        info: dict[str, Any] = {"host": self.host, "port": self.port, "user": self.user,
                                "dbname": self.dbname, "sslmode": self.sslmode,
                                "options": options}  # fmt: skip
        if self.password is not None:
            info["password"] = self.password
        if replication:
            info["replication"] = "database"
        return info
