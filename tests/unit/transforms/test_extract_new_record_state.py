"""Debezium's ExtractNewRecordState on change events as the CDC connector makes them."""

from __future__ import annotations

from typing import Any

import pytest

from connect_lite.api import ConfigError, Schema, SchemaBuilder, SourceRecord, Struct
from connect_lite.connectors.postgres_cdc.config import Settings
from connect_lite.connectors.postgres_cdc.source import _SOURCE, table_of
from connect_lite.transforms.extract_new_record_state import ExtractNewRecordState

SETTINGS = Settings.parse({"database.hostname": "h", "database.user": "u",
                           "database.dbname": "d", "topic.prefix": "srv"})  # fmt: skip
TABLE = table_of(SETTINGS, "public", "orders",
                 [("id", 23, -1, True, True), ("item", 25, -1, False, False)])  # fmt: skip


def event(op: str, before: dict[str, Any] | None, after: dict[str, Any] | None) -> SourceRecord:
    source = Struct(_SOURCE, {"version": "2.7.4.Final", "connector": "postgresql",
                              "name": "srv", "ts_ms": 5, "db": "d", "schema": "public",
                              "table": "orders", "lsn": 42})  # fmt: skip
    value = Struct(TABLE.envelope, {
        "before": None if before is None else Struct(TABLE.value_schema, before),
        "after": None if after is None else Struct(TABLE.value_schema, after),
        "source": source, "op": op, "ts_ms": 7})  # fmt: skip
    row = after or before or {"id": 0}
    key = Struct(TABLE.key_schema, {"id": row["id"]}) if TABLE.key_schema else None  # type: ignore[arg-type]
    return SourceRecord({"server": "srv"}, {"lsn": 42}, TABLE.topic, value, key, None,
                        TABLE.key_schema, TABLE.envelope)  # fmt: skip


def unwrap(**config: str) -> ExtractNewRecordState:
    t = ExtractNewRecordState()
    t.configure(config)
    return t


CREATE = event("c", None, {"id": 1, "item": "a"})
DELETE = event("d", {"id": 1, "item": "a"}, None)
TOMBSTONE = SourceRecord({"server": "srv"}, {"lsn": 42}, TABLE.topic, None, DELETE.key, None,
                         TABLE.key_schema, None)  # fmt: skip
TRUNCATE = event("t", None, None)


def test_the_legacy_defaults_keep_rows_and_drop_deletes_tombstones_and_truncates() -> None:
    t = unwrap()
    out = t.apply(CREATE)
    assert out.value == Struct(TABLE.value_schema, {"id": 1, "item": "a"})
    assert out.value_schema is TABLE.value_schema and out.key == CREATE.key
    assert [t.apply(r) for r in (DELETE, TOMBSTONE, TRUNCATE)] == [None, None, None]
    heartbeat_schema = SchemaBuilder.struct().name("io.debezium.connector.common.Heartbeat")
    beat_schema = heartbeat_schema.field("ts_ms", Schema.INT64_SCHEMA).build()
    beat = SourceRecord({}, {}, "hb", Struct(beat_schema, {"ts_ms": 1}), None, None, None,
                        beat_schema)  # fmt: skip
    assert t.apply(beat) is beat


def test_each_delete_tombstone_handling_mode() -> None:
    tombstone_mode = unwrap(**{"delete.tombstone.handling.mode": "tombstone"})
    deleted = tombstone_mode.apply(DELETE)
    assert deleted.value is None and deleted.value_schema is TABLE.value_schema
    assert tombstone_mode.apply(TOMBSTONE) is None
    rewrite = unwrap(**{"delete.tombstone.handling.mode": "rewrite"})
    created, removed = rewrite.apply(CREATE), rewrite.apply(DELETE)
    assert created.value.get("__deleted") == "false" and removed.value.get("__deleted") == "true"
    assert removed.value.get("item") == "a"  # the row before the delete
    assert created.value_schema.name == TABLE.value_schema.name
    assert not created.value_schema.optional
    assert created.value_schema.field("__deleted").schema == Schema.OPTIONAL_STRING_SCHEMA
    assert rewrite.apply(TOMBSTONE) is None
    keeping = unwrap(**{"delete.tombstone.handling.mode": "rewrite-with-tombstone"})
    assert keeping.apply(TOMBSTONE) is TOMBSTONE
    legacy = unwrap(**{"delete.handling.mode": "rewrite", "drop.tombstones": "false"})
    assert legacy.apply(TOMBSTONE) is TOMBSTONE
    assert legacy.apply(DELETE).value.get("__deleted") == "true"


def test_added_fields_and_headers_take_debeziums_names_and_sources() -> None:
    t = unwrap(**{"add.fields": "op,table,source.ts_ms,lsn:position,missing",
                  "add.headers": "op,db"})  # fmt: skip
    out = t.apply(CREATE)
    names = [f.name for f in out.value_schema.fields]
    assert names == ["id", "item", "__op", "__table", "__source_ts_ms", "__position"]
    assert out.value.get("__op") == "c" and out.value.get("__table") == "orders"
    assert out.value.get("__source_ts_ms") == 5 and out.value.get("__position") == 42
    assert all(out.value_schema.field(n).schema.optional for n in names[2:])
    assert [(h.key, h.value) for h in out.headers] == [("__op", "c"), ("__db", "d")]
    kept = unwrap(**{"delete.tombstone.handling.mode": "rewrite-with-tombstone",
                     "add.headers": "op,db"}).apply(TOMBSTONE)  # fmt: skip
    assert [(h.key, h.value) for h in kept.headers] == [("__op", "d")]


def test_route_by_field_and_bad_configs() -> None:
    routed = unwrap(**{"route.by.field": "item"}).apply(CREATE)
    assert routed.topic == "a"
    with pytest.raises(ConfigError):
        unwrap(**{"delete.tombstone.handling.mode": "sometimes"})
    with pytest.raises(ConfigError):
        unwrap(**{"add.fields": "a:b:c"})
