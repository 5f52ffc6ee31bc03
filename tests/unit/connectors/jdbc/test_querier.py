"""The JDBC source's reads of one table, on real SQLite files: queries, offsets, records."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from connect_lite.api import ConnectError
from connect_lite.connectors.jdbc.dialects import SqliteDialect, TableId
from connect_lite.connectors.jdbc.querier import Querier
from connect_lite.connectors.jdbc.source_config import SourceSettings


def setup(path: Path, rows: list[tuple[Any, ...]]) -> sqlite3.Connection:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (id INTEGER NOT NULL, ts INTEGER NOT NULL, name TEXT)")
    conn.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
    conn.commit()
    return conn


def querier(path: Path, **keys: str) -> Querier:
    props = {"connection.url": f"jdbc:sqlite:{path}", "topic.prefix": "p-", **keys}
    return Querier(SqliteDialect(True), SourceSettings.parse(props), TableId(("t",)), None)


def test_incrementing_offsets_batches_and_the_next_query(tmp_path: Path) -> None:
    conn = setup(tmp_path / "a.db", [(i, 0, f"n{i}") for i in range(1, 6)])
    keys = {"mode": "incrementing", "incrementing.column.name": "id", "batch.max.rows": "2"}
    q = querier(tmp_path / "a.db", **keys)
    first = q.poll(conn, 0.0)
    assert [r.value.get("id") for r in first] == [1, 2] and q.reading
    assert first[0].topic == "p-t" and first[0].value_schema.name == "t"
    assert first[0].source_partition == {"protocol": "1", "table": "t"}
    assert [r.source_offset for r in first] == [{"incrementing": 1}, {"incrementing": 2}]
    assert [r.value.get("id") for r in q.poll(conn, 0.0)] == [3, 4]
    assert [r.value.get("id") for r in q.poll(conn, 0.0)] == [5] and not q.reading
    conn.execute("INSERT INTO t VALUES (6, 0, 'n6')")
    conn.commit()
    assert [r.value.get("id") for r in q.poll(conn, 10.0)] == [6]


def test_timestamp_offsets_never_fall_inside_a_run_of_equal_timestamps(tmp_path: Path) -> None:
    rows = [(1, 1000, "a"), (2, 2000, "b"), (3, 2000, "c"), (4, 3000, "d")]
    conn = setup(tmp_path / "b.db", rows)
    q = querier(tmp_path / "b.db", **{"mode": "timestamp", "timestamp.column.name": "ts",
                                      "batch.max.rows": "2"})  # fmt: skip
    records = q.poll(conn, 0.0) + q.poll(conn, 0.0) + q.poll(conn, 0.0)
    stamps = [(r.source_offset or {}).get("timestamp") for r in records]
    assert stamps == [1000, 1000, 2000, 3000]  # b keeps a's offset: c shares its timestamp


def test_bulk_reads_everything_each_time_without_offsets(tmp_path: Path) -> None:
    conn = setup(tmp_path / "c.db", [(1, 0, "a"), (2, 0, None)])
    q = querier(tmp_path / "c.db", mode="bulk")
    first = q.poll(conn, 0.0)
    assert [(r.source_partition, r.source_offset) for r in first] == [({"table": "t"}, None)] * 2
    assert [f.name for f in first[0].value_schema.fields] == ["id", "ts", "name"]
    assert [f.schema.optional for f in first[0].value_schema.fields] == [False, False, True]
    assert len(q.poll(conn, 10.0)) == 2


def test_timestamp_incrementing_resumes_inside_a_timestamp(tmp_path: Path) -> None:
    conn = setup(tmp_path / "d.db", [(1, 1000, "a"), (2, 1000, "b"), (3, 2000, "c")])
    keys = {"mode": "timestamp+incrementing", "incrementing.column.name": "id",
            "timestamp.column.name": "ts"}  # fmt: skip
    q = querier(tmp_path / "d.db", **keys)
    q.offset = {"timestamp": 1000, "timestamp_nanos": 0, "incrementing": 1}
    assert [r.value.get("id") for r in q.poll(conn, 0.0)] == [2, 3]
    assert q.offset == {"timestamp": 2000, "timestamp_nanos": 0, "incrementing": 3}


def test_timestamp_initial_starts_there_once(tmp_path: Path) -> None:
    import time

    now = int(time.time() * 1000)
    conn = setup(tmp_path / "e.db", [(1, 1000, "old"), (2, now - 5000, "recent")])
    q = querier(tmp_path / "e.db", **{"mode": "timestamp", "timestamp.column.name": "ts",
                                      "timestamp.initial": str(now - 60_000)})  # fmt: skip
    assert [r.value.get("name") for r in q.poll(conn, 0.0)] == ["recent"]
    fresh = querier(tmp_path / "e.db", **{"mode": "timestamp", "timestamp.column.name": "ts",
                                          "timestamp.initial": "-1"})  # fmt: skip
    assert fresh.poll(conn, 0.0) == [] and fresh.offset["timestamp"] >= now  # the DB's now
    conn.execute("INSERT INTO t VALUES (3, ?, 'new')", (int(time.time() * 1000) + 50,))
    conn.commit()
    time.sleep(0.2)
    assert [r.value.get("name") for r in fresh.poll(conn, 10.0)] == ["new"]


def test_numeric_without_precision_is_an_unbounded_decimal() -> None:
    from connect_lite.connectors.jdbc.dialects import SqlColumn
    from connect_lite.connectors.jdbc.querier import field_schema

    for mapping in ("none", "best_fit"):
        schema = field_schema(SqlColumn("n", "numeric", True, None, None), mapping)
        assert schema is not None and schema.name == "org.apache.kafka.connect.data.Decimal"
        assert schema.params["scale"] == "127"


def test_without_an_incrementing_column_the_autoincrement_key_is_used(tmp_path: Path) -> None:
    path = tmp_path / "d.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (name TEXT, id INTEGER PRIMARY KEY AUTOINCREMENT)")
    conn.executemany("INSERT INTO t (name) VALUES (?)", [("a",), ("b",)])
    conn.commit()
    q = querier(path, mode="incrementing")
    assert [r.source_offset for r in q.poll(conn, 0.0)] == [
        {"incrementing": 1},
        {"incrementing": 2},
    ]
    assert q.incrementing == "id"
    conn.execute("CREATE TABLE plain (id INTEGER PRIMARY KEY, name TEXT)")  # no AUTOINCREMENT
    props = {"connection.url": f"jdbc:sqlite:{path}", "topic.prefix": "p-", "mode": "incrementing"}
    lacking = Querier(SqliteDialect(True), SourceSettings.parse(props), TableId(("plain",)), None)
    with pytest.raises(ConnectError, match="Cannot find an auto-incrementing column"):
        lacking.poll(conn, 0.0)
