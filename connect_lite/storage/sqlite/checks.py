"""Checks on the state file before SQLite opens it: private mode."""

from __future__ import annotations

import logging
import os
import stat

log = logging.getLogger(__name__)

PRIVATE_MODE = 0o600
"""Owner read/write only: connector configs in the file may hold credentials."""

SIDECARS = ("-wal", "-shm")
"""SQLite's WAL and shared-memory files, created with the database file's own mode."""


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
