"""The data-plane process: the worker's tasks and Spark's driver, in a process of their own.

A task's driver work (its polls and puts, building records, pickling a batch's chunks,
producing and consuming) is Python that holds the interpreter's lock most of the time under
load. In one process with the REST API, every request waited for that lock again and again:
status p99 went from a few milliseconds idle to a few hundred under load. So the worker
process keeps the control plane (REST API, herder, connectors, the state file) and a child
process, started with the worker, runs the tasks (``LocalTasks``) and owns the SparkSession.
The child runs at ``data.plane.niceness`` (with Spark's JVM and Python workers, which inherit
it), so on busy cores the kernel runs the REST API first too.

The worker plans each task (protocol/plan.py) and hands the plan over; the child builds
and runs it. What a task reaches of the control plane crosses back on the same channel
(protocol/channel.py): its status writes and topic uses (notices), its source offsets (calls:
a commit is stored, and answered, by the worker) and its log records (notices, logged by the
worker's own handlers). Every half second the child sends what a connector's status and
/health show of its tasks and of Spark (a ``Snapshot``), so that they never wait for the data
plane; GET /metrics asks the child for its tasks' counters as it is scraped.

If the child dies, its tasks are FAILED with a trace that says so; the next task that
starts (a restart) starts a new child.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import os
import pickle
import socket
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, Protocol

from connect_lite.api.errors import ConnectError
from connect_lite.control.status import StatusReporter
from connect_lite.control.topic_tracking import TopicTracker
from connect_lite.logs.context import LogContext, logging_context
from connect_lite.logs.loggers import LoggerLevel
from connect_lite.protocol.channel import CallTimeoutError, Channel, ChannelClosedError
from connect_lite.protocol.environment import package_home, python_path
from connect_lite.protocol.host import LastBatch, TaskKey, TaskView
from connect_lite.protocol.messages import (
    CommitOffsets,
    DataPlaneSettings,
    EngineState,
    LogLine,
    ReadLoggers,
    ReadOffset,
    ReadViews,
    SetLoggers,
    Shutdown,
    Snapshot,
    StartTask,
    StopTasks,
    TaskStatusReport,
    TopicsUsed,
    Transition,
)
from connect_lite.protocol.plan import TaskPlan
from connect_lite.protocol.states import State, TargetState
from connect_lite.storage.base import OffsetStore

log = logging.getLogger(__name__)

CHILD_MODULE = "connect_lite.dataplane.main"

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


def logger_levels() -> dict[str, int]:
    """This process's explicit logger levels, the root's as ``""``."""
    levels = {"": logging.getLogger().level}
    for name, logger in list(logging.Logger.manager.loggerDict.items()):
        if isinstance(logger, logging.Logger) and logger.level != logging.NOTSET:
            levels[name] = logger.level
    return levels


def replay(line: LogLine) -> None:
    """Log a record the child sent through this process's handlers, as if logged here
    (``Logger.handle``: the child already applied the level)."""
    fields = dict(line.record)
    context = fields.pop("context", None)
    made = logging.makeLogRecord(fields)
    if context is not None:
        made.connector_context = LogContext(*context)
    logging.getLogger(made.name).handle(made)


class ChildProcess(Protocol):
    """What the worker needs of the data-plane process (a subprocess.Popen)."""

    pid: int

    def wait(self, timeout: float | None = None) -> int: ...

    def kill(self) -> None: ...


Spawn = Callable[[DataPlaneSettings], tuple[ChildProcess, socket.socket]]
"""Starts a data-plane process with its settings; returns it and the worker's end of its
channel (tests start a stand-in)."""


@dataclass
class _Child:
    """One data-plane process and its channel; ``gone`` says why it ended, once it has."""

    proc: ChildProcess
    channel: Channel
    gone: str | None = None


class DataPlaneProcess:
    """The worker's side of the data-plane process: a TaskHost whose tasks run there.

    ``start_process`` starts the child (Spark starts there at once); ``attach`` gives it the
    status reporter, offset store and topic tracker its tasks report to (they exist only
    once the worker knows its id). Each start of a task has a generation: what a task sends
    is taken only while the worker holds that task at that generation, so a task that was
    stopped (or given up on, when its stop timed out) writes nothing more, as an abandoned
    task in Kafka. The herder serialises the TaskHost calls; the channel's threads read what
    they share with them under a lock."""

    def __init__(self, settings: DataPlaneSettings, spawn: Spawn | None = None) -> None:
        self.settings = settings
        self._spawn = spawn or spawn_child
        self._status: StatusReporter | None = None
        self._offsets: OffsetStore | None = None
        self._topics: TopicTracker | None = None
        self._child: _Child | None = None
        self._held: dict[TaskKey, tuple[int, _Child]] = {}
        """Each task held, with the generation it was started at and the child it runs in."""
        self._generations = itertools.count(1)
        self._snapshot = Snapshot()
        self._views_read_at = 0.0
        self._closing = False
        self._lock = threading.Lock()
        """Guards _held, the snapshot and the views, for reads that must never wait long."""
        self._fence = threading.RLock()
        """Held across a check that a task is current and the write it allows, and while keys
        are dropped: a stop that returned has no write of a dropped task still under way."""
        self._views: tuple[TaskView, ...] | None = None

    # -- the child process -----------------------------------------------------------------
    def attach(self, status: StatusReporter, offsets: OffsetStore, topics: TopicTracker) -> None:
        self._status, self._offsets, self._topics = status, offsets, topics

    def start_process(self) -> None:
        """Start a child with the settings and the worker's log levels of now; returns
        without waiting for it."""
        settings = dataclasses.replace(self.settings, log_levels=logger_levels())
        proc, sock = self._spawn(settings)
        child: _Child | None = None

        def closed() -> None:
            assert child is not None
            self._on_closed(child)

        channel = Channel(
            sock,
            {
                TaskStatusReport: self._on_status,
                TopicsUsed: self._on_topics,
                ReadOffset: self._on_offsets_get,
                CommitOffsets: self._on_offsets_put,
                LogLine: replay,
                Snapshot: self._on_snapshot,
            },
            name="data-plane",
            on_closed=closed,
        )
        child = _Child(proc, channel)
        with self._lock:
            self._child = child
            self._snapshot = Snapshot()
            self._views = None
        channel.start()
        log.info("Data-plane process started (pid %d, niceness %d)", proc.pid, settings.niceness)

    def _live_child(self) -> _Child:
        """The running child; a new one if the last one died."""
        child = self._child
        if child is None or child.channel.closed:
            if self._closing:
                raise ChannelClosedError("The worker is stopping: its data plane is closed")
            log.info(
                "Starting a new data-plane process (%s)",
                (child.gone or "the last one ended") if child else "none was running",
            )
            self.start_process()
            child = self._child
            assert child is not None
        return child

    def close(self) -> None:
        """Stop the child: its tasks should be stopped already; it stops Spark and exits,
        or is killed after EXIT_TIMEOUT_S."""
        self._closing = True
        child = self._child
        if child is None:
            return
        if not child.channel.closed:
            try:
                child.channel.call(Shutdown(), timeout=EXIT_TIMEOUT_S)
            except ChannelClosedError:
                pass  # it exited as it answered
            except ConnectError as error:
                log.warning("The data-plane process did not stop cleanly: %s", error)
        _reap(child.proc, EXIT_TIMEOUT_S)
        child.channel.close()

    def _on_closed(self, child: _Child) -> None:
        """A child is gone (on its channel's reader): if it was not asked to stop, the tasks
        held in it failed with it."""
        child.channel.close()  # nothing more is read from it; the reader is this thread
        code = _reap(child.proc, 5.0)
        if self._closing:
            return
        reason = f"The data-plane process exited unexpectedly (exit code {code})"
        with self._lock:
            child.gone = reason
            if self._child is child:
                self._snapshot = Snapshot()
                self._views = None
            orphans = sorted(k for k, (_, c) in self._held.items() if c is child)
        log.error("%s; its tasks failed with it. Restarting a task starts a new one.", reason)
        trace = f"{reason}: the task stopped with it. Restart it to run it again."
        for key in orphans:
            with self._fence:
                with self._lock:
                    still = self._held.get(key, (None, None))[1] is child
                if still and self._status is not None:
                    self._status.task(*key, State.FAILED, trace)

    # -- TaskHost --------------------------------------------------------------------------
    def start(self, plan: TaskPlan) -> bool:
        """Held from before the call: the task's first status may come before the answer.
        A child that the call finds gone (it died before this side's reader saw it, or while
        the task started) is replaced once, and the task starts in the new one."""
        plan = dataclasses.replace(plan, generation=next(self._generations))
        try:
            return self._start_in_child(plan)
        except ChannelClosedError as error:
            if self._closing:
                self._failed_to_start(plan, error)
                return False
            log.warning("The data-plane process ended as a task started: starting a new one")
        try:
            return self._start_in_child(plan)
        except ChannelClosedError as error:
            self._failed_to_start(plan, error)
            return False

    def _start_in_child(self, plan: TaskPlan) -> bool:
        """Start the task in the live child (a new one if the last one died); raises
        ChannelClosedError, the task released, if that child is gone."""
        try:
            child = self._live_child()
            self._hold(plan, child)
            held = bool(child.channel.call(StartTask(plan), timeout=START_TIMEOUT_S))
        except CallTimeoutError as error:  # it may still start: held, so a stop reaches it
            self._failed_to_start(plan, error)
            return True
        except ChannelClosedError:
            self._release(plan)
            raise
        except Exception as error:  # no child could be started, or it refused the plan
            self._release(plan)
            self._failed_to_start(plan, error)
            return False
        if not held:  # it could not be built (and said so in its status)
            self._release(plan)
        return held

    def _hold(self, plan: TaskPlan, child: _Child) -> None:
        with self._fence, self._lock:
            self._held[plan.key] = (plan.generation, child)

    def _release(self, plan: TaskPlan) -> None:
        with self._fence, self._lock:
            if self._held.get(plan.key, (None,))[0] == plan.generation:
                del self._held[plan.key]

    def _failed_to_start(self, plan: TaskPlan, error: BaseException) -> None:
        with logging_context(*plan.key):
            log.error("Failed to start task: %s", error)
        if self._status is not None:
            self._status.task(*plan.key, State.FAILED, f"{type(error).__name__}: {error}")

    def transition(self, connector: str, target: TargetState) -> None:
        for child in self._children_of([k for k in self.held() if k[0] == connector]):
            self._call(child, Transition(connector, target), timeout=TRANSITION_TIMEOUT_S)

    def stop(self, keys: Sequence[TaskKey]) -> None:
        """Stop the tasks; whether they stopped in time or not, the worker holds them no
        more, so nothing they send later is taken (their replacements have new
        generations)."""
        with self._lock:
            held = {k: self._held[k][1] for k in keys if k in self._held}
        if not held:
            return
        timeout = self.settings.shutdown_timeout_ms / 1000 + EXIT_TIMEOUT_S
        try:
            for child in self._children_of(list(held)):
                stopping = [k for k, c in held.items() if c is child]
                self._call(child, StopTasks(tuple(stopping)), timeout=timeout)
        finally:
            with self._fence, self._lock:
                for key in held:
                    self._held.pop(key, None)

    def _children_of(self, keys: Sequence[TaskKey]) -> list[_Child]:
        with self._lock:
            found = [self._held[k][1] for k in keys if k in self._held]
        return list({id(c): c for c in found}.values())

    def _call(self, child: _Child, message: object, timeout: float) -> Any:
        """A call to a child; nothing if it is gone (its tasks are gone with it), or if it
        did not answer in time (logged)."""
        if child.channel.closed:
            return None
        try:
            return child.channel.call(message, timeout=timeout)
        except ChannelClosedError:
            return None
        except CallTimeoutError as error:
            log.error("The data-plane process did not answer: %s", error)
            return None

    def held(self) -> list[TaskKey]:
        with self._lock:
            return sorted(self._held)

    def last_batches(self, connector: str) -> dict[int, LastBatch]:
        held = set(self.held())
        return {
            v.task: v.last_batch
            for v in self._snapshot.views
            if v.connector == connector and v.last_batch is not None and v.key in held
        }

    def views(self) -> list[TaskView]:
        """Read from the child now (GET /metrics counts what happened until the scrape); the
        last ones read, or sent, if it does not answer in time."""
        child = self._child
        now = time.monotonic()
        if child is not None and now - self._views_read_at > VIEWS_FRESH_S:
            fresh = self._call(child, ReadViews(), timeout=VIEWS_TIMEOUT_S)
            if fresh is not None:
                with self._lock:
                    self._views = tuple(fresh)
                self._views_read_at = time.monotonic()
        held = set(self.held())
        with self._lock:
            views = self._views if self._views is not None else self._snapshot.views
        return [v for v in views if v.key in held]

    def engine_failure(self) -> str | None:
        """Why tasks cannot run now: the child died under tasks still held and none runs
        since (a restart of one starts a new child; tasks that died with the old one stay
        FAILED until restarted, as any failed task), or Spark's state in the child."""
        live = self._child is not None and not self._child.channel.closed
        if not live:
            with self._lock:
                for _, child in self._held.values():
                    if child.gone is not None:
                        return child.gone
        return self._snapshot.engine.failure

    @property
    def engine(self) -> EngineState:
        return self._snapshot.engine

    # -- the child's loggers (for /admin/loggers) ------------------------------------------
    def loggers_all(self) -> dict[str, LoggerLevel]:
        return dict(self._loggers_call(ReadLoggers()) or {})

    def loggers_set(self, namespace: str, level: str) -> list[str]:
        return list(self._loggers_call(SetLoggers(namespace, level)) or [])

    def _loggers_call(self, message: object) -> Any:
        child = self._child
        if child is None or child.channel.closed:
            return None
        try:
            return child.channel.call(message, timeout=LOGGERS_TIMEOUT_S)
        except ConnectError as error:
            log.warning("The data-plane process's loggers are left out: %s", error)
            return None

    # -- what the child's tasks send -------------------------------------------------------
    def _current(self, connector: str, task: int, generation: int) -> bool:
        """Whether the worker holds this task at this generation (else it is fenced off);
        call it holding _fence, and write what it allows before letting go."""
        with self._lock:
            held = self._held.get((connector, task))
        return held is not None and held[0] == generation

    def _on_status(self, m: TaskStatusReport) -> None:
        with self._fence:
            if self._status is not None and self._current(m.connector, m.task, m.generation):
                self._status.task(m.connector, m.task, m.state, m.trace, m.version)

    def _on_topics(self, m: TopicsUsed) -> None:
        with self._fence:
            if self._topics is not None and self._current(m.connector, m.task, m.generation):
                with logging_context(m.connector, m.task):
                    self._topics.record(m.connector, m.topics, m.task)

    def _on_offsets_get(self, m: ReadOffset) -> dict[str, Any] | None:
        return self._require_offsets().get(m.connector, m.partition)

    def _on_offsets_put(self, m: CommitOffsets) -> None:
        with self._fence:
            if not self._current(m.connector, m.task, m.generation):
                raise ConnectError(
                    f"Task {m.connector}-{m.task} was stopped: its offsets are not committed "
                    "(what it did not commit is read again by the task that replaces it)"
                )
            self._require_offsets().put_many(m.connector, m.offsets)

    def _require_offsets(self) -> OffsetStore:
        if self._offsets is None:
            raise ConnectError("The worker's offset store is not open yet")
        return self._offsets

    def _on_snapshot(self, snapshot: Snapshot) -> None:
        with self._lock:
            self._snapshot = snapshot
            self._views = None  # newer than the views read before it


def _reap(proc: ChildProcess, timeout: float) -> int | None:
    """The child's exit code, once it exited; killed after ``timeout``."""
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        log.warning("The data-plane process (pid %d) did not exit; killing it", proc.pid)
        proc.kill()
        return proc.wait()


def spawn_child(settings: DataPlaneSettings) -> tuple[ChildProcess, socket.socket]:
    """``python -m connect_lite.dataplane.main FD``, with its settings sent first."""
    ours, theirs = socket.socketpair()
    try:
        with Connection(os.dup(ours.fileno())) as first:
            first.send_bytes(pickle.dumps(settings, protocol=pickle.HIGHEST_PROTOCOL))
        proc = subprocess.Popen(
            [sys.executable, "-m", CHILD_MODULE, str(theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            env=_child_env(),
        )
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()
    return proc, ours


def _child_env() -> dict[str, str]:
    """This process's environment; where connect_lite is not installed (a checkout run as
    ``python app.py``), its directory joins PYTHONPATH so that the child imports it too."""
    home = package_home()
    env = dict(os.environ)
    installed = {
        os.path.abspath(p) for p in (sysconfig.get_path("purelib"), sysconfig.get_path("platlib"))
    }
    if home not in installed:
        env["PYTHONPATH"] = python_path(env.get("PYTHONPATH"), home)
    return env


__all__ = [
    "DataPlaneProcess",
    "DataPlaneSettings",
    "EngineState",
    "Snapshot",
    "logger_levels",
    "replay",
]
