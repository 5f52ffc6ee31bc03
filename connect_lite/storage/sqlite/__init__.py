"""The SQLite state store: the only code in connect-lite that speaks SQL."""

from __future__ import annotations

from connect_lite.storage.base import Stores
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

    Raises RetriableError if the file is busy or the disk fails, ConnectError otherwise.
    """
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
