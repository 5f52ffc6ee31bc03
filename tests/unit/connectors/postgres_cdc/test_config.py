"""The CDC connector's settings: Debezium's keys and defaults, and what connect-lite refuses."""

from __future__ import annotations

import pytest

from connect_lite.api import ConfigError
from connect_lite.connectors.postgres_cdc.config import Settings

BASE = {"database.hostname": "h", "database.user": "u", "database.dbname": "d",
        "topic.prefix": "p"}  # fmt: skip


def test_debeziums_defaults() -> None:
    s = Settings.parse(BASE)
    assert (s.port, s.slot, s.publication, s.autocreate) == (
        5432, "debezium", "dbz_publication", "all_tables")  # fmt: skip
    assert s.snapshot_mode == "initial" and s.skipped == frozenset({"t"}) and s.tombstones
    assert (s.max_batch, s.poll_ms, s.heartbeat_ms) == (2048, 500, 0)
    assert Settings.parse({**BASE, "snapshot.mode": "never"}).snapshot_mode == "no_data"
    assert Settings.parse({**BASE, "skipped.operations": "none"}).skipped == frozenset()


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("plugin.name", "decoderbufs"),
        ("slot.name", "Bad-Slot"),
        ("message.key.columns", "t:id"),
        ("topic.naming.strategy", "x.Y"),
        ("signal.enabled.channels", "source"),
        ("table.include.list", "(unclosed"),
    ],
)
def test_unsupported_or_bad_keys_are_errors_that_name_the_key(key: str, value: str) -> None:
    with pytest.raises(ConfigError) as raised:
        Settings.parse({**BASE, key: value})
    assert key in raised.value.errors  # type: ignore[attr-defined]


def test_filters_match_whole_names_case_insensitively() -> None:
    s = Settings.parse({**BASE, "table.include.list": "public\\.Orders,inv\\..*",
                        "column.exclude.list": "public\\.orders\\.secret"})  # fmt: skip
    assert s.captures("public", "orders") and s.captures("inv", "x")
    assert not s.captures("public", "orders2") and not s.captures("pg_catalog", "pg_class")
    assert not s.keeps_column("public", "orders", "secret")
    assert s.keeps_column("public", "orders", "secretive")
