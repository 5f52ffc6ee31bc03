"""The backing-store interfaces. The herder and worker use only these; SQL lives behind them."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from connect_lite.api.errors import ConnectError
from connect_lite.protocol.states import ConnectorStatus, TargetState, TaskStatus


class StoreClosedError(ConnectError):
    """The store was closed (the worker is shutting down); nothing was read or written."""


class StateFileError(ConnectError):
    """The state file cannot be used; the worker refuses to start. The message is one line
    that names the file, what is wrong and what to do."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path


class StateFileInUseError(StateFileError):
    """Another live process owns the state file. ``pid`` is its process id (None if unknown)."""

    def __init__(self, path: str, pid: int | None) -> None:
        holder = f"pid {pid}" if pid is not None else "a process whose pid is unknown"
        super().__init__(
            path,
            f"State file {path} is in use by another connect-lite worker ({holder}); "
            "a state file has one owner. Stop that worker first, or give this one its own "
            "state.storage.file.",
        )
        self.pid = pid


class StateFileDamagedError(StateFileError):
    """The state file is not an SQLite database, or its integrity check failed."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(
            path,
            f"State file {path} is damaged: {problem}. Nothing was written to it; restore it "
            "from a backup, or move it away to start with an empty state.",
        )
        self.problem = problem


class StateFileTooNewError(StateFileError):
    """The state file has migrations this version does not know: a newer version wrote it.

    ``unknown`` maps each unknown migration to the version that applied it (None if the
    file does not say)."""

    def __init__(self, path: str, version: str, unknown: dict[str, str | None]) -> None:
        applied = ", ".join(
            f"{name} (applied by connect-lite {by or 'of an unknown version'})"
            for name, by in unknown.items()
        )
        super().__init__(
            path,
            f"State file {path} was written by a newer connect-lite: it has migrations that "
            f"connect-lite {version} does not know: {applied}. Nothing was written to it; run "
            "the version that wrote it, or restore a backup made for this version.",
        )
        self.version = version
        self.unknown = dict(unknown)


class ConfigStore(ABC):
    """Connector configs, their task configs and their target states."""

    @abstractmethod
    def connector_names(self) -> list[str]:
        """Names of all stored connectors, in creation order."""

    @abstractmethod
    def get_connector_config(self, name: str) -> dict[str, str] | None: ...

    @abstractmethod
    def put_connector_config(
        self, name: str, config: Mapping[str, str], target_state: TargetState | None = None
    ) -> None:
        """Create or replace a connector's config. A new connector gets ``target_state``
        (RUNNING if None); an existing one keeps its target state unless one is given."""

    @abstractmethod
    def remove_connector(self, name: str) -> None:
        """Remove config, task configs and target state. No error if absent."""

    @abstractmethod
    def get_target_state(self, name: str) -> TargetState | None: ...

    @abstractmethod
    def put_target_state(self, name: str, state: TargetState) -> None:
        """Raises KeyError if the connector does not exist."""

    @abstractmethod
    def get_task_configs(self, name: str) -> list[dict[str, str]]:
        """Task configs in task order; [] if none or unknown connector."""

    @abstractmethod
    def put_task_configs(self, name: str, configs: Sequence[Mapping[str, str]]) -> None:
        """Replace all task configs of a connector atomically."""


class OffsetStore(ABC):
    """Source offsets, per connector and source partition (partitions are JSON objects)."""

    @abstractmethod
    def get(self, connector: str, partition: Mapping[str, Any]) -> dict[str, Any] | None: ...

    @abstractmethod
    def put_many(
        self, connector: str, offsets: Mapping[str, tuple[Mapping[str, Any], Any]]
    ) -> None:
        """Write in one transaction. ``offsets`` maps a partition's canonical key to
        ``(partition, offset)``; an offset of None deletes that partition (a tombstone)."""

    @abstractmethod
    def all(self, connector: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """Every (partition, offset) of a connector, in a stable order."""

    @abstractmethod
    def remove_connector(self, connector: str) -> None: ...


class StatusStore(ABC):
    """Statuses of connectors and tasks."""

    @abstractmethod
    def put_connector(self, status: ConnectorStatus) -> None: ...

    @abstractmethod
    def put_task(self, status: TaskStatus) -> None: ...

    @abstractmethod
    def get_connector(self, connector: str) -> ConnectorStatus | None: ...

    @abstractmethod
    def get_task(self, connector: str, task: int) -> TaskStatus | None: ...

    @abstractmethod
    def get_tasks(self, connector: str) -> list[TaskStatus]:
        """Task statuses sorted by task id."""

    @abstractmethod
    def delete_task(self, connector: str, task: int) -> None: ...

    @abstractmethod
    def delete_connector(self, connector: str) -> None:
        """Delete the connector's status and all its task statuses."""


@dataclass(frozen=True)
class TopicUse:
    """One active topic of a connector (KIP-558)."""

    connector: str
    topic: str
    task: int
    discovered_ms: int


class TopicStore(ABC):
    """Active topics per connector (KIP-558)."""

    @abstractmethod
    def put(self, use: TopicUse) -> bool:
        """Record a topic; returns False if it was already recorded (first record wins)."""

    @abstractmethod
    def topics(self, connector: str) -> list[TopicUse]:
        """Sorted by topic name."""

    @abstractmethod
    def reset(self, connector: str) -> None: ...

    @abstractmethod
    def remove(self, connector: str, topics: list[str]) -> None: ...


@dataclass
class Stores:
    """All the stores of one worker, opened together and closed together."""

    configs: ConfigStore
    offsets: OffsetStore
    statuses: StatusStore
    topics: TopicStore
    close: Any = None  # a callable that releases the backing resources, if any
