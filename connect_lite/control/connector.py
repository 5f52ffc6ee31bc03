"""WorkerConnector: one connector instance and its transitions between target states."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from connect_lite.api.connector import Connector, ConnectorContext
from connect_lite.config.connector_config import ConnectorConfig
from connect_lite.config.resolution import ConfigResolver, Resolved
from connect_lite.control.status import StatusReporter
from connect_lite.logs.context import logging_context
from connect_lite.plugins.distributions import version_of
from connect_lite.protocol.reports import trace_of
from connect_lite.protocol.states import State, TargetState

log = logging.getLogger(__name__)


class _Context(ConnectorContext):
    def __init__(self, owner: WorkerConnector) -> None:
        self._owner = owner

    def request_task_reconfiguration(self) -> None:
        self._owner.on_reconfigure(self._owner.name)

    def raise_error(self, error: Exception) -> None:
        self._owner.fail(error)


class WorkerConnector:
    """Starts, pauses and stops a connector instance and reports its status.

    As in Kafka, a PAUSED or STOPPED connector's instance is stopped; resuming starts it again.
    The connector's own code runs in its ``[name|worker]`` logging context."""

    def __init__(
        self,
        name: str,
        instance: Connector,
        config: ConnectorConfig,
        status: StatusReporter,
        on_reconfigure: Callable[[str], None],
        location: str | None = None,
        resolved: Resolved | None = None,
    ) -> None:
        self.name = name
        self._resolved = resolved
        """The config's provider references and what they resolved to."""
        self.location = location
        """The plugin location the connector class was loaded from (None: built-in)."""
        self.instance = instance
        self.config = config
        """The connector's typed config, built once per start; its tasks are built from it."""
        self.status = status
        self.on_reconfigure = on_reconfigure
        self.started = False
        self.failed = False
        self.version = version_of(instance)
        instance.context = _Context(self)

    def transition_to(self, target: TargetState) -> None:
        """Bring the instance to the target state. Raises if ``start`` fails (status FAILED)."""
        with logging_context(self.name):
            self._transition_to(target)

    def _transition_to(self, target: TargetState) -> None:
        if target is TargetState.RUNNING:
            if not self.started:
                self._start()
            self.status.connector(self.name, State.RUNNING, None, self.version)
        else:
            self._stop_instance()
            state = State.PAUSED if target is TargetState.PAUSED else State.STOPPED
            self.status.connector(self.name, state, None, self.version)

    def _start(self) -> None:
        try:
            self.instance.start(self.config.plugin_config)
        except Exception as error:
            self.fail(error)
            raise
        self.started = True
        self.failed = False

    def _stop_instance(self) -> None:
        if not self.started:
            return
        self.started = False
        try:
            self.instance.stop()
        except Exception:
            log.exception("Error while stopping connector")

    def fail(self, error: BaseException) -> None:
        """Mark the connector FAILED; also called from the connector's own threads."""
        self.failed = True
        with logging_context(self.name):
            log.error("Connector failed: %s", error)
        self.status.connector(self.name, State.FAILED, trace_of(error), self.version)

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        with logging_context(self.name):
            return [dict(c) for c in self.instance.task_configs(max_tasks)]

    def fresh_config(self, resolver: ConfigResolver) -> ConnectorConfig:
        """The connector's config with its provider references resolved anew (a task that
        starts, or restarts, gets current values, as in Kafka); unchanged without any."""
        written = self._resolved.written if self._resolved is not None else {}
        if not any("${" in value for value in written.values()):
            return self.config
        values = resolver.resolve(written).values
        return ConnectorConfig(values, self.config.connector_type)

    def put_back(self, config: dict[str, str]) -> dict[str, str]:
        """A config derived from this connector's, with its provider references back in
        place of the values they resolved to (what is stored is never resolved text)."""
        return self._resolved.conceal(config) if self._resolved is not None else config

    def task_class(self) -> type[Any]:
        return self.instance.task_class()

    def shutdown(self) -> None:
        """Stop the instance without writing a status (the status survives a worker restart)."""
        with logging_context(self.name):
            self._stop_instance()
