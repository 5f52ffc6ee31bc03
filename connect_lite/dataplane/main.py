"""The data-plane process: runs the worker's tasks and Spark (see control/dataplane_process.py).

    python -m connect_lite.dataplane.main FD

FD is this end of the channel to the worker process, which sends DataPlaneSettings first.
The process lowers its priority before it starts any thread (threads, Spark's JVM and its
Python workers inherit it), sends its log records to the worker, and exits when the worker
asks it to, or as soon as the worker is gone (its tasks cannot commit anything then).
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import signal
import socket
import sys
import threading
from collections.abc import Iterable, Mapping
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from connect_lite.dataplane.batch_pipeline import tune_garbage_collector
from connect_lite.dataplane.idle_memory import IdleTrim
from connect_lite.logs.context import LogContext, current, escape_record_args
from connect_lite.logs.loggers import LoggerLevel, Loggers
from connect_lite.protocol.channel import Channel
from connect_lite.protocol.host import TaskView
from connect_lite.protocol.messages import (
    ORDERED,
    SNAPSHOT_INTERVAL_S,
    THREADED,
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
from connect_lite.protocol.states import State

log = logging.getLogger(__name__)

_RECORD_FIELDS = (
    "name",
    "levelno",
    "levelname",
    "pathname",
    "filename",
    "module",
    "lineno",
    "funcName",
    "created",
    "msecs",
    "relativeCreated",
    "thread",
    "threadName",
    "process",
    "processName",
    "stack_info",
)


def portable_record(record: logging.LogRecord) -> dict[str, Any]:
    """A log record as plain values: its message formatted, its traceback as text, and the
    connector context it was logged in."""
    fields = {name: getattr(record, name, None) for name in _RECORD_FIELDS}
    escape_record_args(record)
    fields["msg"] = record.getMessage()
    fields["args"] = None
    exc_text = record.exc_text
    if record.exc_info and not exc_text:
        exc_text = logging.Formatter().formatException(record.exc_info)
    fields["exc_text"] = exc_text
    context = getattr(record, "connector_context", None)
    if not isinstance(context, LogContext):
        context = current()
    fields["context"] = (context.connector, context.task) if context else None
    return fields


class ForwardingHandler(logging.Handler):
    """Sends every record to the worker, which logs it with its own handlers (one format,
    one redaction, one destination); ``fallback`` logs it here once the worker is gone."""

    def __init__(self, channel: Channel, fallback: logging.Handler) -> None:
        super().__init__()
        self._channel = channel
        self._fallback = fallback

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if not self._channel.notify(LogLine(portable_record(record))):
                self._fallback.handle(record)
        except Exception:
            self.handleError(record)


class _Identity:
    """One start of one task, as the worker knows it: what it sends carries this."""

    def __init__(self, channel: Channel, plan: TaskPlan) -> None:
        self._channel = channel
        self._who = (plan.connector, plan.task, plan.generation)


class _Status(_Identity):
    """The task's statuses go to the worker's StatusReporter (it retries failed writes)."""

    def task(
        self,
        connector: str,
        task: int,
        state: State,
        trace: str | None = None,
        version: str | None = None,
    ) -> None:
        self._channel.notify(TaskStatusReport(*self._who, state, trace, version))


class _Topics(_Identity):
    """The task's topics go to the worker's TopicTracker (KIP-558)."""

    def record(self, connector: str, topics: Iterable[str], task: int) -> None:
        self._channel.notify(TopicsUsed(*self._who, frozenset(topics)))


class _Offsets(_Identity):
    """Source offsets are read and committed by the worker, the state file's one owner: a
    commit returns once it is stored, and raises what the store raised (RetriableError when
    it is busy; a ConnectError once the worker no longer holds this start of the task)."""

    def get(self, connector: str, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        found = self._channel.call(ReadOffset(connector, dict(partition)))
        return None if found is None else dict(found)

    def put_many(self, connector: str, offsets: Mapping[str, Any]) -> None:
        self._channel.call(CommitOffsets(*self._who, dict(offsets)))


class DataPlane:
    """This process: the tasks, Spark, and the channel to the worker."""

    def __init__(self, sock: socket.socket, settings: DataPlaneSettings) -> None:
        # Imported here, once the process runs at its niceness: they start native threads.
        from connect_lite.dataplane.local_tasks import LocalTasks, TaskServices
        from connect_lite.pipeline.session import SparkEngine

        self.settings = settings
        self._done = threading.Event()
        self._parent_gone = False
        self.channel = Channel(
            sock,
            {
                StartTask: self._start,
                Transition: self._transition,
                StopTasks: self._stop,
                Shutdown: self._shutdown,
                ReadViews: self.tasks_views,
                ReadLoggers: self._loggers_all,
                SetLoggers: self._loggers_set,
            },
            name="worker",
            ordered=ORDERED,
            threaded=THREADED,
            on_closed=self._on_closed,
        )
        self.loggers = Loggers()
        self.spark = SparkEngine(settings.spark_conf)
        channel = self.channel

        def services_for(plan: TaskPlan) -> TaskServices:
            return TaskServices(
                self.spark, _Status(channel, plan), _Offsets(channel, plan), _Topics(channel, plan)
            )

        self.tasks = LocalTasks(self.spark, services_for, settings.shutdown_timeout_ms)
        self._changed = threading.Event()
        """Set when tasks started or stopped: the main loop sends a snapshot at once."""
        self._sent: Snapshot | None = None
        self._idle = IdleTrim()

    def run(self) -> int:
        """Serve the worker until it asks this process to stop (0), or until it is gone (1):
        then the process exits at once, its tasks with it (they could commit nothing), and
        Spark's JVM ends as its input closes."""
        from connect_lite.pipeline.transfer import warm_up

        self.channel.start()
        self.spark.start_in_background(then=warm_up)  # its Python workers before a batch
        tune_garbage_collector()
        while not self._done.is_set():
            self._changed.wait(SNAPSHOT_INTERVAL_S)
            self._changed.clear()
            if self._done.is_set():
                break
            snapshot = self._send_snapshot()  # only from this thread: in order
            if snapshot is not None:
                self._idle.observe(activity_of(snapshot))
        return 1 if self._parent_gone else 0

    # -- the worker's calls ----------------------------------------------------------------
    def _start(self, m: StartTask) -> bool:
        held = self.tasks.start(m.plan)
        self._changed.set()
        return held

    def _transition(self, m: Transition) -> None:
        self.tasks.transition(m.connector, m.target)

    def _stop(self, m: StopTasks) -> None:
        self.tasks.stop(m.keys)
        self._changed.set()

    def _shutdown(self, _: Shutdown | None = None) -> None:
        """Stop what still runs, then Spark; the process exits once this is answered."""
        self.tasks.stop(self.tasks.held())
        self.spark.stop()
        self._done.set()
        self._changed.set()

    def tasks_views(self, _: ReadViews | None = None) -> tuple[TaskView, ...]:
        return tuple(self.tasks.views())

    def _loggers_all(self, _: ReadLoggers) -> dict[str, LoggerLevel]:
        return self.loggers.all()

    def _loggers_set(self, m: SetLoggers) -> list[str]:
        return self.loggers.set_level(m.namespace, m.level)

    def _on_closed(self) -> None:
        if not self._done.is_set():
            self._parent_gone = True
            self._done.set()
            self._changed.set()

    # -- what the worker shows of this process ---------------------------------------------
    def snapshot(self) -> Snapshot:
        spark = self.spark
        engine = EngineState(spark.unavailable, spark.start_error, spark.started_in)
        return Snapshot(tuple(self.tasks.views()), engine)

    def _send_snapshot(self) -> Snapshot | None:
        try:
            snapshot = self.snapshot()
        except Exception:
            log.exception("Could not read the tasks' counters")
            return None
        try:
            if snapshot != self._sent and self.channel.notify(snapshot):
                self._sent = snapshot
        except Exception:  # e.g. a value that cannot be pickled: the next one may go
            log.exception("Could not send the tasks' snapshot to the worker")
        return snapshot


def activity_of(snapshot: Snapshot) -> tuple[tuple[str, int, int, int], ...]:
    """What moves while records flow: each task's records in and out."""
    return tuple(
        (v.connector, v.task, v.counters.records_in, v.counters.records_out) for v in snapshot.views
    )


QUIET_LOGGERS = {"py4j": logging.WARNING}
"""Loggers of the data plane's libraries whose INFO lines tell a user nothing (py4j logs each
connection to Spark's JVM it closes, a few every time a task stops), quieted as Kafka's
connect-log4j.properties quiets org.reflections. A level the worker set for one wins, and
/admin/loggers lists and changes them."""


def _configure_logging(channel: Channel, levels: Mapping[str, int]) -> None:
    from connect_lite.logs.setup import KafkaFormatter

    fallback = logging.StreamHandler(sys.stderr)
    fallback.setFormatter(KafkaFormatter())
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.addHandler(ForwardingHandler(channel, fallback))
    for name, level in {**QUIET_LOGGERS, **levels}.items():
        logging.getLogger(name or None).setLevel(level)


def lower_priority(niceness: int) -> None:
    """This process, and every thread it has, at ``niceness`` more (threads started later
    inherit it from the thread that starts them)."""
    os.nice(niceness)
    for task in Path("/proc/self/task").iterdir() if Path("/proc/self/task").is_dir() else []:
        with contextlib.suppress(OSError, ValueError):
            tid = int(task.name)
            os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, 0))


def main(argv: list[str]) -> int:
    fd = int(argv[1])
    os.set_inheritable(fd, False)  # a plugin's subprocess must not keep the channel open
    # The worker stops this process (Ctrl-C and a SIGTERM to the process group reach it).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with Connection(os.dup(fd)) as first:
        settings: DataPlaneSettings = pickle.loads(first.recv_bytes())
    if settings.niceness:
        lower_priority(settings.niceness)  # before Spark, Arrow and the tasks start threads
    sys.path.extend(p for p in settings.sys_path if p and p not in sys.path)
    plane = DataPlane(socket.socket(fileno=fd), settings)
    _configure_logging(plane.channel, settings.log_levels)
    code = plane.run()
    if code == 0:  # the worker waits for the answer to its shutdown
        plane.channel.close(drain=True)
    return code


if __name__ == "__main__":
    exit_code = 2
    try:
        exit_code = main(sys.argv)
    except BaseException:
        logging.getLogger(__name__).exception("The data-plane process failed")
    finally:
        os._exit(exit_code)  # no wait for threads: the worker counts on this process ending
