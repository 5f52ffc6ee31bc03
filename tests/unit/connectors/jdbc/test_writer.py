"""The executors' writes (the mapInArrow function), on real SQLite files."""

from __future__ import annotations

import datetime
import sqlite3
from pathlib import Path
from typing import Any

import pyarrow as pa

from connect_lite.connectors.jdbc.config import SinkSettings
from connect_lite.connectors.jdbc.fields import layout
from connect_lite.connectors.jdbc.writer import WritePlan, forget_tables, write_batches

KEY = {"type": "struct", "fields": [{"field": "id", "type": "int32"}]}
VALUE = {
    "type": "struct",
    "fields": [{"field": "id", "type": "int32"}, {"field": "qty", "type": "int64"}],
}
ROW = pa.schema(
    [
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("timestamp", pa.timestamp("us", tz="UTC")),
        ("key", pa.struct([("id", pa.int32())])),
        ("value", pa.struct([("id", pa.int32()), ("qty", pa.int64())])),
    ]
)


def plan(path: Path, written: dict[tuple[str, int], int] | None = None, **keys: str) -> WritePlan:
    props = {"connection.url": f"jdbc:sqlite:{path}", "auto.create": "true", "name": "s", **keys}
    settings = SinkSettings.parse(props)
    columns = layout(settings.pk_mode, settings.pk_fields, [], KEY, VALUE, "t")
    return WritePlan(settings, columns, False, False, written or {}, tolerate="tol" in path.name)


def row(offset: int, key: int, qty: int | None, partition: int = 0) -> dict[str, Any]:
    value = None if qty is None else {"id": key, "qty": qty}
    stamp = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    return {"topic": "t", "partition": partition, "offset": offset, "timestamp": stamp,
            "key": {"id": key}, "value": value}  # fmt: skip


def run(the_plan: WritePlan, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    forget_tables()
    batches = [pa.RecordBatch.from_pylist(rows, schema=ROW)]
    return [r for b in write_batches(the_plan, iter(batches)) for r in b.to_pylist()]


def table(path: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as conn:
        return conn.execute('SELECT id, qty FROM "t" ORDER BY id').fetchall()


def test_upserts_and_deletes_keep_each_keys_order_in_small_batches(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    rows = [row(0, 1, 10), row(1, 2, 20), row(2, 1, None), row(3, 1, 11), row(4, 2, None),
            row(5, 3, 30), row(6, 3, 31)]  # fmt: skip
    keys = {"insert.mode": "upsert", "pk.mode": "record_key", "delete.enabled": "true",
            "batch.size": "1"}  # fmt: skip
    assert run(plan(path, **keys), list(reversed(rows))) == [
        {"topic": "t", "partition": 0, "written": 7, "last": 6, "kind": "", "message": ""}
    ]
    assert table(path) == [(1, 11), (3, 31)]


def test_a_redelivery_skips_what_the_task_already_wrote(tmp_path: Path) -> None:
    path = tmp_path / "b.db"
    keys = {"pk.mode": "kafka"}
    run(plan(path, **keys), [row(0, 1, 1), row(1, 2, 2)])
    again = run(plan(path, {("t", 0): 1}, **keys), [row(0, 1, 1), row(1, 2, 2), row(2, 3, 3)])
    assert [(r["written"], r["last"]) for r in again] == [(1, 2)]
    assert table(path) == [(1, 1), (2, 2), (3, 3)]


def test_a_refused_record_fails_its_partition_unless_tolerated(tmp_path: Path) -> None:
    rows = [row(0, 1, 1, partition=0), row(1, 1, 2, partition=0), row(0, 5, 5, partition=1)]
    keys = {"pk.mode": "record_value", "pk.fields": "id"}  # insert twice: a PK violation
    strict = tmp_path / "strict.db"
    results = run(plan(strict, **keys), rows)
    assert [(r["partition"], r["kind"]) for r in results] == [(0, "data"), (1, "")]
    assert "UNIQUE constraint failed" in results[0]["message"]
    assert table(strict) == [(5, 5)]  # partition 0 was rolled back whole
    tolerant = tmp_path / "tol.db"
    results = run(plan(tolerant, **keys), rows)
    assert [(r["partition"], r["kind"], r["last"]) for r in results] == [
        (0, "record", 1), (0, "", 1), (1, "", 0)
    ]  # fmt: skip
    assert table(tolerant) == [(1, 1), (5, 5)]


def test_sqlite_gets_epoch_milliseconds_for_timestamps(tmp_path: Path) -> None:
    path = tmp_path / "ts.db"
    settings = SinkSettings.parse({"connection.url": f"jdbc:sqlite:{path}", "auto.create": "true"})
    at_field = {"field": "at", "type": "int64", "name": "org.apache.kafka.connect.data.Timestamp"}
    stamp = {"type": "struct", "fields": [at_field]}
    columns = layout(settings.pk_mode, [], [], None, stamp, "t")
    schema = pa.schema(
        [*list(ROW)[:5], ("value", pa.struct([("at", pa.timestamp("us", tz="UTC"))]))]
    )
    at = datetime.datetime(2023, 11, 14, 22, 13, 20, tzinfo=datetime.UTC)
    record = {**row(0, 1, 1), "value": {"at": at}}
    forget_tables()
    list(write_batches(WritePlan(settings, columns, False, False, {}),
                       iter([pa.RecordBatch.from_pylist([record], schema=schema)])))  # fmt: skip
    with sqlite3.connect(path) as conn:
        assert conn.execute('SELECT at FROM "t"').fetchall() == [(1_700_000_000_000,)]


def test_schemaless_records_are_refused_without_touching_the_table(tmp_path: Path) -> None:
    from connect_lite.connectors.jdbc.fields import Layout

    path = tmp_path / "schemaless.db"
    settings = SinkSettings.parse({"connection.url": f"jdbc:sqlite:{path}", "name": "s",
                                   "auto.create": "true"})  # fmt: skip
    schemaless = WritePlan(settings, Layout((), (), ()), True, True, {})
    results = run(schemaless, [row(0, 1, 1)])
    assert [r["kind"] for r in results] == ["data"]
    assert "requires records with a non-null Struct or String value" in results[0]["message"]
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT name FROM sqlite_master").fetchall() == []


def test_a_partition_that_cannot_be_written_is_reported_record_by_record(tmp_path: Path) -> None:
    path = tmp_path / "tol-missing.db"  # "tol": the plan tolerates; no auto.create
    keys = {"pk.mode": "record_value", "pk.fields": "id", "auto.create": "false"}
    results = run(plan(path, **keys), [row(0, 1, 1), row(1, 2, 2)])
    assert [(r["kind"], r["last"]) for r in results] == [("record", 0), ("record", 1), ("", 1)]
    assert 'Table "t" is missing and auto-creation is disabled' in results[0]["message"]


def test_parameters_made_a_column_at_a_time_equal_those_made_a_row_at_a_time(
    tmp_path: Path,
) -> None:
    import zoneinfo

    from connect_lite.connectors.jdbc.registry import dialect
    from connect_lite.connectors.jdbc.writer import _all_writes, _column_params, _compiled, _sources

    rows = [row(2, 1, 0), row(0, 2, 20), row(1, 3, 7)]
    rows[0]["value"]["qty"] = None  # a null field
    part = pa.Table.from_pylist(rows, schema=ROW)
    settings = [
        {"pk.mode": "kafka"},
        {"pk.mode": "record_key", "insert.mode": "update"},
        {"pk.mode": "record_value", "pk.fields": "id", "insert.mode": "upsert"},
    ]
    for keys in settings:
        the_plan = plan(tmp_path / "c.db", **keys)
        sql = dialect(the_plan.settings.dialect, the_plan.settings.quote)
        zone = zoneinfo.ZoneInfo("UTC")
        sources = _sources(sql, the_plan, the_plan.layout.columns, (zone, zone))
        by_row = [_compiled(sources)(r) for r in rows]
        if keys.get("insert.mode") == "update":  # SET the others, WHERE the keys
            n = len(the_plan.layout.keys)
            by_row = [p[n:] + p[:n] for p in by_row]
        assert _all_writes(the_plan, part)
        assert _column_params(the_plan, sources, part) == by_row, keys
    tombstone = pa.Table.from_pylist([row(0, 1, 1), row(1, 1, None)], schema=ROW)
    deleting = plan(tmp_path / "d.db", **{"pk.mode": "record_key", "delete.enabled": "true"})
    assert not _all_writes(deleting, tombstone)  # a tombstone: record by record
