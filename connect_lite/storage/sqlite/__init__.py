"""The SQLite state store: the only code in connect-lite that speaks SQL."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable

from connect_lite.storage.base import StateFileError, Stores
from connect_lite.storage.sqlite.checks import check_integrity, create_private_or_warn
from connect_lite.storage.sqlite.db import Database
from connect_lite.storage.sqlite.lock import StateFileLock
from connect_lite.storage.sqlite.migrations import (
    migrate,
    missing_migrations,
    refuse_unknown_migrations,
)
from connect_lite.storage.sqlite.stores import (
    SqliteConfigStore,
    SqliteOffsetStore,
    SqliteStatusStore,
    SqliteTopicStore,
)


def open_sqlite_stores(path: str, *, busy_timeout_s: float = 5.0) -> Stores:
    """Take ownership of the state file at ``path``, check it, and open its stores.

    In this order, so that a file this process must not use is refused before anything is
    written to it: the owner lock (StateFileInUseError if another process holds it); the
    file's mode (created 0600, or a warning if it is open to other users); SQLite's
    quick_check (StateFileDamagedError); the recorded migrations (StateFileTooNewError if
    a newer version wrote it). Only then WAL mode and the pending migrations.

    Raises RetriableError if the file is busy or the disk fails, ConnectError otherwise.
    The returned ``close`` checkpoints and truncates the WAL, closes the file and releases
    the lock.
    """
    lock = StateFileLock.acquire(path)
    try:
        create_private_or_warn(path)

        def verify(conn: sqlite3.Connection) -> None:
            check_integrity(conn, path)
            refuse_unknown_migrations(conn, path)

        db = Database(path, busy_timeout_s=busy_timeout_s, verify=verify)
        try:
            migrate(db)
        except BaseException:
            db.close()
            raise
    except BaseException:
        lock.release()
        raise

    def close() -> None:
        try:
            db.close()
        finally:
            lock.release()

    return _stores(db, close)


def open_sqlite_reader(path: str, *, busy_timeout_s: float = 5.0) -> Stores:
    """Open the state file at ``path`` to read only, beside the process that owns it.

    No lock is taken and the file's pages are never written, not even by a pragma: in WAL
    mode SQLite lets a reader see each transaction the owner commits while the owner keeps
    writing. Opened without an owner, SQLite may leave the empty ``-wal`` and ``-shm`` files
    a reader needs beside it (the owner uses them when it opens the file).

    Refused with a StateFileError, having changed nothing: a missing file or something else
    than a file, a damaged one (StateFileDamagedError), one that is not in WAL mode (a reader
    would block its owner's commits), one a worker of this version has not migrated, and a
    newer version's file (StateFileTooNewError). A write through these stores raises
    ConnectError and changes nothing."""
    if not os.path.isfile(path):
        what = "is not a file" if os.path.exists(path) else "does not exist"
        raise StateFileError(
            path, f"State file {path} {what}; give the path of a worker's state.storage.file."
        )

    def verify(conn: sqlite3.Connection) -> None:
        check_integrity(conn, path)
        mode = str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()
        if mode != "wal":
            raise StateFileError(
                path,
                f"State file {path} is in {mode} journal mode, not WAL, so a reader would "
                "block its owner's writes; start a worker of this version on it first.",
            )
        refuse_unknown_migrations(conn, path)
        missing = missing_migrations(conn)
        if missing:
            raise StateFileError(
                path,
                f"State file {path} lacks the migrations {', '.join(missing)}; start a worker "
                "of this version on it first.",
            )

    db = Database(path, busy_timeout_s=busy_timeout_s, verify=verify, read_only=True)
    return _stores(db, db.close)


def _stores(db: Database, close: Callable[[], None]) -> Stores:
    """Every store over ``db``; ``close`` ends their use of the file."""
    return Stores(
        configs=SqliteConfigStore(db),
        offsets=SqliteOffsetStore(db),
        statuses=SqliteStatusStore(db),
        topics=SqliteTopicStore(db),
        close=close,
    )


__all__ = ["Database", "StateFileLock", "open_sqlite_reader", "open_sqlite_stores"]
