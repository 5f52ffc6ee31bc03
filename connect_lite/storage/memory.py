"""In-memory stores with the same contract as the SQLite ones, for unit tests."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from connect_lite.api.records import canonical_json
from connect_lite.protocol.states import ConnectorStatus, TargetState, TaskStatus
from connect_lite.storage.base import (
    ConfigStore,
    OffsetStore,
    StatusStore,
    Stores,
    TopicStore,
    TopicUse,
)


def _json_copy(value: Any) -> Any:
    """A deep copy through JSON, so values look exactly as they would after SQLite."""
    return json.loads(json.dumps(value))


class MemoryConfigStore(ConfigStore):
    """Connector configs, task configs and target states in dicts (insertion = creation order)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._configs: dict[str, dict[str, str]] = {}
        self._targets: dict[str, TargetState] = {}
        self._tasks: dict[str, list[dict[str, str]]] = {}

    def connector_names(self) -> list[str]:
        with self._lock:
            return list(self._configs)

    def get_connector_config(self, name: str) -> dict[str, str] | None:
        with self._lock:
            config = self._configs.get(name)
            return dict(config) if config is not None else None

    def put_connector_config(
        self, name: str, config: Mapping[str, str], target_state: TargetState | None = None
    ) -> None:
        with self._lock:
            if name not in self._configs:
                self._targets[name] = target_state or TargetState.RUNNING
            elif target_state is not None:
                self._targets[name] = target_state
            self._configs[name] = dict(config)

    def remove_connector(self, name: str) -> None:
        with self._lock:
            self._configs.pop(name, None)
            self._targets.pop(name, None)
            self._tasks.pop(name, None)

    def get_target_state(self, name: str) -> TargetState | None:
        with self._lock:
            return self._targets.get(name)

    def put_target_state(self, name: str, state: TargetState) -> None:
        with self._lock:
            if name not in self._configs:
                raise KeyError(name)
            self._targets[name] = state

    def get_task_configs(self, name: str) -> list[dict[str, str]]:
        with self._lock:
            return [dict(c) for c in self._tasks.get(name, [])]

    def put_task_configs(self, name: str, configs: Sequence[Mapping[str, str]]) -> None:
        """Raises KeyError if the connector does not exist (as the SQLite store does)."""
        with self._lock:
            if name not in self._configs:
                raise KeyError(name)
            self._tasks[name] = [dict(c) for c in configs]


class MemoryOffsetStore(OffsetStore):
    """Source offsets keyed by connector and the partition's canonical JSON."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._offsets: dict[str, dict[str, tuple[dict[str, Any], dict[str, Any]]]] = {}

    def get(self, connector: str, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        key = canonical_json(dict(partition))
        with self._lock:
            entry = self._offsets.get(connector, {}).get(key)
            return _json_copy(entry[1]) if entry is not None else None

    def put_many(
        self, connector: str, offsets: Mapping[str, tuple[Mapping[str, Any], Any]]
    ) -> None:
        # Rows are keyed by the partition itself, so a caller's key can never disagree with get().
        rows = [(dict(p), _json_copy(o) if o is not None else None) for p, o in offsets.values()]
        with self._lock:
            stored = self._offsets.setdefault(connector, {})
            for partition, offset in rows:
                key = canonical_json(partition)
                if offset is None:
                    stored.pop(key, None)
                else:
                    stored[key] = (_json_copy(partition), offset)

    def all(self, connector: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        with self._lock:
            stored = self._offsets.get(connector, {})
            return [(_json_copy(p), _json_copy(o)) for _, (p, o) in sorted(stored.items())]

    def remove_connector(self, connector: str) -> None:
        with self._lock:
            self._offsets.pop(connector, None)


class MemoryStatusStore(StatusStore):
    """Connector and task statuses in dicts."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._connectors: dict[str, ConnectorStatus] = {}
        self._tasks: dict[tuple[str, int], TaskStatus] = {}

    def put_connector(self, status: ConnectorStatus) -> None:
        with self._lock:
            self._connectors[status.connector] = status

    def put_task(self, status: TaskStatus) -> None:
        with self._lock:
            self._tasks[(status.connector, status.task)] = status

    def get_connector(self, connector: str) -> ConnectorStatus | None:
        with self._lock:
            return self._connectors.get(connector)

    def get_task(self, connector: str, task: int) -> TaskStatus | None:
        with self._lock:
            return self._tasks.get((connector, task))

    def get_tasks(self, connector: str) -> list[TaskStatus]:
        with self._lock:
            found = [s for (c, _), s in self._tasks.items() if c == connector]
        return sorted(found, key=lambda s: s.task)

    def delete_task(self, connector: str, task: int) -> None:
        with self._lock:
            self._tasks.pop((connector, task), None)

    def delete_connector(self, connector: str) -> None:
        with self._lock:
            self._connectors.pop(connector, None)
            for key in [k for k in self._tasks if k[0] == connector]:
                del self._tasks[key]


class MemoryTopicStore(TopicStore):
    """Active topics per connector; the first record of a topic wins."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._uses: dict[str, dict[str, TopicUse]] = {}

    def put(self, use: TopicUse) -> bool:
        with self._lock:
            uses = self._uses.setdefault(use.connector, {})
            if use.topic in uses:
                return False
            uses[use.topic] = use
            return True

    def topics(self, connector: str) -> list[TopicUse]:
        with self._lock:
            uses = list(self._uses.get(connector, {}).values())
        return sorted(uses, key=lambda u: u.topic)

    def reset(self, connector: str) -> None:
        with self._lock:
            self._uses.pop(connector, None)

    def remove(self, connector: str, topics: list[str]) -> None:
        with self._lock:
            uses = self._uses.get(connector, {})
            for topic in topics:
                uses.pop(topic, None)


def open_memory_stores() -> Stores:
    """Fresh, empty in-memory stores; close is a no-op."""
    return Stores(
        configs=MemoryConfigStore(),
        offsets=MemoryOffsetStore(),
        statuses=MemoryStatusStore(),
        topics=MemoryTopicStore(),
        close=lambda: None,
    )


__all__ = [
    "MemoryConfigStore",
    "MemoryOffsetStore",
    "MemoryStatusStore",
    "MemoryTopicStore",
    "open_memory_stores",
]
