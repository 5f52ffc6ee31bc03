"""The JDBC source's reads of one table, on real SQLite files: queries, offsets, records."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

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
