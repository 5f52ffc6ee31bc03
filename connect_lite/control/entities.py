"""What the herder returns to the REST layer: plain values, rendered to JSON by rest/.

The statuses, states and LastBatch are the protocol's (protocol/states.py, host.py), and
ConfigInfos is config's validation answer (each lives at the lowest layer that uses it); they
are re-exported here so that REST, which talks only to the herder, names them from one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from connect_lite.config.validation import ConfigInfos
from connect_lite.protocol.host import LastBatch
from connect_lite.protocol.states import ConnectorStatus, State, TargetState, TaskStatus

__all__ = [
    "ConfigInfos",
    "ConnectorInfo",
    "ConnectorOffset",
    "ConnectorOffsets",
    "ConnectorStateInfo",
    "ConnectorStatus",
    "LastBatch",
    "Message",
    "MetricsText",
    "ServerInfo",
    "State",
    "TargetState",
    "TaskInfo",
    "TaskStatus",
    "WorkerHealth",
]


@dataclass(frozen=True)
class ConnectorInfo:
    name: str
    config: dict[str, str]
    tasks: list[int]
    type: str  # "source" | "sink" | "unknown"


@dataclass(frozen=True)
class TaskInfo:
    connector: str
    task: int
    config: dict[str, str]


@dataclass(frozen=True)
class ConnectorStateInfo:
    name: str
    type: str
    connector: ConnectorStatus
    tasks: list[TaskStatus] = field(default_factory=list)
    last_batches: dict[int, LastBatch] = field(default_factory=dict)
    """Per task running on this worker, where its last batch ran on Spark (not Kafka's)."""
    details: dict[str, int | float | str] | None = None
    """What the connector last said it holds in its system (``Connector.status_details``;
    not Kafka's)."""


@dataclass(frozen=True)
class MetricsText:
    """``GET /metrics``: an exposition in the metrics library's text format, and its type."""

    body: bytes
    content_type: str


@dataclass(frozen=True)
class ServerInfo:
    version: str
    commit: str
    kafka_cluster_id: str | None


@dataclass(frozen=True)
class WorkerHealth:
    status: str  # "healthy" | "starting" | "unhealthy"
    message: str
    unavailable: bool = False
    """The worker answers but cannot run tasks (its Spark session failed to start): the
    service is unavailable (503), which is not the herder failing to answer (500)."""


@dataclass(frozen=True)
class ConnectorOffset:
    """One KIP-875 offset entry: a partition and its offset (None = no offset / delete it)."""

    partition: dict[str, Any] | None
    offset: dict[str, Any] | None


@dataclass(frozen=True)
class ConnectorOffsets:
    """The body of ``GET``/``PATCH /connectors/{name}/offsets``."""

    offsets: list[ConnectorOffset] = field(default_factory=list)


@dataclass(frozen=True)
class Message:
    """A ``{"message": ...}`` answer, such as the offsets API's success messages."""

    message: str
