"""Named schema migrations, each applied in the transaction that records it."""

from __future__ import annotations

import sqlite3
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from connect_lite import __version__
from connect_lite.storage.base import StateFileTooNewError
from connect_lite.storage.sqlite.db import Database


@contextmanager
def _without(*modules: str) -> Iterator[None]:
    """Imports of ``modules`` fail inside the block, unless they were imported before it."""
    blocked = [name for name in modules if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]  # Python's "not importable"
    try:
        yield
    finally:
        for name in blocked:
            if sys.modules.get(name) is None:
                del sys.modules[name]


# sqlite-utils imports pandas and numpy when they are installed, to insert their values (no
# migration does): about 90 MB in the worker process, which runs no task and needs neither.
with _without("pandas", "numpy"):
    import sqlite_utils

Step = Sequence[str] | Callable[[sqlite_utils.Database], None]
"""SQL statements, or a function changing tables with sqlite-utils' Table API."""
Migration = tuple[str, Step]


def _record_app_version(db: sqlite_utils.Database) -> None:
    """Which connect-lite version applied each migration, so an older version that meets a
    file it cannot read can say which version wrote it. Rows of an older file stay NULL."""
    db.table("migrations").add_column("app_version", str)


MIGRATIONS: list[Migration] = [
    (
        "0001_initial",
        [
            """CREATE TABLE connectors (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                name TEXT NOT NULL UNIQUE,
                config TEXT NOT NULL,
                target_state TEXT NOT NULL
                    CHECK (target_state IN ('RUNNING', 'PAUSED', 'STOPPED'))
            ) STRICT""",
            """CREATE TABLE task_configs (
                connector TEXT NOT NULL REFERENCES connectors (name) ON DELETE CASCADE,
                task INTEGER NOT NULL CHECK (task >= 0),
                config TEXT NOT NULL,
                PRIMARY KEY (connector, task)
            ) STRICT""",
            """CREATE TABLE source_offsets (
                connector TEXT NOT NULL,
                partition_key TEXT NOT NULL,
                partition_json TEXT NOT NULL,
                offset_json TEXT NOT NULL,
                PRIMARY KEY (connector, partition_key)
            ) STRICT""",
            """CREATE TABLE connector_statuses (
                connector TEXT PRIMARY KEY,
                state TEXT NOT NULL,
                trace TEXT,
                worker_id TEXT NOT NULL,
                version TEXT
            ) STRICT""",
            """CREATE TABLE task_statuses (
                connector TEXT NOT NULL,
                task INTEGER NOT NULL,
                state TEXT NOT NULL,
                trace TEXT,
                worker_id TEXT NOT NULL,
                version TEXT,
                PRIMARY KEY (connector, task)
            ) STRICT""",
            """CREATE TABLE active_topics (
                connector TEXT NOT NULL,
                topic TEXT NOT NULL,
                task INTEGER NOT NULL,
                discovered_ms INTEGER NOT NULL,
                PRIMARY KEY (connector, topic)
            ) STRICT""",
        ],
    ),
    ("0002_migrations_app_version", _record_app_version),
]


def applied_migrations(db: Database) -> list[str]:
    """Names of the migrations recorded in the file, in the order they were applied."""
    return [row[0] for row in db.query("SELECT name FROM migrations ORDER BY rowid")]


def refuse_unknown_migrations(
    conn: sqlite3.Connection, path: str, migrations: Sequence[Migration] = MIGRATIONS
) -> None:
    """Raise StateFileTooNewError if the file records a migration not in ``migrations``.

    Only reads: it runs before anything is written, so a newer version's file is left as it
    was. A file without a migrations table is new (or empty) and passes."""
    if not _has_migrations_table(conn):
        return
    version = "app_version" if _has_column(conn, "app_version") else "NULL"
    rows = conn.execute(f"SELECT name, {version} FROM migrations ORDER BY rowid").fetchall()
    known = {name for name, _ in migrations}
    unknown = {name: by for name, by in rows if name not in known}
    if unknown:
        raise StateFileTooNewError(path, __version__, unknown)


def missing_migrations(
    conn: sqlite3.Connection, migrations: Sequence[Migration] = MIGRATIONS
) -> list[str]:
    """The names of ``migrations`` the file does not record (all of them for a new file)."""
    if not _has_migrations_table(conn):
        return [name for name, _ in migrations]
    recorded = {name for (name,) in conn.execute("SELECT name FROM migrations").fetchall()}
    return [name for name, _ in migrations if name not in recorded]


def _has_migrations_table(conn: sqlite3.Connection) -> bool:
    table = "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'migrations'"
    return conn.execute(table).fetchone() is not None


def _has_column(conn: sqlite3.Connection, column: str) -> bool:
    query = "SELECT 1 FROM pragma_table_info('migrations') WHERE name = ?"
    return conn.execute(query, (column,)).fetchone() is not None


def _apply(conn: sqlite3.Connection, step: Step) -> None:
    if callable(step):
        # sqlite-utils on our connection, inside our transaction: its writes do not commit
        # on their own while a transaction is open, so they commit or roll back with it.
        step(sqlite_utils.Database(conn, recursive_triggers=False, execute_plugins=False))
    else:
        for statement in step:
            conn.execute(statement)


def migrate(db: Database, migrations: Sequence[Migration] = MIGRATIONS) -> list[str]:
    """Apply every migration not yet recorded; returns the names applied now.

    Each is applied and recorded in one transaction, with this version in ``app_version``
    once that column exists (0002); a file from before 0002 keeps NULL for what it had."""
    with db.atomic() as conn:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS migrations ("
            " name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT"
        )
    applied: list[str] = []
    for name, step in migrations:
        with db.atomic() as conn:
            # Checked inside the write transaction, so two processes cannot both apply it.
            if conn.execute("SELECT 1 FROM migrations WHERE name = ?", (name,)).fetchone():
                continue
            _apply(conn, step)
            now = int(time.time() * 1000)
            if _has_column(conn, "app_version"):
                conn.execute(
                    "INSERT INTO migrations (name, applied_at, app_version) VALUES (?, ?, ?)",
                    (name, now, __version__),
                )
                # Those this run applied before the column existed: this version, too.
                conn.executemany(
                    "UPDATE migrations SET app_version = ? WHERE name = ? AND app_version IS NULL",
                    [(__version__, earlier) for earlier in applied],
                )
            else:
                conn.execute("INSERT INTO migrations (name, applied_at) VALUES (?, ?)", (name, now))
            applied.append(name)
    return applied
