"""The four backing stores on SQLite tables."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from connect_lite.api.records import canonical_json
from connect_lite.protocol.states import ConnectorStatus, State, TargetState, TaskStatus
from connect_lite.storage.base import ConfigStore, OffsetStore, StatusStore, TopicStore, TopicUse
from connect_lite.storage.sqlite.db import Database


class SqliteConfigStore(ConfigStore):
    """Connector configs, target states (table ``connectors``) and ``task_configs``."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def connector_names(self) -> list[str]:
        return [row[0] for row in self._db.query("SELECT name FROM connectors ORDER BY id")]

    def get_connector_config(self, name: str) -> dict[str, str] | None:
        rows = self._db.query("SELECT config FROM connectors WHERE name = ?", (name,))
        return json.loads(rows[0][0]) if rows else None

    def put_connector_config(
        self, name: str, config: Mapping[str, str], target_state: TargetState | None = None
    ) -> None:
        new_state = (target_state or TargetState.RUNNING).value
        keep_state = target_state is None
        with self._db.atomic() as conn:
            conn.execute(
                "INSERT INTO connectors (name, config, target_state) VALUES (?, ?, ?)"
                " ON CONFLICT (name) DO UPDATE SET config = excluded.config,"
                " target_state = CASE WHEN ? THEN target_state ELSE excluded.target_state END",
                (name, json.dumps(dict(config)), new_state, keep_state),
            )

    def remove_connector(self, name: str) -> None:
        with self._db.atomic() as conn:
            conn.execute("DELETE FROM task_configs WHERE connector = ?", (name,))
            conn.execute("DELETE FROM connectors WHERE name = ?", (name,))

    def get_target_state(self, name: str) -> TargetState | None:
        rows = self._db.query("SELECT target_state FROM connectors WHERE name = ?", (name,))
        return TargetState(rows[0][0]) if rows else None

    def put_target_state(self, name: str, state: TargetState) -> None:
        with self._db.atomic() as conn:
            cursor = conn.execute(
                "UPDATE connectors SET target_state = ? WHERE name = ?", (state.value, name)
            )
            if cursor.rowcount == 0:
                raise KeyError(name)

    def get_task_configs(self, name: str) -> list[dict[str, str]]:
        rows = self._db.query(
            "SELECT config FROM task_configs WHERE connector = ? ORDER BY task", (name,)
        )
        return [json.loads(row[0]) for row in rows]

    def put_task_configs(self, name: str, configs: Sequence[Mapping[str, str]]) -> None:
        """Raises KeyError if the connector does not exist (task configs belong to one)."""
        rows = [(name, index, json.dumps(dict(c))) for index, c in enumerate(configs)]
        with self._db.atomic() as conn:
            if not conn.execute("SELECT 1 FROM connectors WHERE name = ?", (name,)).fetchone():
                raise KeyError(name)
            conn.execute("DELETE FROM task_configs WHERE connector = ?", (name,))
            conn.executemany(
                "INSERT INTO task_configs (connector, task, config) VALUES (?, ?, ?)", rows
            )


class SqliteOffsetStore(OffsetStore):
    """Source offsets in ``source_offsets``, keyed by the partition's canonical JSON."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def get(self, connector: str, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        rows = self._db.query(
            "SELECT offset_json FROM source_offsets WHERE connector = ? AND partition_key = ?",
            (connector, canonical_json(dict(partition))),
        )
        return json.loads(rows[0][0]) if rows else None

    def put_many(
        self, connector: str, offsets: Mapping[str, tuple[Mapping[str, Any], Any]]
    ) -> None:
        # The key is recomputed from the partition, so it can never disagree with get().
        entries = [(canonical_json(dict(p)), dict(p), o) for p, o in offsets.values()]
        deletes = [(connector, key) for key, _, o in entries if o is None]
        upserts = [
            (connector, key, json.dumps(p), json.dumps(o)) for key, p, o in entries if o is not None
        ]
        with self._db.atomic() as conn:
            conn.executemany(
                "DELETE FROM source_offsets WHERE connector = ? AND partition_key = ?", deletes
            )
            conn.executemany(
                "INSERT INTO source_offsets (connector, partition_key, partition_json, offset_json)"
                " VALUES (?, ?, ?, ?) ON CONFLICT (connector, partition_key)"
                " DO UPDATE SET partition_json = excluded.partition_json,"
                " offset_json = excluded.offset_json",
                upserts,
            )

    def all(self, connector: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        rows = self._db.query(
            "SELECT partition_json, offset_json FROM source_offsets WHERE connector = ?"
            " ORDER BY partition_key",
            (connector,),
        )
        return [(json.loads(p), json.loads(o)) for p, o in rows]

    def remove_connector(self, connector: str) -> None:
        with self._db.atomic() as conn:
            conn.execute("DELETE FROM source_offsets WHERE connector = ?", (connector,))


_TASK_COLUMNS = "connector, task, state, worker_id, trace, version"


def _task_status(row: Any) -> TaskStatus:
    connector, task, state, worker_id, trace, version = row
    return TaskStatus(connector, task, State(state), worker_id, trace, version)


class SqliteStatusStore(StatusStore):
    """Statuses in ``connector_statuses`` and ``task_statuses``."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def put_connector(self, status: ConnectorStatus) -> None:
        with self._db.atomic() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO connector_statuses"
                " (connector, state, worker_id, trace, version) VALUES (?, ?, ?, ?, ?)",
                (
                    status.connector,
                    status.state.value,
                    status.worker_id,
                    status.trace,
                    status.version,
                ),
            )

    def put_task(self, status: TaskStatus) -> None:
        with self._db.atomic() as conn:
            conn.execute(
                f"INSERT OR REPLACE INTO task_statuses ({_TASK_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    status.connector,
                    status.task,
                    status.state.value,
                    status.worker_id,
                    status.trace,
                    status.version,
                ),
            )

    def get_connector(self, connector: str) -> ConnectorStatus | None:
        rows = self._db.query(
            "SELECT state, worker_id, trace, version FROM connector_statuses WHERE connector = ?",
            (connector,),
        )
        if not rows:
            return None
        state, worker_id, trace, version = rows[0]
        return ConnectorStatus(connector, State(state), worker_id, trace, version)

    def get_task(self, connector: str, task: int) -> TaskStatus | None:
        rows = self._db.query(
            f"SELECT {_TASK_COLUMNS} FROM task_statuses WHERE connector = ? AND task = ?",
            (connector, task),
        )
        return _task_status(rows[0]) if rows else None

    def get_tasks(self, connector: str) -> list[TaskStatus]:
        rows = self._db.query(
            f"SELECT {_TASK_COLUMNS} FROM task_statuses WHERE connector = ? ORDER BY task",
            (connector,),
        )
        return [_task_status(row) for row in rows]

    def delete_task(self, connector: str, task: int) -> None:
        with self._db.atomic() as conn:
            conn.execute(
                "DELETE FROM task_statuses WHERE connector = ? AND task = ?", (connector, task)
            )

    def delete_connector(self, connector: str) -> None:
        with self._db.atomic() as conn:
            conn.execute("DELETE FROM task_statuses WHERE connector = ?", (connector,))
            conn.execute("DELETE FROM connector_statuses WHERE connector = ?", (connector,))


class SqliteTopicStore(TopicStore):
    """Active topics in ``active_topics``; the first record of a topic wins."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def put(self, use: TopicUse) -> bool:
        with self._db.atomic() as conn:
            cursor = conn.execute(
                "INSERT INTO active_topics (connector, topic, task, discovered_ms)"
                " VALUES (?, ?, ?, ?) ON CONFLICT (connector, topic) DO NOTHING",
                (use.connector, use.topic, use.task, use.discovered_ms),
            )
            return cursor.rowcount == 1

    def topics(self, connector: str) -> list[TopicUse]:
        rows = self._db.query(
            "SELECT connector, topic, task, discovered_ms FROM active_topics"
            " WHERE connector = ? ORDER BY topic",
            (connector,),
        )
        return [TopicUse(*row) for row in rows]

    def reset(self, connector: str) -> None:
        with self._db.atomic() as conn:
            conn.execute("DELETE FROM active_topics WHERE connector = ?", (connector,))

    def remove(self, connector: str, topics: list[str]) -> None:
        with self._db.atomic() as conn:
            conn.executemany(
                "DELETE FROM active_topics WHERE connector = ? AND topic = ?",
                [(connector, topic) for topic in topics],
            )
