"""The data-plane process: the worker's tasks and Spark's driver, in a process of their own.

A task's driver work (its polls and puts, building records, pickling a batch's chunks,
producing and consuming) is Python that holds the interpreter's lock most of the time under
load. In one process with the REST API, every request waited for that lock again and again:
status p99 went from a few milliseconds idle to a few hundred under load. So the worker
process keeps the control plane (REST API, herder, connectors, the state file) and a child
process, started with the worker, runs the tasks (``LocalTasks``) and owns the SparkSession.
The child runs at ``data.plane.niceness`` (with Spark's JVM and Python workers, which inherit
it), so on busy cores the kernel runs the REST API first too.

The worker plans each task (runtime/task_plan.py) and hands the plan over; the child builds
and runs it. What a task reaches of the control plane crosses back on the same channel
(runtime/channel.py): its status writes and topic uses (notices), its source offsets (calls:
a commit is stored, and answered, by the worker) and its log records (notices, logged by the
worker's own handlers). Every half second the child sends what a connector's status and
/health show of its tasks and of Spark (a ``Snapshot``), so that they never wait for the data
plane; GET /metrics asks the child for its tasks' counters as it is scraped.

If the child dies, its tasks are FAILED with a trace that says so; the next task that
starts (a restart) starts a new child.
"""

from __future__ import annotations

import logging
import os
import pickle
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from connect_lite.api.errors import ConnectError
from connect_lite.pipeline.placement import LastBatch
from connect_lite.runtime.channel import Channel, ChannelClosedError
from connect_lite.runtime.loggers import LoggerLevel
from connect_lite.runtime.logging_context import LogContext, logging_context
from connect_lite.runtime.status import StatusReporter
from connect_lite.runtime.task_host import TaskKey, TaskView
from connect_lite.runtime.task_plan import TaskPlan
from connect_lite.runtime.topic_tracking import TopicTracker
from connect_lite.storage.base import OffsetStore
from connect_lite.storage.states import State, TargetState

log = logging.getLogger(__name__)

CHILD_MODULE = "connect_lite.runtime.data_plane_main"

SNAPSHOT_INTERVAL_S = 0.5
"""How often the child sends its tasks' counters and Spark's state when they changed."""

START_TIMEOUT_S = 120.0
"""The longest a task's start waits for the child (its first start imports Spark's
Python side, and a plugin's import may be slow)."""

EXIT_TIMEOUT_S = 30.0
"""How long closing waits for the child to stop Spark and exit before it is killed."""

LOGGERS_TIMEOUT_S = 5.0
"""How long /admin/loggers waits for the child's loggers (busy, it answers late)."""

VIEWS_TIMEOUT_S = 5.0
"""How long GET /metrics waits for the child's counters before it shows the last ones sent."""

VIEWS_FRESH_S = 0.1
"""Views read from the child this recently serve again (one scrape reads them twice)."""

TRANSITION_TIMEOUT_S = 60.0
"""How long a pause or resume waits for the child to pass it to its tasks."""


@dataclass(frozen=True)
class DataPlaneSettings:
    """What the child needs before anything else: sent first, before its channel starts."""

    spark_conf: dict[str, str]
    shutdown_timeout_ms: int
    niceness: int = 0
    log_levels: dict[str, int] = field(default_factory=dict)
    """The worker's logger levels (its root logger as ``""``): the child's are the same."""
    sys_path: tuple[str, ...] = ()


@dataclass(frozen=True)
class EngineState:
    """Spark in the data-plane process, as the worker's health and start-up line show it."""

    unavailable: str | None = None
    start_error: str | None = None
    started_in: float | None = None

    @property
    def failure(self) -> str | None:
        return self.unavailable or self.start_error


@dataclass(frozen=True)
class Snapshot:
    """The child's tasks (counters, plugins, last batches) and Spark's state, at once."""

    views: tuple[TaskView, ...] = ()
    engine: EngineState = EngineState()


def logger_levels() -> dict[str, int]:
    """This process's explicit logger levels, the root's as ``""``."""
    levels = {"": logging.getLogger().level}
    for name, logger in list(logging.Logger.manager.loggerDict.items()):
        if isinstance(logger, logging.Logger) and logger.level != logging.NOTSET:
            levels[name] = logger.level
    return levels


def replay(record: Mapping[str, Any]) -> None:
    """Log a record the child sent through this process's handlers, as if logged here
    (``Logger.handle``: the child already applied the level)."""
    fields = dict(record)
    context = fields.pop("context", None)
    made = logging.makeLogRecord(fields)
    if context is not None:
        made.connector_context = LogContext(*context)
    logging.getLogger(made.name).handle(made)


class DataPlaneProcess:
    """The worker's side of the data-plane process: a TaskHost whose tasks run there.

    ``start_process`` starts the child (Spark starts there at once); ``attach`` gives it the
    status reporter, offset store and topic tracker its tasks report to (they exist only
    once the worker knows its id). Not thread-safe, as any TaskHost: the herder serialises
    the calls."""

    def __init__(self, settings: DataPlaneSettings, python: str = sys.executable) -> None:
        self.settings = settings
        self._python = python
        self._status: StatusReporter | None = None
        self._offsets: OffsetStore | None = None
        self._topics: TopicTracker | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._channel: Channel | None = None
        self._keys: set[TaskKey] = set()
        self._snapshot = Snapshot()
        self._gone: str | None = None
        """Why the last child is gone, while no new one runs (None: one runs, or none yet)."""
        self._closing = False
        self._lock = threading.Lock()
        self._views_read_at = 0.0

    # -- the child process -----------------------------------------------------------------
    def attach(self, status: StatusReporter, offsets: OffsetStore, topics: TopicTracker) -> None:
        self._status, self._offsets, self._topics = status, offsets, topics

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    def start_process(self) -> None:
        """Start the child and hand it its settings; returns without waiting for it."""
        ours, theirs = socket.socketpair()
        try:
            with Connection(os.dup(ours.fileno())) as first:
                first.send_bytes(pickle.dumps(self.settings, protocol=pickle.HIGHEST_PROTOCOL))
            self._proc = subprocess.Popen(
                [self._python, "-m", CHILD_MODULE, str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                env=_child_env(),
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        channel = Channel(
            ours,
            {
                "status": self._on_status,
                "topics": self._on_topics,
                "offsets.get": self._on_offsets_get,
                "offsets.put_many": self._on_offsets_put,
                "log": replay,
                "snapshot": self._on_snapshot,
            },
            name="data-plane",
            on_closed=self._on_closed,
        )
        with self._lock:
            self._channel = channel
            self._gone = None
            self._snapshot = Snapshot()
        channel.start()
        log.info(
            "Data-plane process started (pid %d, niceness %d)",
            self._proc.pid,
            self.settings.niceness,
        )

    def _live_channel(self) -> Channel:
        """The channel of a running child; a new child if the last one died."""
        channel = self._channel
        if channel is None or channel.closed:
            if self._closing:
                raise ChannelClosedError("The worker is stopping: its data plane is closed")
            log.info("Starting a new data-plane process (%s)", self._gone or "none was running")
            self.start_process()
            channel = self._channel
            assert channel is not None
        return channel

    def close(self) -> None:
        """Stop the child: its tasks should be stopped already; it stops Spark and exits,
        or is killed after EXIT_TIMEOUT_S."""
        self._closing = True
        channel, proc = self._channel, self._proc
        if channel is not None and not channel.closed:
            try:
                channel.call("shutdown", timeout=EXIT_TIMEOUT_S)
            except ConnectError as error:
                log.warning("The data-plane process did not stop cleanly: %s", error)
        if proc is not None:
            try:
                proc.wait(EXIT_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                log.warning("The data-plane process did not exit; killing it")
                proc.kill()
                proc.wait()
        if channel is not None:
            channel.close()

    def _on_closed(self) -> None:
        """The child is gone: if it was not asked to stop, its tasks failed with it."""
        proc = self._proc
        code = None
        if proc is not None:
            try:
                code = proc.wait(5)
            except subprocess.TimeoutExpired:
                code = None
        if self._closing:
            return
        reason = f"The data-plane process exited unexpectedly (exit code {code})"
        with self._lock:
            self._gone = reason
            self._snapshot = Snapshot()
            keys = sorted(self._keys)
        log.error("%s; its tasks failed with it. Restarting a task starts a new one.", reason)
        status = self._status
        for connector, task in keys:
            if status is not None:
                trace = f"{reason}: the task stopped with it. Restart it to run it again."
                status.task(connector, task, State.FAILED, trace)

    # -- TaskHost --------------------------------------------------------------------------
    def start(self, plan: TaskPlan) -> bool:
        try:
            held = bool(self._live_channel().call("start", plan, timeout=START_TIMEOUT_S))
        except ChannelClosedError as error:
            self._failed_to_start(plan, error)
            return False
        except ConnectError as error:  # no answer in time: it may still start, so it is
            self._keys.add(plan.key)  # held, and a stop or restart reaches it
            self._failed_to_start(plan, error)
            return True
        if held:
            self._keys.add(plan.key)
        return held

    def _failed_to_start(self, plan: TaskPlan, error: BaseException) -> None:
        with logging_context(*plan.key):
            log.error("Failed to start task: %s", error)
        if self._status is not None:
            self._status.task(*plan.key, State.FAILED, f"{type(error).__name__}: {error}")

    def transition(self, connector: str, target: TargetState) -> None:
        if any(c == connector for c, _ in self._keys):
            self._call_if_running("transition", connector, target, timeout=TRANSITION_TIMEOUT_S)

    def stop(self, keys: Sequence[TaskKey]) -> None:
        keys = [k for k in keys if k in self._keys]
        if not keys:
            return
        timeout = self.settings.shutdown_timeout_ms / 1000 + EXIT_TIMEOUT_S
        try:
            self._call_if_running("stop", keys, timeout=timeout)
        finally:
            self._keys.difference_update(keys)
            with self._lock:  # gone from the views at once, not at the next snapshot
                views = tuple(v for v in self._snapshot.views if (v.connector, v.task) not in keys)
                self._snapshot = Snapshot(views, self._snapshot.engine)

    def _call_if_running(self, method: str, *args: Any, timeout: float) -> Any:
        """A call to the child; nothing if it is gone (its tasks are gone with it), or if it
        did not answer in time (logged)."""
        channel = self._channel
        if channel is None or channel.closed:
            return None
        try:
            return channel.call(method, *args, timeout=timeout)
        except ChannelClosedError:
            return None
        except ConnectError as error:
            log.error("The data-plane process did not answer %s: %s", method, error)
            return None

    def held(self) -> list[TaskKey]:
        return sorted(self._keys)

    def last_batches(self, connector: str) -> dict[int, LastBatch]:
        return {
            v.task: v.last_batch
            for v in self._snapshot.views
            if v.connector == connector and v.last_batch is not None
        }

    def views(self) -> list[TaskView]:
        """Read from the child now (GET /metrics counts what happened until the scrape); the
        last ones it sent if it does not answer in time."""
        now = time.monotonic()
        if now - self._views_read_at > VIEWS_FRESH_S:
            fresh = self._call_if_running("views", timeout=VIEWS_TIMEOUT_S)
            if fresh is not None:
                with self._lock:
                    self._snapshot = Snapshot(tuple(fresh), self._snapshot.engine)
                self._views_read_at = time.monotonic()
        return [v for v in self._snapshot.views if (v.connector, v.task) in self._keys]

    def engine_failure(self) -> str | None:
        return self._gone or self._snapshot.engine.failure

    @property
    def engine(self) -> EngineState:
        return self._snapshot.engine

    # -- the child's loggers (for /admin/loggers) ------------------------------------------
    def loggers_all(self) -> dict[str, LoggerLevel]:
        result = self._call_if_running("loggers.all", timeout=LOGGERS_TIMEOUT_S)
        return dict(result or {})

    def loggers_set(self, namespace: str, level: str) -> list[str]:
        result = self._call_if_running("loggers.set", namespace, level, timeout=LOGGERS_TIMEOUT_S)
        return list(result or [])

    # -- what the child's tasks send -------------------------------------------------------
    def _on_status(
        self, connector: str, task: int, state: State, trace: str | None, version: str | None
    ) -> None:
        if self._status is not None:
            self._status.task(connector, task, state, trace, version)

    def _on_topics(self, connector: str, topics: set[str], task: int) -> None:
        if self._topics is not None:
            with logging_context(connector, task):
                self._topics.record(connector, topics, task)

    def _on_offsets_get(self, connector: str, partition: dict[str, Any]) -> dict[str, Any] | None:
        return self._require_offsets().get(connector, partition)

    def _on_offsets_put(self, connector: str, offsets: dict[str, Any]) -> None:
        self._require_offsets().put_many(connector, offsets)

    def _require_offsets(self) -> OffsetStore:
        if self._offsets is None:
            raise ConnectError("The worker's offset store is not open yet")
        return self._offsets

    def _on_snapshot(self, snapshot: Snapshot) -> None:
        with self._lock:
            self._snapshot = snapshot


def _child_env() -> dict[str, str]:
    """This process's environment, with connect_lite importable first."""
    import connect_lite

    home = os.path.dirname(os.path.dirname(os.path.abspath(connect_lite.__file__)))
    env = dict(os.environ)
    parts = [home, *env.get("PYTHONPATH", "").split(os.pathsep)]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(p for p in parts if p))
    return env


__all__ = [
    "DataPlaneProcess",
    "DataPlaneSettings",
    "EngineState",
    "Snapshot",
    "logger_levels",
    "replay",
]
