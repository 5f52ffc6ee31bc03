"""StandaloneHerder: the one door for every control operation, serialised by one lock."""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from connect_lite import __version__
from connect_lite.api.errors import (
    AlreadyExistsError,
    BadRequestError,
    ConnectError,
    NotFoundError,
)
from connect_lite.config import validation
from connect_lite.config.connector_config import ConnectorConfig
from connect_lite.config.framework import MAX_CONNECTOR_NAME
from connect_lite.config.worker import WorkerConfig
from connect_lite.control.connector_details import ConnectorDetails
from connect_lite.control.connector_offsets import ConnectorOffsetsAPI
from connect_lite.control.connector_requests import parse_initial_state, with_name
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
from connect_lite.control.herder_api import STOPPING_ERRORS, WorkerStoppingError
from connect_lite.control.metrics import CONTENT_TYPE, WorkerMetrics
from connect_lite.control.offset_requests import not_stopped_message, require_offsets
from connect_lite.control.restart_plan import restart_plan
from connect_lite.control.topic_tracking import TopicTracker
from connect_lite.control.worker import Worker
from connect_lite.kafka.clients import librdkafka_refusal
from connect_lite.plugins.registry import Plugins
from connect_lite.plugins.types import PluginDesc, PluginType
from connect_lite.protocol.states import State, TargetState, TaskStatus
from connect_lite.storage.base import Stores

log = logging.getLogger(__name__)

KAFKA_API_VERSION = "4.1.0"
"""The Kafka Connect REST API version this worker implements, reported by GET /."""

F = TypeVar("F", bound=Callable[..., Any])


def _serialised(method: F) -> F:
    """Runs the method under the herder's lock; refused once the herder is stopping."""

    @functools.wraps(method)
    def wrapper(self: StandaloneHerder, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            if self._stopping:
                raise WorkerStoppingError("Worker is shutting down; try again when it is back.")
            return method(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]  # same signature


RELOAD_MIN_DELAY_MS = 1000
"""The shortest delay before a restart that reloads expiring config provider values."""


class StandaloneHerder:
    """Implements HerderAPI over the config and status stores and the Worker.

    Every collaborator comes from the composition root (``worker_main``):

    - ``worker`` runs the connectors and tasks; ``stores`` holds configs and statuses;
      ``config`` is the worker config (validation reads it);
    - ``plugins`` answers the plugin listings and validation;
    - ``topic_tracker`` is the worker's KIP-558 tracker (the one its tasks record into);
    - ``metrics`` renders ``GET /metrics``; ``offsets`` runs the KIP-875 operations;
    - ``worker_id`` and ``cluster_id`` are reported as they are;
    - ``details`` samples the connectors' status details in the background (none: no
      details shown).
    """

    def __init__(
        self,
        worker: Worker,
        stores: Stores,
        config: WorkerConfig,
        *,
        plugins: Plugins,
        topic_tracker: TopicTracker,
        metrics: WorkerMetrics,
        offsets: ConnectorOffsetsAPI,
        worker_id: str,
        cluster_id: str | None = None,
        details: ConnectorDetails | None = None,
    ) -> None:
        self.worker = worker
        self.stores = stores
        self.config = config
        self._plugins = plugins
        self._topic_tracker = topic_tracker
        self._metrics = metrics
        self._offsets = offsets
        self.worker_id = worker_id
        self.cluster_id = cluster_id
        self._details = details
        self._lock = threading.RLock()
        self._ready = False
        self._stopping = False
        self.health_timeout_s = 10.0
        """How long GET /health waits for the herder lock before answering unhealthy (500)."""
        self.stop_lock_timeout_s = 5.0
        """How long stop() waits for a request that holds the herder; then it stops without."""
        self._reconfigurer = ThreadPoolExecutor(1, thread_name_prefix="herder-reconfigure")
        self._reloads: dict[str, threading.Timer] = {}
        """config.action.reload=restart: a pending restart per connector whose provider
        values expire."""

    # -- lifecycle -------------------------------------------------------------------------
    @_serialised
    def start(self) -> None:
        """Bring every stored connector back to its stored target state."""
        for name in self.stores.configs.connector_names():
            try:
                config = self._config_or_404(name)
                self._start_connector(name, config, self._target_state(name), restore=True)
            except Exception:
                log.exception("[%s] Failed to restore connector", name)
        if self._details is not None:
            self._details.start()

    def ready(self) -> None:
        self._ready = True

    def stop(self) -> None:
        """Refuse new work from now on (503), then stop every task and connector; a task
        that misses the graceful deadline is abandoned and writes nothing after it."""
        self._reconfigurer.shutdown(wait=False, cancel_futures=True)
        if self._details is not None:
            self._details.stop()
        self._stopping = True  # a request that takes the lock from now on is refused
        self._ready = False
        locked = self._lock.acquire(timeout=self.stop_lock_timeout_s)
        if not locked:  # a request holds it (a plugin's validate waiting on a host)
            log.warning(
                "A request still held the herder after %.0f s; stopping without it",
                self.stop_lock_timeout_s,
            )
        try:
            for timer in list(self._reloads.values()):
                timer.cancel()
            self.worker.shutdown()
        finally:
            if locked:
                self._lock.release()

    def health(self) -> WorkerHealth:
        if self._stopping:
            return WorkerHealth("starting", "Worker is shutting down.")
        if not self._ready:
            return WorkerHealth("starting", "Worker is still starting up.")
        failure = self.worker.engine_failure()
        if failure is not None:
            return WorkerHealth("unhealthy", f"Worker cannot run tasks: {failure}", True)
        if not self._lock.acquire(timeout=self.health_timeout_s):
            return WorkerHealth(
                "unhealthy",
                "Worker was unable to handle this request and may be unable to handle other "
                "requests.",
            )
        self._lock.release()
        return WorkerHealth(
            "healthy", "Worker has completed startup and is ready to handle requests."
        )

    def server_info(self) -> ServerInfo:
        return ServerInfo(KAFKA_API_VERSION, f"connect-lite-{__version__}", self.cluster_id)

    # -- reads -----------------------------------------------------------------------------
    def connectors(self) -> list[str]:
        return self.stores.configs.connector_names()

    def _config_or_404(self, name: str) -> dict[str, str]:
        config = self.stores.configs.get_connector_config(name)
        if config is None:
            raise NotFoundError(f"Connector {name} not found")
        return config

    def connector_info(self, name: str) -> ConnectorInfo:
        config = self._config_or_404(name)
        return self._info(name, config, self.stores.configs.get_task_configs(name))

    def _info(
        self, name: str, config: dict[str, str], task_configs: list[dict[str, str]] | None
    ) -> ConnectorInfo:
        """The connector's info from its config and task configs (read when None)."""
        if task_configs is None:
            task_configs = self.stores.configs.get_task_configs(name)
        return ConnectorInfo(name, config, list(range(len(task_configs))), self._type(config))

    def connector_config(self, name: str) -> dict[str, str]:
        return self._config_or_404(name)

    def task_configs(self, name: str) -> list[TaskInfo]:
        self._config_or_404(name)
        configs = self.stores.configs.get_task_configs(name)
        return [TaskInfo(name, i, c) for i, c in enumerate(configs)]

    def connector_status(self, name: str) -> ConnectorStateInfo:
        status = self.stores.statuses.get_connector(name)
        config = self.stores.configs.get_connector_config(name)
        if status is None or config is None:
            raise NotFoundError(f"No status found for connector {name}")
        tasks = self.stores.statuses.get_tasks(name)
        batches = self.worker.last_batches(name)
        details = None if self._details is None else self._details.get(name)
        return ConnectorStateInfo(name, self._type(config), status, tasks, batches, details)

    def task_status(self, name: str, task: int) -> TaskStatus:
        status = self.stores.statuses.get_task(name, task)
        if status is None:
            raise NotFoundError(f"No status found for task {name}-{task}")
        return status

    def _type(self, config: Mapping[str, str]) -> str:
        return self.worker.connector_type(config)

    # -- plugins and validation ------------------------------------------------------------
    def plugins(self, connectors_only: bool) -> list[PluginDesc]:
        types = [PluginType.SINK, PluginType.SOURCE] if connectors_only else None
        return self._plugins.all(types)

    def plugin_config(self, plugin: str, version: str | None) -> list[dict[str, Any]]:
        return validation.plugin_config_keys(self._plugins, plugin, version)

    def validate_config(self, plugin: str, config: Mapping[str, str | None]) -> ConfigInfos:
        given = config.get("connector.class")
        if given and not _normalise(given).endswith(_normalise(plugin)):
            raise BadRequestError(
                f"Included connector type {given} does not match request type {plugin}"
            )
        # Kafka answers 500 "...BadRequestException: <message>" here (the resource does not
        # unwrap validation exceptions); connect-lite answers a bad request with 400.
        return self._validate(config)

    def _validate(self, config: Mapping[str, Any]) -> ConfigInfos:
        return validation.validate_connector_config(
            self._plugins, self.config, dict(config), self.worker.resolver, librdkafka_refusal
        )

    def _validate_or_400(self, name: str, config: dict[str, Any]) -> None:
        problem = validation.check_connector_name(name)
        if problem and ("/" in name or len(name) > MAX_CONNECTOR_NAME):
            raise BadRequestError(problem)  # before the name is parsed into anything else
        infos = self._validate(config)
        if infos.error_count > 0:
            raise BadRequestError(validation.invalid_config_message(infos))

    # -- create / update / delete ----------------------------------------------------------
    @_serialised
    def create_connector(
        self, name: str, config: Mapping[str, str | None], initial_state: str | None = None
    ) -> ConnectorInfo:
        config = with_name(name, config)
        target = parse_initial_state(initial_state)
        if self.stores.configs.get_connector_config(name) is not None:
            raise AlreadyExistsError(f"Connector {name} already exists")
        self._validate_or_400(name, config)
        self.stores.configs.put_connector_config(name, config, target)
        tasks = self._start_connector(name, config, target, answer_errors=True)
        return self._info(name, config, [] if tasks is None else tasks)  # new: none stored

    @_serialised
    def put_connector_config(
        self, name: str, config: Mapping[str, str | None]
    ) -> tuple[bool, ConnectorInfo]:
        config = with_name(name, config)
        self._validate_or_400(name, config)
        existing = self.stores.configs.get_connector_config(name)
        if existing is None:
            self.stores.configs.put_connector_config(name, config, TargetState.RUNNING)
            tasks = self._start_connector(name, config, TargetState.RUNNING, answer_errors=True)
            return True, self._info(name, config, [] if tasks is None else tasks)
        return False, self._info(name, config, self._reconfigure(name, config))

    @_serialised
    def patch_connector_config(self, name: str, patch: dict[str, str | None]) -> ConnectorInfo:
        merged: dict[str, Any] = dict(self._config_or_404(name))
        for key, value in patch.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = value
        merged = with_name(name, merged)
        self._validate_or_400(name, merged)
        return self._info(name, merged, self._reconfigure(name, merged))

    @_serialised
    def delete_connector(self, name: str, include_offsets: bool = False) -> None:
        """Delete a connector; with ``include_offsets`` (a connect-lite extension) reset its
        offsets first, after its tasks stopped. If the reset fails, nothing is deleted."""
        config = self._config_or_404(name)
        self.worker.stop_tasks(name)
        self.worker.stop_connector(name)
        if include_offsets:
            try:
                self._offsets.reset(name, self._resolved(name, config))
            except Exception:
                self._start_connector(name, config, self._target_state(name), keep_tasks=True)
                raise
        self.stores.configs.remove_connector(name)
        self._cancel_reload(name)
        self.worker.forget_statuses(name)
        self.stores.statuses.delete_connector(name)
        self._topic_tracker.forget(name)  # as KIP-558 says, even when reset is disallowed
        self._nudge_details()
        log.info("[%s] Connector deleted", name)

    def _reconfigure(self, name: str, config: dict[str, str]) -> list[dict[str, str]] | None:
        """Replace the config of an existing connector, keeping its target state; returns
        the task configs it stored, or None if it stored none."""
        self.worker.stop_tasks(name)
        self.worker.stop_connector(name)
        self.stores.configs.put_connector_config(name, config)
        if self.worker.connector_type(config) == "sink":
            resolved = self.worker.resolver.resolve_leniently(config).values
            self._topic_tracker.keep_only_consumed(name, ConnectorConfig(resolved, "sink"))
        return self._start_connector(name, config, self._target_state(name), answer_errors=True)

    # -- active topics (KIP-558) -----------------------------------------------------------
    def connector_topics(self, name: str) -> list[str]:
        """The connector's active topics; [] for a connector that never existed, as Kafka."""
        return self._topic_tracker.topics(name)

    @_serialised
    def reset_connector_topics(self, name: str) -> None:
        self._topic_tracker.reset(name)

    def metrics(self) -> MetricsText:
        """Every metric in Prometheus text format."""
        return MetricsText(self._metrics.exposition(), CONTENT_TYPE)

    # -- target states ---------------------------------------------------------------------
    @_serialised
    def pause_connector(self, name: str) -> None:
        config = self._known_or_404(name)
        self.stores.configs.put_target_state(name, TargetState.PAUSED)
        if not self.worker.has_connector(name):
            self._start_connector(name, config, TargetState.PAUSED)
            return
        self.worker.transition_connector(name, TargetState.PAUSED)
        self.worker.transition_tasks(name, TargetState.PAUSED)
        self._nudge_details()

    @_serialised
    def resume_connector(self, name: str) -> None:
        config = self._known_or_404(name)
        self.stores.configs.put_target_state(name, TargetState.RUNNING)
        if not self.worker.has_connector(name) or not self.worker.task_ids(name):
            self.worker.stop_connector(name)
            self._start_connector(name, config, TargetState.RUNNING)
            return
        self.worker.transition_connector(name, TargetState.RUNNING)
        self.worker.transition_tasks(name, TargetState.RUNNING)
        self._nudge_details()

    @_serialised
    def stop_connector(self, name: str) -> None:
        config = self._known_or_404(name)
        self.stores.configs.put_target_state(name, TargetState.STOPPED)
        self._stop_tasks_and_forget(name)
        if self.worker.has_connector(name):
            self.worker.transition_connector(name, TargetState.STOPPED)
        else:
            self._start_connector(name, config, TargetState.STOPPED)
        self._nudge_details()

    def _nudge_details(self) -> None:
        """Sample the connectors' status details soon: what they hold changes with their state."""
        if self._details is not None:
            self._details.nudge()

    def _stop_tasks_and_forget(self, name: str) -> None:
        self.worker.stop_tasks(name)
        for status in self.stores.statuses.get_tasks(name):
            self.stores.statuses.delete_task(name, status.task)
        self.stores.configs.put_task_configs(name, [])

    def _known_or_404(self, name: str) -> dict[str, str]:
        config = self.stores.configs.get_connector_config(name)
        if config is None:
            raise NotFoundError(f"Unknown connector {name}")
        return config

    # -- offsets (KIP-875) -----------------------------------------------------------------
    def connector_offsets(self, name: str) -> ConnectorOffsets:
        return self._offsets.read(name, self._resolved(name, self._config_or_404(name)))

    @_serialised
    def alter_connector_offsets(self, name: str, offsets: ConnectorOffsets) -> Message:
        require_offsets(offsets)
        config = self._config_or_404(name)
        self._require_stopped(name)
        return self._offsets.alter(name, self._resolved(name, config), offsets)

    @_serialised
    def reset_connector_offsets(self, name: str) -> Message:
        config = self._config_or_404(name)
        self._require_stopped(name)
        return self._offsets.reset(name, self._resolved(name, config))

    def _resolved(self, name: str, config: dict[str, str]) -> dict[str, str]:
        """The config with its provider references resolved, in memory only (the offsets
        API builds clients from it and hands it to the connector, as Kafka does)."""
        return self.worker.resolver.resolve(config).values

    def _require_stopped(self, name: str) -> None:
        """Offsets change only while the connector is STOPPED and has no tasks at all."""
        stopped = self.stores.configs.get_target_state(name) is TargetState.STOPPED
        if not stopped or self.stores.configs.get_task_configs(name) or self.worker.task_ids(name):
            raise BadRequestError(not_stopped_message(name))

    # -- restart ---------------------------------------------------------------------------
    @_serialised
    def restart_connector(
        self, name: str, include_tasks: bool, only_failed: bool
    ) -> ConnectorStateInfo | None:
        if not include_tasks and not only_failed:
            config = self._config_or_404(name)
            self.worker.stop_connector(name)
            self._start_connector(name, config, self._target_state(name), keep_tasks=True)
            return None
        stored = self.stores.configs.get_connector_config(name)
        if stored is None:
            raise NotFoundError(f"Unknown connector: {name}")
        current = self.stores.statuses.get_connector(name)
        if current is None:
            raise NotFoundError(f"Status for connector {name} not found")
        tasks = self.stores.statuses.get_tasks(name)
        plan = restart_plan(self._type(stored), current, tasks, include_tasks, only_failed)
        self._execute_plan(name, stored, plan)
        return plan

    def _execute_plan(self, name: str, config: dict[str, str], plan: ConnectorStateInfo) -> None:
        restarting = [t for t in plan.tasks if t.state is State.RESTARTING]
        restart_ids = [t.task for t in restarting]
        for status in restarting:
            self.stores.statuses.put_task(status)
        self.worker.stop_tasks(name, restart_ids)
        target = self._target_state(name)
        task_configs = None
        if plan.connector.state is State.RESTARTING:
            self.stores.statuses.put_connector(plan.connector)
            self.worker.stop_connector(name)
            task_configs = self._start_connector(name, config, target, keep_tasks=True)
        if task_configs is None:
            task_configs = self.stores.configs.get_task_configs(name)
        for task_id in restart_ids:
            if task_id < len(task_configs) and not self.worker.has_task(name, task_id):
                self.worker.start_task(name, task_id, task_configs[task_id], target)

    @_serialised
    def restart_task(self, name: str, task: int) -> None:
        self._config_or_404(name)
        task_configs = self.stores.configs.get_task_configs(name)
        if not 0 <= task < len(task_configs):  # -1 would index the last task
            raise NotFoundError(f"Task {name}-{task} not found")
        target = self._target_state(name)
        self.worker.stop_tasks(name, [task])
        self.worker.start_task(name, task, task_configs[task], target)

    # -- bringing a connector to its target state -----------------------------------------
    def _target_state(self, name: str) -> TargetState:
        return self.stores.configs.get_target_state(name) or TargetState.RUNNING

    def _start_connector(
        self,
        name: str,
        config: dict[str, str],
        target: TargetState,
        restore: bool = False,
        keep_tasks: bool = False,
        answer_errors: bool = False,
    ) -> list[dict[str, str]] | None:
        """Start the connector with its stored config in its stored target state, and its
        tasks if it runs. Returns the task configs it stored, or None if it stored none.

        On restore, or when ``keep_tasks``, tasks run from their stored configs and are only
        regenerated if the connector now produces different ones. A connector that fails to
        start is FAILED with its config kept; with ``answer_errors`` (create and update) the
        request then fails as Kafka's does (500)."""
        self._cancel_reload(name)  # a (re)start resolves anew, and schedules its own
        try:
            self.worker.start_connector(
                name, config, target, self._request_reconfiguration, self._schedule_reload
            )
        except Exception as error:
            log.error("[%s] Failed to start connector: %s", name, error)
            if answer_errors:
                state = "STARTED" if target is TargetState.RUNNING else target.value
                raise ConnectError(
                    f"Failed to transition connector {name} to state {state}"
                ) from error
            return None
        if target is TargetState.STOPPED:
            return None
        if target is TargetState.PAUSED:
            if restore:
                self._start_tasks(name, self.stores.configs.get_task_configs(name), target)
            return None
        return self._update_tasks(name, target, restart_all=not (restore or keep_tasks))

    def _update_tasks(
        self, name: str, target: TargetState, restart_all: bool
    ) -> list[dict[str, str]] | None:
        """Ask the connector for task configs; store them (restarting the tasks) when they
        changed or ``restart_all``, then start the missing tasks. Returns them, or None
        when the connector could not generate them."""
        try:
            new = self.worker.connector_task_configs(name)
        except Exception as error:
            self.worker.fail_connector(name, error)
            return None
        if restart_all or new != self.stores.configs.get_task_configs(name):
            self.worker.stop_tasks(name)
            for status in self.stores.statuses.get_tasks(name):
                if status.task >= len(new):
                    self.stores.statuses.delete_task(name, status.task)
            self.stores.configs.put_task_configs(name, new)
        self._start_tasks(name, new, target)
        return new

    def _start_tasks(
        self, name: str, task_configs: list[dict[str, str]], target: TargetState
    ) -> None:
        for task_id, task_config in enumerate(task_configs):
            if not self.worker.has_task(name, task_id):
                self.worker.start_task(name, task_id, task_config, target)

    def _cancel_reload(self, name: str) -> None:
        timer = self._reloads.pop(name, None)
        if timer is not None:
            timer.cancel()

    def _schedule_reload(self, name: str, ttl_ms: int) -> None:
        """Restart the connector and its tasks when its provider values expire: a restart
        resolves them anew (Kafka's config.action.reload=restart). At most one restart per
        RELOAD_MIN_DELAY_MS, so a provider with a tiny time to live cannot spin the worker."""
        if ttl_ms < 0:
            return  # as Kafka: a negative time to live is ignored
        self._cancel_reload(name)
        ttl_ms = max(ttl_ms, RELOAD_MIN_DELAY_MS)
        timer = threading.Timer(ttl_ms / 1000, self._reload, (name,))
        timer.daemon = True
        timer.name = f"reload-{name}"
        self._reloads[name] = timer
        log.info("[%s] Config provider values expire; restart scheduled in %d ms", name, ttl_ms)
        timer.start()

    def _reload(self, name: str) -> None:
        if self._stopping or self.stores.configs.get_target_state(name) is TargetState.STOPPED:
            return
        try:
            self.restart_connector(name, include_tasks=True, only_failed=False)
        except NotFoundError:
            pass  # deleted meanwhile
        except STOPPING_ERRORS:
            pass  # the worker stops
        except Exception:
            log.exception("[%s] Restart to reload config provider values failed", name)

    def _request_reconfiguration(self, name: str) -> None:
        """Called by a connector from any thread: regenerate its task configs later (not
        once the herder is stopping)."""
        if self._stopping:
            log.info("[%s] Task reconfiguration ignored: the worker is shutting down", name)
            return
        try:
            self._reconfigurer.submit(self._reconfigure_tasks, name)
        except RuntimeError:  # shut down between the check and the submit
            log.info("[%s] Task reconfiguration ignored: the worker is shutting down", name)

    @_serialised
    def _reconfigure_tasks(self, name: str) -> None:
        """A deleted, paused or stopped connector (target not RUNNING) keeps its tasks."""
        target = self.stores.configs.get_target_state(name)
        if target is not TargetState.RUNNING or not self.worker.has_connector(name):
            return
        self._update_tasks(name, target, restart_all=False)


def _normalise(class_name: str) -> str:
    return class_name[: -len("Connector")] if class_name.endswith("Connector") else class_name
