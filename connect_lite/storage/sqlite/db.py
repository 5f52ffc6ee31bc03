"""The one SQLite connection: pragmas, transactions (atomic, savepoints) and error mapping."""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from connect_lite.api.errors import ConnectError, RetriableError
from connect_lite.storage.base import StoreClosedError

log = logging.getLogger(__name__)

WAL_SIZE_LIMIT = 4 * 1024 * 1024
"""Bytes the -wal file is truncated to after a checkpoint (``PRAGMA journal_size_limit``)."""
WAL_AUTOCHECKPOINT_PAGES = 1000
"""A commit that leaves the WAL this many pages long (about 4 MiB) checkpoints it."""

# Primary result codes of passing failures: another connection holds a lock, or the disk hiccuped.
_RETRIABLE_CODES = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_IOERR})
_RETRIABLE_WORDS = ("database is locked", "database table is locked", "busy", "disk i/o error")


def is_retriable(exc: sqlite3.Error) -> bool:
    """True for busy/locked and I/O errors, by primary result code (the low byte)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return (code & 0xFF) in _RETRIABLE_CODES
    message = str(exc).lower()
    return any(word in message for word in _RETRIABLE_WORDS)


@contextmanager
def translated_errors() -> Iterator[None]:
    """Re-raise sqlite3 errors as RetriableError or ConnectError, chained to the original."""
    try:
        yield
    except sqlite3.Error as exc:
        if is_retriable(exc):
            raise RetriableError(f"state store busy or unavailable: {exc}") from exc
        raise ConnectError(f"state store error: {exc}") from exc


def _connection_pragmas(conn: sqlite3.Connection) -> None:
    """The settings of each of the owner's connections (SQLite keeps them per connection)."""
    # Deleted rows are overwritten with zeros, not left in free pages of the file.
    conn.execute("PRAGMA secure_delete = ON")
    # The WAL is checkpointed at about 4 MiB and then cut back to that size, so one large
    # transaction does not leave a large -wal behind for the life of the worker.
    conn.execute(f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT}")
    conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_AUTOCHECKPOINT_PAGES}")
    conn.execute("PRAGMA foreign_keys = ON")


class Database:
    """One connection to the state file for every write, shared by every thread, and one
    for reads.

    Why one connection behind a lock rather than one per thread: the worker's writes are
    small and rare (configs, statuses, an offset commit per flush interval), so serialising
    them in-process costs nothing, while separate connections would make threads of the same
    process fight over SQLite's write lock and turn that into busy errors. The lock is
    re-entrant and is held for a whole transaction, so ``atomic()`` blocks can nest within a
    thread and never interleave across threads. The busy timeout still guards against other
    processes (or tools) that open the same file.

    Reads outside a transaction go through a second connection with a lock of its own: in
    WAL mode a reader never waits for a writer, so a REST request's read does not wait for
    a commit's fsync (under load, with the disk busy, that took milliseconds). It sees every
    committed transaction. A read inside ``atomic()`` uses the transaction's connection.

    ``verify`` runs on the connection before the first write (switching to WAL mode writes
    the file's header), so it can refuse a file without changing a byte of it.
    """

    def __init__(
        self,
        path: str,
        busy_timeout_s: float = 5.0,
        verify: Callable[[sqlite3.Connection], None] | None = None,
        *,
        read_only: bool = False,
    ) -> None:
        self._lock = threading.RLock()
        self._closed = False
        self._depth = 0  # transaction nesting depth, guarded by _lock
        self._owner: int | None = None  # the thread inside atomic(), guarded by _lock
        self._path = path
        self._busy_timeout_s = busy_timeout_s
        self._reader: sqlite3.Connection | None = None
        self._read_lock = threading.Lock()
        self.read_only = read_only
        with translated_errors():
            self._conn = sqlite3.connect(
                f"{Path(path).absolute().as_uri()}?mode=ro" if read_only else path,
                timeout=busy_timeout_s,
                isolation_level=None,
                check_same_thread=False,
                uri=read_only,
            )
            try:
                self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
                if verify is not None:
                    verify(self._conn)
                if not read_only:  # a reader takes the file as its owner configured it
                    self._configure()
            except BaseException:
                self._conn.close()
                raise

    def _configure(self) -> None:
        _connection_pragmas(self._conn)
        mode = self._conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise ConnectError(f"could not switch the state store to WAL mode (got {mode!r})")
        # FULL makes every commit durable across power loss too, not only across kill -9;
        # the write rate is low enough that the fsync per commit does not matter.
        self._conn.execute("PRAGMA synchronous = FULL")

    @contextmanager
    def atomic(self) -> Iterator[sqlite3.Connection]:
        """One transaction (BEGIN IMMEDIATE), or a savepoint inside an enclosing one."""
        with self._lock, translated_errors():
            self._check_open()
            depth = self._depth
            self._conn.execute("BEGIN IMMEDIATE" if depth == 0 else f"SAVEPOINT sp{depth}")
            self._depth += 1
            self._owner = threading.get_ident()
            try:
                yield self._conn
            except BaseException:
                self._depth = depth
                self._rollback(depth)
                raise
            finally:
                if depth == 0:
                    self._owner = None
            self._depth = depth
            self._commit(depth)

    def _commit(self, depth: int) -> None:
        try:
            self._conn.execute("COMMIT" if depth == 0 else f"RELEASE sp{depth}")
        except sqlite3.Error:
            self._rollback(depth)
            raise

    def _rollback(self, depth: int) -> None:
        try:
            if depth == 0:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
            else:
                self._conn.execute(f"ROLLBACK TO sp{depth}")
                self._conn.execute(f"RELEASE sp{depth}")
        except sqlite3.Error:
            pass  # the original error is the one worth reporting

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """Run a read and return all rows (inside ``atomic()``, on its transaction)."""
        if self.read_only or self._owner == threading.get_ident():
            with self._lock, translated_errors():
                self._check_open()
                return self._conn.execute(sql, params).fetchall()
        with self._read_lock, translated_errors():
            self._check_open()
            return self._read_connection().execute(sql, params).fetchall()

    def _read_connection(self) -> sqlite3.Connection:
        """The connection for reads, opened on the first (once the file is in WAL mode)."""
        if self._reader is None:
            reader = sqlite3.connect(
                self._path,
                timeout=self._busy_timeout_s,
                isolation_level=None,
                check_same_thread=False,
            )
            reader.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_s * 1000)}")
            _connection_pragmas(reader)
            reader.execute("PRAGMA query_only = ON")
            self._reader = reader
        return self._reader

    def close(self) -> None:
        """Checkpoint the WAL into the file and truncate it to zero bytes, then close.

        SQLite deletes the WAL when its last connection closes, but not while another
        connection (an inspecting ``sqlite-utils``) has the file open; the TRUNCATE
        checkpoint empties it either way. A reader in the way only leaves the WAL as it is."""
        with self._lock, self._read_lock:
            if self._closed:
                return
            self._closed = True
            if self._reader is not None:
                self._reader.close()
            if self.read_only:  # the owner checkpoints its file
                self._conn.close()
                return
            try:
                busy = self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
                if busy:
                    log.info("The state file's WAL was not truncated: a reader holds it")
            except sqlite3.Error as exc:
                log.warning("Could not checkpoint the state file's WAL at close: %s", exc)
            finally:
                self._conn.close()

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError("the state store is closed (the worker is shutting down)")
