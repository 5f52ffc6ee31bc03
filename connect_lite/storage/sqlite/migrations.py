"""Named schema migrations, each applied in the transaction that records it."""

from __future__ import annotations

import time
from collections.abc import Sequence

from connect_lite.storage.sqlite.db import Database

Migration = tuple[str, Sequence[str]]

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
]


def applied_migrations(db: Database) -> list[str]:
    """Names of the migrations recorded in the file, in the order they were applied."""
    return [row[0] for row in db.query("SELECT name FROM migrations ORDER BY rowid")]


def migrate(db: Database, migrations: Sequence[Migration] = MIGRATIONS) -> list[str]:
    """Apply every migration not yet recorded; returns the names applied now."""
    with db.atomic() as conn:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS migrations ("
            " name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT"
        )
    applied: list[str] = []
    for name, statements in migrations:
        with db.atomic() as conn:
            # Checked inside the write transaction, so two processes cannot both apply it.
            if conn.execute("SELECT 1 FROM migrations WHERE name = ?", (name,)).fetchone():
                continue
            for statement in statements:
                conn.execute(statement)
            conn.execute(
                "INSERT INTO migrations (name, applied_at) VALUES (?, ?)",
                (name, int(time.time() * 1000)),
            )
            applied.append(name)
    return applied
