"""One owner per state file: an exclusive flock on a sidecar ``<file>.lock`` holding the pid."""

from __future__ import annotations

import fcntl
import os
import time

from connect_lite.storage.base import StateFileInUseError

LOCK_SUFFIX = ".lock"
_PID_WAIT_S = 1.0
"""How long a refused process waits for the holder to finish writing its pid."""


def lock_path(db_path: str) -> str:
    """``<file>.lock`` next to the real file, so two spellings of one path share one lock."""
    return os.path.realpath(db_path) + LOCK_SUFFIX


class StateFileLock:
    """The state file's owner lock: ``flock(LOCK_EX | LOCK_NB)`` on ``<file>.lock``.

    Why this kind of lock:

    - **It dies with the process.** The kernel drops a flock when the last descriptor of its
      open file goes away, so a worker killed with ``kill -9`` (or by the OOM killer) leaves
      no stale lock: the ``.lock`` file stays, and the pid in it is only text, never trusted
      as proof of ownership. The descriptor is opened close-on-exec (Python's default), so
      the Spark JVM and the broker child never inherit it and cannot outlive the worker
      holding it.
    - **A sidecar file, not the database.** The lock is taken before the state file is
      created, read or checked, so a second worker touches nothing of the first one's. The
      sidecar also has room for the holder's pid, which the refusal message names. SQLite's
      own locks on the database are POSIX (``fcntl``) byte-range locks that SQLite takes and
      drops all the time; a flock on a separate file cannot interfere with them.
    - **Not POSIX ``lockf``/``fcntl`` locks**: a process loses those when it closes *any*
      descriptor of the file, and they do not conflict within one process, so a second
      open in the same process (an embedding test) would not be refused. flock locks belong
      to the open file description, so a second open in the same process is refused too.
    - **Not SQLite's ``locking_mode=EXCLUSIVE``**: it would keep every other reader out
      (``sqlite-utils`` inspection of a running worker's file) and its error, "database is
      locked", cannot say who holds the file.

    On Linux NFS mounts the kernel emulates flock with a whole-file byte-range lock, which
    would collide with SQLite's locks on the database itself: one more reason for a sidecar.
    """

    def __init__(self, path: str, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, db_path: str) -> StateFileLock:
        """Take the lock or raise StateFileInUseError naming ``db_path`` and the holder's pid.

        Never waits for the holder: a second worker is refused at once."""
        path = lock_path(db_path)
        # No O_TRUNC: the file may hold the current owner's pid.
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder_pid(fd)
            os.close(fd)
            raise StateFileInUseError(db_path, holder) from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return cls(path, fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Clear the pid and drop the lock (closing the descriptor drops it). Idempotent."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            os.ftruncate(fd, 0)  # while still held: nobody reads a pid that is gone
        finally:
            os.close(fd)


def _holder_pid(fd: int) -> int | None:
    """The pid written by the holder; it writes it right after locking, so wait briefly."""
    deadline = time.monotonic() + _PID_WAIT_S
    while True:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        if text.isdigit():
            return int(text)
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.02)
