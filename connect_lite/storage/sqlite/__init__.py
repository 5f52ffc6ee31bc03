"""The SQLite state store: the only code in connect-lite that speaks SQL."""

from __future__ import annotations

from connect_lite.storage.base import Stores
from connect_lite.storage.sqlite.checks import create_private_or_warn
from connect_lite.storage.sqlite.db import Database
from connect_lite.storage.sqlite.migrations import migrate
from connect_lite.storage.sqlite.stores import (
    SqliteConfigStore,
    SqliteOffsetStore,
    SqliteStatusStore,
    SqliteTopicStore,
)


def open_sqlite_stores(path: str, *, busy_timeout_s: float = 5.0) -> Stores:
    """Open (creating and migrating if needed) the state file at ``path``.

    A new file is created with mode 0600; an existing one open to other users gets a warning.
    Raises RetriableError if the file is busy or the disk fails, ConnectError otherwise.
    The returned ``close`` checkpoints and truncates the WAL, then closes the file.
    """
    create_private_or_warn(path)
    db = Database(path, busy_timeout_s=busy_timeout_s)
    try:
        migrate(db)
    except BaseException:
        db.close()
        raise
    return Stores(
        configs=SqliteConfigStore(db),
        offsets=SqliteOffsetStore(db),
        statuses=SqliteStatusStore(db),
        topics=SqliteTopicStore(db),
        close=db.close,
    )


__all__ = ["Database", "open_sqlite_stores"]
