"""Checks on the state file before the first write: private mode and SQLite's quick_check."""

from __future__ import annotations

import logging
import os
import sqlite3
import stat

from connect_lite.storage.base import StateFileDamagedError

log = logging.getLogger(__name__)

PRIVATE_MODE = 0o600
"""Owner read/write only: connector configs in the file may hold credentials."""

SIDECARS = ("-wal", "-shm")
"""SQLite's WAL and shared-memory files, created with the database file's own mode."""

# Primary result codes meaning "this is not (or no longer) a readable SQLite database".
_DAMAGED_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
_DAMAGED_WORDS = ("not a database", "malformed")


def create_private_or_warn(path: str) -> None:
    """Create the state file empty with mode 0600, or warn if an existing one is not private.

    Created here rather than by SQLite, which would give it 0644 (under the usual umask 022);
    SQLite then creates the -wal and -shm files with the database file's mode, so they are
    0600 too. An existing file open to other users still starts, with one WARN line.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, PRIVATE_MODE)
    except FileExistsError:
        _warn_if_not_private(path)
        return
    try:
        os.fchmod(fd, PRIVATE_MODE)  # exactly 0600, whatever the umask
    finally:
        os.close(fd)


def _warn_if_not_private(path: str) -> None:
    loose = []
    for name in (path, *(path + suffix for suffix in SIDECARS)):
        try:
            mode = stat.S_IMODE(os.stat(name).st_mode)
        except FileNotFoundError:
            continue
        if mode & 0o077:
            loose.append((name, mode))
    if loose:
        modes = ", ".join(f"{name} has mode {mode:04o}" for name, mode in loose)
        log.warning(
            "State file %s can be read by other users (%s); connector configs in it may hold "
            "credentials. Fix: chmod 600 %s",
            path,
            modes,
            " ".join(name for name, _ in loose),
        )


def check_integrity(conn: sqlite3.Connection, path: str) -> None:
    """Run ``PRAGMA quick_check``; raise StateFileDamagedError naming the first problem.

    It reads every page of the file (cheap: a state file is small) and checks its b-trees,
    without the slower index cross-checks of integrity_check. A file that is not SQLite at
    all fails on its first read."""
    try:
        rows = conn.execute("PRAGMA quick_check(1)").fetchall()
    except sqlite3.DatabaseError as exc:
        if _is_damage(exc):
            raise StateFileDamagedError(path, str(exc)) from exc
        raise
    if rows != [("ok",)]:
        raise StateFileDamagedError(path, _first_problem(rows))


def _is_damage(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return (code & 0xFF) in _DAMAGED_CODES
    return any(word in str(exc).lower() for word in _DAMAGED_WORDS)


def _first_problem(rows: list[tuple[object, ...]]) -> str:
    """The first line of quick_check's report, without its "*** in database main ***"."""
    for row in rows:
        for line in str(row[0]).splitlines():
            if line.strip() and not line.startswith("*** in database"):
                return line.strip()
    return "quick_check reported a problem"
