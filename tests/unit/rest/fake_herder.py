"""An in-memory HerderAPI for unit tests of the HTTP layer: dicts, no worker, no storage.

Its error texts are its own, marked "fake:", so that a REST test can only check that the HTTP
layer passes the herder's message through, never pretend to check Kafka's texts. Those, and
the herder's behaviour (PATCH merge, validation), are tested over the real StandaloneHerder
in test_rest_real_herder.py.
"""

from __future__ import annotations

from typing import Any

from connect_lite.api.errors import (
    AlreadyExistsError,
    BadRequestError,
    ConfigError,
    NotFoundError,
)
from connect_lite.control.connector_requests import parse_initial_state, with_name
from connect_lite.control.entities import (
    ConfigInfos,
    ConnectorInfo,
    ConnectorOffset,
    ConnectorOffsets,
    ConnectorStateInfo,
    LastBatch,
    Message,
    MetricsText,
    ServerInfo,
    TaskInfo,
    WorkerHealth,
)
from connect_lite.control.herder_api import HerderAPI
from connect_lite.plugins.types import PluginDesc, PluginRef, PluginType
from connect_lite.protocol.states import ConnectorStatus, State, TargetState, TaskStatus

WORKER = "127.0.0.1:8083"
NULL_VALUE = "fake: null value"
NOT_FOUND = "fake: no connector {}"
NO_STATUS = "fake: no status for connector {}"
NO_TASK_STATUS = "fake: no status for task {}-{}"
UNKNOWN = "fake: unknown connector {}"
EXISTS = "fake: connector {} exists"
NO_CLASS = "fake: no connector.class"
UNKNOWN_PLUGIN = "fake: no plugin {}"
NO_OFFSETS = "fake: no offsets"


def plugin(class_name: str, type_: PluginType, version: str) -> PluginDesc:
    ref = PluginRef(None, class_name.rsplit(".", 1)[0], class_name.rsplit(".", 1)[1])
    return PluginDesc(class_name, type_, version, ref, object)


PLUGINS = [
    plugin("org.example.FileSink", PluginType.SINK, "1.0"),
    plugin("org.example.FileSource", PluginType.SOURCE, "2.1"),
    plugin("org.example.Mask", PluginType.TRANSFORMATION, "undefined"),
]


class FakeHerder:
    """Connectors live in dicts; every call is recorded in ``calls``."""

    worker_id = WORKER

    def __init__(self) -> None:
        self.configs: dict[str, dict[str, str]] = {}
        self.statuses: dict[str, ConnectorStatus] = {}
        self.last_batches: dict[str, dict[int, LastBatch]] = {}
        self.task_statuses: dict[str, list[TaskStatus]] = {}
        self.targets: dict[str, str] = {}
        self.calls: list[tuple[Any, ...]] = []
        self.health_value = WorkerHealth("healthy", "Worker has completed startup and is ready.")
        self.missing_status: set[str] = set()  # connectors whose status lookup says 404
        self.fail_with: Exception | None = None
        self.topics: dict[str, list[str]] = {}

    # -- helpers -------------------------------------------------------------------------
    def _check(self, name: str, message: str = NOT_FOUND) -> None:
        if self.fail_with is not None:
            raise self.fail_with
        if name not in self.configs:
            raise NotFoundError(message.format(name))

    def _info(self, name: str) -> ConnectorInfo:
        config = self.configs[name]
        kind = "sink" if "Sink" in config.get("connector.class", "") else "source"
        return ConnectorInfo(name, dict(config), [t.task for t in self.task_statuses[name]], kind)

    def _store(self, name: str, config: dict[str, str], target: TargetState) -> None:
        if any(v is None for v in config.values()):
            raise ConfigError(NULL_VALUE)
        if "connector.class" not in config:
            raise BadRequestError(NO_CLASS)
        self.configs[name] = dict(config)
        self.targets[name] = target.value
        running = self.targets[name] == "RUNNING"
        state = State.RUNNING if running else State[self.targets[name]]
        self.statuses[name] = ConnectorStatus(name, state, WORKER, None, "1.0")
        count = int(config.get("tasks.max", "1")) if running else 0
        self.task_statuses[name] = [
            TaskStatus(name, t, State.RUNNING, WORKER, None, "1.0") for t in range(count)
        ]

    # -- HerderAPI -----------------------------------------------------------------------
    def health(self) -> WorkerHealth:
        return self.health_value

    def server_info(self) -> ServerInfo:
        return ServerInfo("4.1.0", "abc123", "cluster-1")

    def connectors(self) -> list[str]:
        return list(self.configs)

    def connector_info(self, name: str) -> ConnectorInfo:
        self._check(name)
        return self._info(name)

    def connector_config(self, name: str) -> dict[str, str]:
        self._check(name)
        return dict(self.configs[name])

    def create_connector(
        self, name: str, config: dict[str, str], initial_state: str | None = None
    ) -> ConnectorInfo:
        """Checks in the real herder's order: the name, the initial state, then existence."""
        self.calls.append(("create", name, dict(config), initial_state))
        config = with_name(name, config)
        target = parse_initial_state(initial_state)
        if name in self.configs:
            raise AlreadyExistsError(EXISTS.format(name))
        self._store(name, config, target)
        return self._info(name)

    def put_connector_config(self, name: str, config: dict[str, str]) -> tuple[bool, ConnectorInfo]:
        self.calls.append(("put", name, dict(config)))
        created = name not in self.configs
        self._store(name, with_name(name, config), TargetState.RUNNING)
        return created, self._info(name)

    def patch_connector_config(self, name: str, patch: dict[str, str | None]) -> ConnectorInfo:
        self.calls.append(("patch", name, dict(patch)))
        self._check(name)
        merged = {**self.configs[name], **patch}
        self._store(name, {k: v for k, v in merged.items() if v is not None}, TargetState.RUNNING)
        return self._info(name)

    def connector_status(self, name: str) -> ConnectorStateInfo:
        self._check(name, NO_STATUS)
        if name in self.missing_status:
            raise NotFoundError(NO_STATUS.format(name))
        info = self._info(name)
        tasks = self.task_statuses[name]
        batches = self.last_batches.get(name, {})
        return ConnectorStateInfo(name, info.type, self.statuses[name], tasks, batches)

    def task_status(self, name: str, task: int) -> TaskStatus:
        for status in self.task_statuses.get(name, []):
            if status.task == task:
                return status
        raise NotFoundError(NO_TASK_STATUS.format(name, task))

    def task_configs(self, name: str) -> list[TaskInfo]:
        self._check(name)
        config = {"task.class": "org.example.Task", "topics": "t1"}
        return [TaskInfo(name, t.task, config) for t in self.task_statuses[name]]

    def pause_connector(self, name: str) -> None:
        self._check(name, UNKNOWN)
        self.calls.append(("pause", name))

    def resume_connector(self, name: str) -> None:
        self._check(name, UNKNOWN)
        self.calls.append(("resume", name))

    def stop_connector(self, name: str) -> None:
        self._check(name, UNKNOWN)
        self.calls.append(("stop", name))

    def restart_connector(
        self, name: str, include_tasks: bool, only_failed: bool
    ) -> ConnectorStateInfo | None:
        self.calls.append(("restart", name, include_tasks, only_failed))
        self._check(name)
        if not include_tasks and not only_failed:
            return None
        status = self.connector_status(name)
        restarting = [
            TaskStatus(name, t.task, State.RESTARTING, t.worker_id, None, t.version)
            for t in reversed(status.tasks)  # the REST layer sorts tasks by id
        ]
        connector = ConnectorStatus(name, State.RESTARTING, WORKER, None, "1.0")
        return ConnectorStateInfo(name, status.type, connector, restarting)

    def restart_task(self, name: str, task: int) -> None:
        self.calls.append(("restart_task", name, task))
        self._check(name)
        self.task_status(name, task)

    def delete_connector(self, name: str, include_offsets: bool = False) -> None:
        self._check(name)
        self.calls.append(("delete", name, include_offsets))
        del self.configs[name]

    def connector_offsets(self, name: str) -> ConnectorOffsets:
        self._check(name)
        self.calls.append(("offsets", name))
        return ConnectorOffsets([ConnectorOffset({"file": "a.txt"}, {"position": 42})])

    def alter_connector_offsets(self, name: str, offsets: ConnectorOffsets) -> Message:
        self.calls.append(("alter_offsets", name, offsets))
        if not offsets.offsets:
            raise BadRequestError(NO_OFFSETS)
        self._check(name)
        return Message("altered")

    def reset_connector_offsets(self, name: str) -> Message:
        self._check(name)
        self.calls.append(("reset_offsets", name))
        return Message("reset")

    def plugins(self, connectors_only: bool) -> list[PluginDesc]:
        self.calls.append(("plugins", connectors_only))
        connectors = (PluginType.SINK, PluginType.SOURCE)
        return [p for p in PLUGINS if p.type in connectors or not connectors_only]

    def plugin_config(self, plugin: str, version: str | None) -> list[dict[str, Any]]:
        self.calls.append(("plugin_config", plugin, version))
        if plugin not in {p.class_name for p in PLUGINS}:
            raise NotFoundError(UNKNOWN_PLUGIN.format(plugin))
        return [{"name": "file", "type": "STRING", "required": True, "default_value": None}]

    def validate_config(self, plugin: str, config: dict[str, str]) -> ConfigInfos:
        self.calls.append(("validate", plugin, dict(config)))
        nulls = [k for k, v in config.items() if v is None]
        configs = [
            {"definition": None, "value": {"name": k, "errors": [NULL_VALUE]}} for k in nulls
        ]
        return ConfigInfos(config.get("connector.class", ""), len(nulls), ["Common"], configs)

    def connector_topics(self, name: str) -> list[str]:
        if self.fail_with is not None:  # no existence check: Kafka answers [] for any name
            raise self.fail_with
        self.calls.append(("topics", name))
        return sorted(self.topics.get(name, []))

    def reset_connector_topics(self, name: str) -> None:
        self.calls.append(("reset_topics", name))
        self.topics.pop(name, None)

    def metrics(self) -> MetricsText:
        body = b"# HELP fake_metric A metric.\n# TYPE fake_metric gauge\nfake_metric 1.0\n"
        return MetricsText(body, "text/plain; version=0.0.4; charset=utf-8")


def _conforms(herder: FakeHerder) -> HerderAPI:
    return herder  # mypy checks that FakeHerder implements the protocol
