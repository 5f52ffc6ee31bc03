"""The state file's guards: private mode, secure delete, a bounded WAL, one owner, refusals."""

from __future__ import annotations

import hashlib
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

from connect_lite import __version__
from connect_lite.api.errors import ConnectError, RetriableError
from connect_lite.protocol.states import TargetState
from connect_lite.storage.base import (
    StateFileDamagedError,
    StateFileInUseError,
    StateFileTooNewError,
    Stores,
)
from connect_lite.storage.sqlite import open_sqlite_stores
from connect_lite.storage.sqlite.db import WAL_SIZE_LIMIT, Database
from connect_lite.storage.sqlite.lock import lock_path
from connect_lite.storage.sqlite.migrations import MIGRATIONS, migrate

REPO_ROOT = Path(__file__).resolve().parents[3]


def mode(path: Path | str) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


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


def filled(path: Path, connectors: int = 50) -> None:
    """A real state file with some connectors and offsets, closed."""
    stores = open_sqlite_stores(str(path))
    for i in range(connectors):
        stores.configs.put_connector_config(f"c{i}", {"connector.class": "X", "file": "f" * 100})
    stores.offsets.put_many("c0", {str(i): ({"p": i}, {"o": "x" * 50}) for i in range(300)})
    stores.close()


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


def test_a_refused_open_releases_the_lock(tmp_path: Path) -> None:
    db_path = tmp_path / "state.db"
    db_path.write_text("not a database\n" * 100)
    with pytest.raises(StateFileDamagedError):
        open_sqlite_stores(str(db_path))
    with pytest.raises(StateFileDamagedError):  # not StateFileInUseError: nobody holds it
        open_sqlite_stores(str(db_path))


# ---- a newer file ------------------------------------------------------------------------


def test_a_file_with_an_unknown_migration_is_refused_and_left_unchanged(tmp_path: Path) -> None:
    db_path = tmp_path / "state.db"
    filled(db_path)
    conn = raw(db_path)
    conn.execute(
        "INSERT INTO migrations (name, applied_at, app_version) VALUES (?, ?, ?), (?, ?, ?)",
        ("0003_future_thing", 1, "9.9.0", "0004_later_thing", 2, "9.10.1"),
    )
    conn.close()
    before = digest(db_path)
    with pytest.raises(StateFileTooNewError) as info:
        open_sqlite_stores(str(db_path))
    assert str(info.value) == (
        f"State file {db_path} was written by a newer connect-lite: it has migrations that "
        f"connect-lite {__version__} does not know: 0003_future_thing (applied by "
        "connect-lite 9.9.0), 0004_later_thing (applied by connect-lite 9.10.1). Nothing "
        "was written to it; run the version that wrote it, or restore a backup made for "
        "this version."
    )
    assert info.value.unknown == {"0003_future_thing": "9.9.0", "0004_later_thing": "9.10.1"}
    assert digest(db_path) == before


def test_migrations_record_the_version_that_applied_them(tmp_path: Path) -> None:
    db_path = tmp_path / "state.db"
    open_sqlite_stores(str(db_path)).close()
    conn = raw(db_path)
    rows = conn.execute("SELECT name, app_version FROM migrations ORDER BY rowid").fetchall()
    conn.close()
    assert rows == [("0001_initial", __version__), ("0002_migrations_app_version", __version__)]

    db = Database(str(db_path))
    extra = [*MIGRATIONS, ("0099_extra", ["CREATE TABLE extra (a INTEGER) STRICT"])]
    assert migrate(db, extra) == ["0099_extra"]
    assert db.query("SELECT app_version FROM migrations WHERE name = '0099_extra'") == [
        (__version__,)
    ]
    db.close()


def test_0002_upgrades_a_file_written_before_it(tmp_path: Path) -> None:
    """A file with only 0001 (as written by the first release) gets the column, keeps its
    data, and its migrations table stays STRICT."""
    db_path = tmp_path / "state.db"
    db = Database(str(db_path))
    migrate(db, MIGRATIONS[:1])
    with db.atomic() as conn:
        conn.execute(
            "INSERT INTO connectors (name, config, target_state) VALUES ('old', '{}', 'PAUSED')"
        )
    db.close()

    stores = open_sqlite_stores(str(db_path))
    try:
        assert stores.configs.get_target_state("old") is TargetState.PAUSED
    finally:
        stores.close()
    conn = raw(db_path)
    columns = [row[1] for row in conn.execute("PRAGMA table_info(migrations)")]
    strict = conn.execute("SELECT strict FROM pragma_table_list WHERE name = 'migrations'")
    assert columns == ["name", "applied_at", "app_version"]
    assert strict.fetchone() == (1,)
    # 0001 was applied by a version that did not record itself: unknown, not guessed.
    rows = conn.execute("SELECT name, app_version FROM migrations ORDER BY rowid").fetchall()
    assert rows == [("0001_initial", None), ("0002_migrations_app_version", __version__)]
    conn.close()


def test_a_sqlite_utils_step_rolls_back_with_its_migration(tmp_path: Path) -> None:
    db = Database(str(tmp_path / "state.db"))
    migrate(db)

    def half_done(utils_db: object) -> None:
        utils_db.table("connectors").add_column("note", str)  # type: ignore[attr-defined]
        raise RuntimeError("the migration fails after changing the table")

    with pytest.raises(RuntimeError):
        migrate(db, [*MIGRATIONS, ("0099_half", half_done)])
    assert [row[1] for row in db.query("PRAGMA table_info(connectors)")] == [
        "id",
        "name",
        "config",
        "target_state",
    ]
    assert db.query("SELECT name FROM migrations WHERE name = '0099_half'") == []
    db.close()


# ---- a damaged file ----------------------------------------------------------------------


def test_quick_check_passes_on_a_good_file(tmp_path: Path) -> None:
    db_path = tmp_path / "state.db"
    filled(db_path)
    stores: Stores = open_sqlite_stores(str(db_path))
    try:
        assert len(stores.configs.connector_names()) == 50
        assert len(stores.offsets.all("c0")) == 300
    finally:
        stores.close()


def test_a_file_with_a_damaged_page_is_refused_and_left_unchanged(tmp_path: Path) -> None:
    db_path = tmp_path / "state.db"
    filled(db_path)
    conn = raw(db_path)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    root = conn.execute("SELECT rootpage FROM sqlite_schema WHERE name = 'source_offsets'")
    page = root.fetchone()[0]
    conn.close()
    data = bytearray(db_path.read_bytes())
    start = (page - 1) * page_size
    data[start : start + page_size] = b"\x5a" * page_size
    db_path.write_bytes(bytes(data))
    before = digest(db_path)

    with pytest.raises(StateFileDamagedError) as info:
        open_sqlite_stores(str(db_path))
    message = str(info.value)
    assert message.startswith(f"State file {db_path} is damaged: Page {page}: ")
    assert message.endswith(
        ". Nothing was written to it; restore it from a backup, or move it away to start "
        "with an empty state."
    )
    assert "\n" not in message
    assert digest(db_path) == before


def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    db_path = tmp_path / "state.db"
    db_path.write_text("connector.class=not a database\n" * 100)
    before = digest(db_path)
    with pytest.raises(StateFileDamagedError) as info:
        open_sqlite_stores(str(db_path))
    assert str(info.value).startswith(f"State file {db_path} is damaged: file is not a database.")
    assert isinstance(info.value, ConnectError) and not isinstance(info.value, RetriableError)
    assert digest(db_path) == before
