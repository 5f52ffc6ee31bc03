"""The state file's guards: private mode, secure delete, a bounded WAL, one owner."""

from __future__ import annotations

import logging
import os
import signal
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from connect_lite.api.errors import RetriableError
from connect_lite.storage.base import StateFileInUseError
from connect_lite.storage.sqlite import open_sqlite_stores
from connect_lite.storage.sqlite.db import WAL_SIZE_LIMIT, Database
from connect_lite.storage.sqlite.lock import lock_path

REPO_ROOT = Path(__file__).resolve().parents[3]


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


def test_a_new_state_file_its_wal_shm_and_lock_are_0600(tmp_path: Path, umask_022: None) -> None:
    db_path = tmp_path / "state.db"
    stores = open_sqlite_stores(str(db_path))
    try:
        stores.configs.put_connector_config("a", {"k": "v"})
        files = [db_path, Path(f"{db_path}-wal"), Path(f"{db_path}-shm"), Path(lock_path(db_path))]
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


# ---- one owner ---------------------------------------------------------------------------


def test_a_second_owner_is_refused_naming_the_holder_and_the_first_is_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db_path = tmp_path / "state.db"
    first = open_sqlite_stores(str(db_path))
    try:
        first.configs.put_connector_config("a", {"k": "v"})
        with pytest.raises(StateFileInUseError) as info:
            open_sqlite_stores(str(db_path))
        assert info.value.pid == os.getpid()
        assert str(info.value) == (
            f"State file {db_path} is in use by another connect-lite worker "
            f"(pid {os.getpid()}); a state file has one owner. Stop that worker first, "
            "or give this one its own state.storage.file."
        )
        assert not isinstance(info.value, RetriableError)
        # Another spelling of the same file is the same file.
        link = tmp_path / "link.db"
        link.symlink_to(db_path)
        with pytest.raises(StateFileInUseError):
            open_sqlite_stores(str(link))
        monkeypatch.chdir(tmp_path)
        with pytest.raises(StateFileInUseError):
            open_sqlite_stores("state.db")
        first.configs.put_connector_config("b", {"k": "w"})
        assert first.configs.connector_names() == ["a", "b"]
    finally:
        first.close()


def test_the_lock_is_released_at_close_and_the_pid_cleared(tmp_path: Path) -> None:
    db_path = tmp_path / "state.db"
    lock_file = Path(lock_path(db_path))
    stores = open_sqlite_stores(str(db_path))
    assert lock_file.read_text() == f"{os.getpid()}\n"
    stores.close()
    assert lock_file.read_text() == ""
    again = open_sqlite_stores(str(db_path))
    again.close()


HOLDER = """
import sys, time
from connect_lite.storage.sqlite import open_sqlite_stores
stores = open_sqlite_stores(sys.argv[1])
stores.configs.put_connector_config("held", {"k": "v"})
print("ready", flush=True)
time.sleep(600)
"""


def test_a_killed_owner_leaves_no_stale_lock(tmp_path: Path) -> None:
    db_path = tmp_path / "state.db"
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db_path)],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "ready\n"
        with pytest.raises(StateFileInUseError) as info:
            open_sqlite_stores(str(db_path))
        assert info.value.pid == child.pid
        assert f"(pid {child.pid})" in str(info.value)
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(timeout=30) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=30)
        if child.stdout is not None:
            child.stdout.close()
    # The dead holder's pid is still written there: only the kernel's lock counts.
    assert Path(lock_path(db_path)).read_text() == f"{child.pid}\n"
    stores = open_sqlite_stores(str(db_path))
    try:
        assert stores.configs.connector_names() == ["held"]
        assert Path(lock_path(db_path)).read_text() == f"{os.getpid()}\n"
    finally:
        stores.close()
