"""The control-plane interface the REST layer calls: every change goes through it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from connect_lite.api.errors import ConnectError
from connect_lite.control.entities import (
    ConfigInfos,
    ConnectorInfo,
    ConnectorOffsets,
    ConnectorStateInfo,
    Message,
    MetricsText,
    ServerInfo,
    TaskInfo,
    WorkerHealth,
)
from connect_lite.plugins.types import PluginDesc
from connect_lite.protocol.states import TaskStatus
from connect_lite.storage.base import StoreClosedError


class WorkerStoppingError(ConnectError):
    """The worker is shutting down and takes no more work (503)."""


class WorkerStartingError(ConnectError):
    """The worker is still starting: the REST listener is bound, the herder not yet (503)."""


STOPPING_ERRORS: tuple[type[ConnectError], ...] = (WorkerStoppingError, StoreClosedError)
"""What a request meets while the worker shuts down: answered 503."""


class HerderAPI(Protocol):
    """Every method is synchronous and raises connect_lite.api.errors on failure:
    NotFoundError (404), AlreadyExistsError (409), BadRequestError / ConfigError (400),
    ForbiddenError (403), WorkerStoppingError and WorkerStartingError (503), anything else
    (500). Messages are Kafka's texts."""

    worker_id: str

    def health(self) -> WorkerHealth: ...

    def server_info(self) -> ServerInfo: ...

    def connectors(self) -> list[str]: ...

    def connector_info(self, name: str) -> ConnectorInfo:
        """404 ``Connector {name} not found``."""

    def connector_config(self, name: str) -> dict[str, str]:
        """404 ``Connector {name} not found``."""

    def create_connector(
        self, name: str, config: Mapping[str, str | None], initial_state: str | None = None
    ) -> ConnectorInfo:
        """409 ``Connector {name} already exists``; 400 invalid config, a ``name`` in the
        config other than ``name``, or an ``initial_state`` other than RUNNING, PAUSED or
        STOPPED (any case)."""

    def put_connector_config(
        self, name: str, config: Mapping[str, str | None]
    ) -> tuple[bool, ConnectorInfo]:
        """Create or replace; returns (created, info). 400 as for create."""

    def patch_connector_config(self, name: str, patch: dict[str, str | None]) -> ConnectorInfo:
        """Merge; a None value removes the key. 404 if unknown."""

    def connector_status(self, name: str) -> ConnectorStateInfo:
        """404 ``No status found for connector {name}``."""

    def task_status(self, name: str, task: int) -> TaskStatus:
        """404 ``No status found for task {name}-{task}``."""

    def task_configs(self, name: str) -> list[TaskInfo]:
        """404 ``Connector {name} not found``."""

    def pause_connector(self, name: str) -> None:
        """404 ``Unknown connector {name}``."""

    def resume_connector(self, name: str) -> None:
        """404 ``Unknown connector {name}``."""

    def stop_connector(self, name: str) -> None:
        """404 ``Unknown connector {name}``."""

    def restart_connector(
        self, name: str, include_tasks: bool, only_failed: bool
    ) -> ConnectorStateInfo | None:
        """Plain restart (both False) returns None (HTTP 204); otherwise the plan (202)."""

    def restart_task(self, name: str, task: int) -> None: ...

    def delete_connector(self, name: str, include_offsets: bool = False) -> None:
        """404 ``Connector {name} not found``. With ``include_offsets`` (a connect-lite
        extension) the connector's offsets are reset in the same operation."""

    def connector_offsets(self, name: str) -> ConnectorOffsets:
        """KIP-875: source offsets from the store, sink offsets of the consumer group.
        404 ``Connector {name} not found``; 500 if they cannot be read."""

    def alter_connector_offsets(self, name: str, offsets: ConnectorOffsets) -> Message:
        """KIP-875 alter; the connector must be STOPPED (400). 404 if unknown."""

    def reset_connector_offsets(self, name: str) -> Message:
        """KIP-875 reset (idempotent); the connector must be STOPPED (400). 404 if unknown."""

    def plugins(self, connectors_only: bool) -> list[PluginDesc]: ...

    def plugin_config(self, plugin: str, version: str | None) -> list[dict[str, Any]]:
        """ConfigKeyInfo JSON objects. 404 ``Unknown plugin {plugin}.``"""

    def validate_config(self, plugin: str, config: Mapping[str, str | None]) -> ConfigInfos: ...

    def connector_topics(self, name: str) -> list[str]:
        """KIP-558 active topics. 403 ``Topic tracking is disabled.``"""

    def reset_connector_topics(self, name: str) -> None:
        """403 ``Topic tracking is disabled.`` / ``Topic tracking reset is disabled.``"""

    def metrics(self) -> MetricsText:
        """Every metric in Prometheus text format, with its content type."""
