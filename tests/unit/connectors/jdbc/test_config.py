"""The JDBC sink's keys and the checks across them."""

from __future__ import annotations

from connect_lite.connectors.jdbc.config import (
    InsertMode,
    PkMode,
    SinkSettings,
    cross_field_errors,
    sink_config_def,
)


def errors_of(config: dict[str, str], importable: bool = True) -> dict[str, list[str]]:
    values = {n: cv.value for n, cv in sink_config_def().validate(config).items()}
    found = {n: cv.errors for n, cv in sink_config_def().validate(config).items() if cv.errors}
    found.update(cross_field_errors(values, lambda _module: importable))
    return found


URL = {"connection.url": "jdbc:postgresql://h/db"}


def test_confluents_defaults() -> None:
    settings = SinkSettings.parse({**URL, "name": "s"})
    assert settings.insert_mode is InsertMode.INSERT and settings.pk_mode is PkMode.NONE
    assert (settings.batch_size, settings.max_retries, settings.retry_backoff_ms) == (
        3000,
        10,
        3000,
    )
    assert (settings.table_format, settings.timezone, settings.quote) == ("${topic}", "UTC", True)
    assert settings.dialect == "PostgreSqlDatabaseDialect" and settings.connector == "s"


def test_enums_take_all_lower_or_all_upper_case_only() -> None:
    assert not errors_of({**URL, "insert.mode": "UPSERT", "pk.mode": "RECORD_KEY"})
    assert "insert.mode" in errors_of({**URL, "insert.mode": "Upsert"})


def test_checks_across_keys() -> None:
    deletes = errors_of({**URL, "delete.enabled": "true", "pk.mode": "kafka"})
    assert deletes["delete.enabled"] == ["Deletes are only supported for pk.mode record_key"]
    assert deletes["pk.mode"] == ["Deletes are only supported for pk.mode record_key"]
    assert "pk.mode" in errors_of({**URL, "insert.mode": "update"})
    assert "pk.fields" in errors_of({**URL, "pk.mode": "kafka", "pk.fields": "a,b"})


def test_urls_dialects_and_drivers() -> None:
    assert "connection.url" in errors_of({"connection.url": "jdbc:oracle:thin:@h:1521/x"})
    assert "dialect.name" in errors_of({**URL, "dialect.name": "MySqlDatabaseDialect"})
    missing = errors_of(URL, importable=False)["connection.url"]
    assert missing == [
        "The PostgreSqlDatabaseDialect needs the Python driver 'psycopg', which is not "
        "installed: pip install 'connect-lite[postgres]'"
    ]
    assert not errors_of({"connection.url": "jdbc:sqlite:/tmp/x.db"}, importable=False)
