"""The SQLite store's own guarantees: WAL, migrations, durability, threads and error mapping."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from connect_lite.api.errors import ConnectError, RetriableError
from connect_lite.api.records import canonical_json
from connect_lite.protocol.states import ConnectorStatus, State, TargetState, TaskStatus
from connect_lite.storage.base import Stores, TopicUse
from connect_lite.storage.sqlite import open_sqlite_stores
from connect_lite.storage.sqlite.db import Database, translated_errors
from connect_lite.storage.sqlite.migrations import MIGRATIONS, applied_migrations, migrate
from connect_lite.storage.sqlite.stores import (
    SqliteConfigStore,
    SqliteOffsetStore,
    SqliteStatusStore,
    SqliteTopicStore,
)

REPO_ROOT = Path(__file__).resolve().parents[3]
TABLES = [
    "active_topics",
    "connector_statuses",
    "connectors",
    "source_offsets",
    "task_configs",
    "task_statuses",
]


def raw(path: Path, **kwargs: object) -> sqlite3.Connection:
    return sqlite3.connect(str(path), isolation_level=None, **kwargs)  # type: ignore[arg-type]


def entry(partition: dict, offset: dict | None) -> dict:
    return {canonical_json(partition): (partition, offset)}


def second_connection(path: str) -> Stores:
    """Stores on another plain connection to a file someone owns: what a tool opens. Only
    one process owns the file (open_sqlite_stores refuses a second owner), but SQLite must
    still cope with other connections."""
    db = Database(path)
    return Stores(
        SqliteConfigStore(db),
        SqliteOffsetStore(db),
        SqliteStatusStore(db),
        SqliteTopicStore(db),
        close=db.close,
    )


def test_wal_mode_is_on_in_the_file(tmp_path: Path) -> None:
    db_path = tmp_path / "state.db"
    open_sqlite_stores(str(db_path)).close()
    conn = raw(db_path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_connection_pragmas(tmp_path: Path) -> None:
    db = Database(str(tmp_path / "state.db"), busy_timeout_s=5.0)
    assert db.query("PRAGMA journal_mode") == [("wal",)]
    assert db.query("PRAGMA busy_timeout") == [(5000,)]
    assert db.query("PRAGMA foreign_keys") == [(1,)]
    db.close()


def test_tables_are_strict(tmp_path: Path) -> None:
    db_path = tmp_path / "state.db"
    open_sqlite_stores(str(db_path)).close()
    conn = raw(db_path)
    rows = conn.execute(
        "SELECT name, strict FROM pragma_table_list WHERE schema = 'main'"
    ).fetchall()
    strict = {name: flag for name, flag in rows if not name.startswith("sqlite_")}
    assert sorted(strict) == sorted([*TABLES, "migrations"])
    assert set(strict.values()) == {1}
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("INSERT INTO active_topics VALUES ('c', 't', 'not an int', 0)")
    conn.close()


def test_migrations_recorded_and_idempotent_on_reopen(tmp_path: Path) -> None:
    db_path = tmp_path / "state.db"
    open_sqlite_stores(str(db_path)).close()
    conn = raw(db_path)
    first = conn.execute("SELECT name, applied_at FROM migrations").fetchall()
    conn.close()
    assert [name for name, _ in first] == [name for name, _ in MIGRATIONS]

    stores = open_sqlite_stores(str(db_path))  # would fail on CREATE TABLE if re-applied
    stores.close()
    db = Database(str(db_path))
    assert migrate(db) == []
    assert db.query("SELECT name, applied_at FROM migrations") == first
    db.close()


def test_new_migration_applies_once(tmp_path: Path) -> None:
    db = Database(str(tmp_path / "state.db"))
    extra = [*MIGRATIONS, ("0099_extra", ["CREATE TABLE extra (a INTEGER) STRICT"])]
    assert migrate(db) == [name for name, _ in MIGRATIONS]
    assert migrate(db, extra) == ["0099_extra"]
    assert migrate(db, extra) == []
    assert applied_migrations(db) == [name for name, _ in extra]
    db.close()


def test_failed_migration_leaves_no_trace(tmp_path: Path) -> None:
    db = Database(str(tmp_path / "state.db"))
    broken = [("0001_broken", ["CREATE TABLE half (a INTEGER) STRICT", "THIS IS NOT SQL"])]
    with pytest.raises(ConnectError) as info:
        migrate(db, broken)
    assert not isinstance(info.value, RetriableError)
    assert isinstance(info.value.__cause__, sqlite3.Error)
    assert applied_migrations(db) == []
    assert db.query("SELECT name FROM sqlite_schema WHERE name = 'half'") == []
    db.close()


def test_atomic_nests_with_savepoints(tmp_path: Path) -> None:
    db = Database(str(tmp_path / "state.db"))
    with db.atomic() as conn:
        conn.execute("CREATE TABLE t (v INTEGER) STRICT")
    with db.atomic() as conn:
        conn.execute("INSERT INTO t VALUES (1)")
        with pytest.raises(ValueError), db.atomic() as inner:
            inner.execute("INSERT INTO t VALUES (2)")
            raise ValueError("undo the inner block only")
        with db.atomic() as inner:
            inner.execute("INSERT INTO t VALUES (3)")
    assert db.query("SELECT v FROM t ORDER BY v") == [(1,), (3,)]

    with pytest.raises(ValueError), db.atomic() as conn:
        conn.execute("INSERT INTO t VALUES (4)")
        with db.atomic() as inner:
            inner.execute("INSERT INTO t VALUES (5)")
        raise ValueError("undo everything, committed savepoint included")
    assert db.query("SELECT v FROM t ORDER BY v") == [(1,), (3,)]
    db.close()


def test_data_survives_close_and_reopen(tmp_path: Path) -> None:
    db_path = str(tmp_path / "state.db")
    stores = open_sqlite_stores(db_path)
    stores.configs.put_connector_config("a", {"k": "v"}, TargetState.PAUSED)
    stores.configs.put_connector_config("b", {"k": "w"})
    stores.configs.put_task_configs("a", [{"t": "0"}, {"t": "1"}])
    stores.offsets.put_many("a", entry({"file": "x"}, {"pos": 7}))
    stores.statuses.put_connector(ConnectorStatus("a", State.FAILED, "w", "trace", "1.2"))
    stores.statuses.put_task(TaskStatus("a", 1, State.RUNNING, "w", None, "1.2"))
    stores.topics.put(TopicUse("a", "orders", 1, 123))
    stores.close()

    again = open_sqlite_stores(db_path)
    assert again.configs.connector_names() == ["a", "b"]
    assert again.configs.get_connector_config("a") == {"k": "v"}
    assert again.configs.get_target_state("a") is TargetState.PAUSED
    assert again.configs.get_task_configs("a") == [{"t": "0"}, {"t": "1"}]
    assert again.offsets.all("a") == [({"file": "x"}, {"pos": 7})]
    assert again.statuses.get_connector("a") == ConnectorStatus(
        "a", State.FAILED, "w", "trace", "1.2"
    )
    assert again.statuses.get_tasks("a") == [TaskStatus("a", 1, State.RUNNING, "w", None, "1.2")]
    assert again.topics.topics("a") == [TopicUse("a", "orders", 1, 123)]
    again.close()


def test_put_many_is_one_transaction(tmp_path: Path) -> None:
    db_path = tmp_path / "state.db"
    stores = open_sqlite_stores(str(db_path))
    stores.offsets.put_many("c", entry({"p": "old"}, {"o": 0}))
    conn = raw(db_path)
    conn.execute(
        "CREATE TRIGGER poison BEFORE INSERT ON source_offsets"
        " WHEN NEW.partition_json LIKE '%poison%' BEGIN SELECT RAISE(ABORT, 'poisoned'); END"
    )
    conn.close()
    batch = {
        **entry({"p": "old"}, None),
        **entry({"p": "new"}, {"o": 1}),
        **entry({"p": "poison"}, {"o": 2}),
    }
    with pytest.raises(ConnectError, match="poisoned"):
        stores.offsets.put_many("c", batch)
    assert stores.offsets.all("c") == [({"p": "old"}, {"o": 0})]
    stores.close()


def test_remove_connector_is_one_transaction(tmp_path: Path) -> None:
    db_path = tmp_path / "state.db"
    stores = open_sqlite_stores(str(db_path))
    stores.configs.put_connector_config("a", {"k": "v"}, TargetState.PAUSED)
    stores.configs.put_task_configs("a", [{"t": "0"}])
    conn = raw(db_path)
    conn.execute(
        "CREATE TRIGGER keep BEFORE DELETE ON connectors BEGIN SELECT RAISE(ABORT, 'kept'); END"
    )
    conn.close()
    with pytest.raises(ConnectError, match="kept"):
        stores.configs.remove_connector("a")
    assert stores.configs.get_task_configs("a") == [{"t": "0"}]
    assert stores.configs.get_target_state("a") is TargetState.PAUSED
    stores.close()


def test_closed_store_raises_connect_error(tmp_path: Path) -> None:
    stores = open_sqlite_stores(str(tmp_path / "state.db"))
    stores.close()
    with pytest.raises(ConnectError) as info:
        stores.configs.connector_names()
    assert not isinstance(info.value, RetriableError)


def test_concurrent_writes_from_many_threads_all_land(tmp_path: Path) -> None:
    db_path = str(tmp_path / "state.db")
    shared = open_sqlite_stores(db_path)
    other = second_connection(db_path)  # a second connection to the same file as well
    errors: list[BaseException] = []

    def writer(worker: int) -> None:
        stores = shared if worker % 2 == 0 else other
        try:
            for i in range(40):
                stores.offsets.put_many("c", entry({"w": worker, "i": i}, {"n": i}))
                stores.statuses.put_task(TaskStatus("c", worker * 100 + i, State.RUNNING, "w"))
                stores.topics.put(TopicUse("c", f"t-{worker}-{i}", worker, i))
        except BaseException as exc:  # reported to the main thread below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    assert len(shared.offsets.all("c")) == 6 * 40
    assert len(other.statuses.get_tasks("c")) == 6 * 40
    assert len(shared.topics.topics("c")) == 6 * 40
    assert shared.offsets.get("c", {"i": 39, "w": 5}) == {"n": 39}
    shared.close()
    other.close()


def test_locked_database_raises_retriable_error(tmp_path: Path) -> None:
    db_path = tmp_path / "state.db"
    stores = open_sqlite_stores(str(db_path), busy_timeout_s=0.05)
    stores.configs.put_connector_config("a", {"v": "1"})
    holder = raw(db_path, timeout=0)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(RetriableError) as info:
            stores.configs.put_connector_config("a", {"v": "2"})
        assert isinstance(info.value.__cause__, sqlite3.OperationalError)
        with pytest.raises(RetriableError):
            stores.statuses.put_connector(ConnectorStatus("a", State.RUNNING, "w"))
        late = Database(str(db_path), busy_timeout_s=0.05)
        with pytest.raises(RetriableError):
            migrate(late)  # writes, so it waits for the holder's lock, then gives up
        late.close()
        # WAL: readers are not blocked by the writer.
        assert stores.configs.get_connector_config("a") == {"v": "1"}
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    stores.configs.put_connector_config("a", {"v": "3"})  # the store recovered cleanly
    assert stores.configs.get_connector_config("a") == {"v": "3"}
    stores.close()


@pytest.mark.parametrize(
    ("code", "message", "retriable"),
    [
        (sqlite3.SQLITE_BUSY, "database is locked", True),
        (sqlite3.SQLITE_LOCKED, "database table is locked", True),
        (sqlite3.SQLITE_IOERR_WRITE, "disk I/O error", True),
        (sqlite3.SQLITE_IOERR, "disk I/O error", True),
        (sqlite3.SQLITE_CORRUPT, "database disk image is malformed", False),
        (sqlite3.SQLITE_CONSTRAINT_UNIQUE, "UNIQUE constraint failed", False),
    ],
)
def test_error_classification(code: int, message: str, retriable: bool) -> None:
    error = sqlite3.OperationalError(message)
    error.sqlite_errorcode = code
    with pytest.raises(ConnectError) as info, translated_errors():
        raise error
    assert isinstance(info.value, RetriableError) is retriable
    assert info.value.__cause__ is error


CHILD = """
import sys
from connect_lite.storage.sqlite import open_sqlite_stores
stores = open_sqlite_stores(sys.argv[1])
seq = 0
while True:
    partition = {"seq": seq}
    stores.offsets.put_many("c", {str(seq): (partition, {"n": seq})})
    print(seq, flush=True)
    seq += 1
"""


def test_committed_offsets_survive_kill_9(tmp_path: Path) -> None:
    db_path = tmp_path / "state.db"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(db_path)],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    seen: list[int] = []
    deadline = time.monotonic() + 60
    try:
        while len(seen) < 100 and time.monotonic() < deadline:
            line = child.stdout.readline()
            if not line:
                break
            seen.append(int(line))
        assert child.poll() is None, "the writer should still be running when it is killed"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        if child.poll() is None:
            child.kill()
        child.wait(timeout=30)
    seen.extend(int(line) for line in child.stdout.read().split())
    child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    assert len(seen) >= 100

    stores = open_sqlite_stores(str(db_path))
    stored = {offset["n"] for _, offset in stores.offsets.all("c")}
    stores.close()
    assert set(seen) <= stored
    conn = raw(db_path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


def test_a_read_does_not_wait_for_a_transaction_in_progress(tmp_path: Path) -> None:
    """A REST request's read goes on while another thread's commit holds the write lock
    (under load, its fsync): it sees what is committed, not what is being written."""
    stores = open_sqlite_stores(str(tmp_path / "state.db"))
    stores.configs.put_connector_config("a", {"name": "a"}, TargetState.RUNNING)
    db: Database = stores.configs._db  # type: ignore[attr-defined]
    inside, read = threading.Event(), threading.Event()
    seen: list[object] = []

    def slow_transaction() -> None:
        with db.atomic() as conn:
            conn.execute("UPDATE connectors SET target_state = 'PAUSED' WHERE name = 'a'")
            assert db.query("SELECT target_state FROM connectors") == [("PAUSED",)]  # its own
            inside.set()
            read.wait(10)  # with one connection, the read below would wait for this

    def reader() -> None:
        seen.append(stores.configs.get_target_state("a"))
        seen.append(stores.configs.connector_names())
        read.set()

    writer = threading.Thread(target=slow_transaction)
    writer.start()
    assert inside.wait(5)
    threading.Thread(target=reader).start()
    writer.join(20)
    assert read.is_set(), "the read waited until the transaction gave up"
    assert seen == [TargetState.RUNNING, ["a"]]
    assert stores.configs.get_target_state("a") is TargetState.PAUSED  # committed: seen
    assert stores.close is not None
    stores.close()
