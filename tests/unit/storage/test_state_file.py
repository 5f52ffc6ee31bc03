"""The state file's guards: private mode, secure delete, a bounded WAL."""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from connect_lite.storage.sqlite import open_sqlite_stores
from connect_lite.storage.sqlite.db import WAL_SIZE_LIMIT, Database


def mode(path: Path | str) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(str(path), isolation_level=None)


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The usual umask, under which SQLite would create a 0644 file."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


# ---- mode 0600 ---------------------------------------------------------------------------


def test_a_new_state_file_its_wal_and_shm_are_0600(tmp_path: Path, umask_022: None) -> None:
    db_path = tmp_path / "state.db"
    stores = open_sqlite_stores(str(db_path))
    try:
        stores.configs.put_connector_config("a", {"k": "v"})
        files = [db_path, Path(f"{db_path}-wal"), Path(f"{db_path}-shm")]
        assert {str(f): mode(f) for f in files} == {str(f): 0o600 for f in files}
    finally:
        stores.close()
    # The umask was honest: a file SQLite creates itself is 0644 under it.
    plain = tmp_path / "plain.db"
    raw(plain).execute("CREATE TABLE t (a INTEGER)")
    assert mode(plain) == 0o644


def test_a_file_open_to_others_starts_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db_path = tmp_path / "state.db"
    open_sqlite_stores(str(db_path)).close()
    os.chmod(db_path, 0o644)
    with caplog.at_level(logging.WARNING):
        stores = open_sqlite_stores(str(db_path))
    try:
        assert stores.configs.connector_names() == []  # it started
    finally:
        stores.close()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        f"State file {db_path} can be read by other users ({db_path} has mode 0644); "
        f"connector configs in it may hold credentials. Fix: chmod 600 {db_path}"
    ]
    assert mode(db_path) == 0o644  # warned, not changed behind the owner's back

    caplog.clear()
    os.chmod(db_path, 0o600)
    with caplog.at_level(logging.WARNING):
        open_sqlite_stores(str(db_path)).close()
    assert [r for r in caplog.records if r.levelno == logging.WARNING] == []


# ---- secure_delete and the WAL -----------------------------------------------------------


def test_secure_delete_leaves_no_deleted_secret_in_the_file(tmp_path: Path) -> None:
    secret = b"hunter2-a9f3c1e7-secret"
    db_path = tmp_path / "state.db"
    stores = open_sqlite_stores(str(db_path))
    stores.configs.put_connector_config("keep", {"connector.class": "X"})
    stores.configs.put_connector_config("gone", {"password": secret.decode()})
    stores.configs.remove_connector("gone")
    stores.close()
    assert not Path(f"{db_path}-wal").exists()
    assert secret not in db_path.read_bytes()

    # The same writes without secure_delete leave the secret behind: the check can fail.
    control = tmp_path / "control.db"
    conn = raw(control)
    conn.execute("PRAGMA secure_delete = OFF")
    conn.execute("CREATE TABLE connectors (name TEXT, config TEXT)")
    conn.execute("INSERT INTO connectors VALUES ('keep', '{}')")
    conn.execute("INSERT INTO connectors VALUES ('gone', ?)", (secret.decode(),))
    conn.execute("DELETE FROM connectors WHERE name = 'gone'")
    conn.close()
    assert secret in control.read_bytes()


def test_the_connection_runs_with_secure_delete_and_a_wal_limit(tmp_path: Path) -> None:
    db = Database(str(tmp_path / "state.db"))
    try:
        assert db.query("PRAGMA secure_delete") == [(1,)]
        assert db.query("PRAGMA journal_size_limit") == [(WAL_SIZE_LIMIT,)]
        assert db.query("PRAGMA wal_autocheckpoint") == [(1000,)]
    finally:
        db.close()


def test_the_wal_is_cut_back_after_a_large_write_and_empty_after_close(tmp_path: Path) -> None:
    db_path = tmp_path / "state.db"
    wal = Path(f"{db_path}-wal")
    stores = open_sqlite_stores(str(db_path))
    big = {str(i): ({"p": i}, {"blob": f"{i:06d}" * 700}) for i in range(3000)}  # ~12 MiB
    stores.offsets.put_many("big", big)  # one transaction: the WAL must hold all of it
    assert wal.stat().st_size > 2 * WAL_SIZE_LIMIT, "precondition: a WAL over the limit"
    sizes = []
    for i in range(20):
        stores.configs.put_connector_config(f"c{i}", {"k": str(i)})
        sizes.append(wal.stat().st_size)
    assert max(sizes[1:]) <= WAL_SIZE_LIMIT, sizes

    # Another connection keeps SQLite from deleting the WAL at close; TRUNCATE empties it.
    reader = raw(db_path)
    assert reader.execute("SELECT count(*) FROM source_offsets").fetchone() == (3000,)
    try:
        stores.close()
        assert wal.stat().st_size == 0
    finally:
        reader.close()
    assert not wal.exists()
