"""LocalTasks: a TaskHost whose tasks are threads of its process, built from their plans."""

from __future__ import annotations

import contextvars
import functools
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypedDict

from connect_lite.api.connector import SinkTask, SourceTask
from connect_lite.api.errors import ConnectError
from connect_lite.config.batching import Batching
from connect_lite.config.error_handling import ErrorHandling
from connect_lite.dataplane import record_writer
from connect_lite.dataplane.sink_task import WorkerSinkTask
from connect_lite.dataplane.source_task import WorkerSourceTask
from connect_lite.dataplane.task import WorkerTask
from connect_lite.dataplane.topic_creation import TopicCreator
from connect_lite.kafka.admin import Admin
from connect_lite.kafka.consumer import Consumer
from connect_lite.kafka.producer import Producer
from connect_lite.logs.context import logging_context
from connect_lite.pipeline import SinkJob, SourceJob, SparkEngine
from connect_lite.plugins.isolation import public_class_name
from connect_lite.protocol.host import LastBatch, TaskKey, TaskView
from connect_lite.protocol.plan import TaskPlan
from connect_lite.protocol.reports import SourceOffsets, TaskStatusWriter, TopicRecorder, trace_of
from connect_lite.protocol.states import State, TargetState

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TaskServices:
    """What a task reaches outside itself: Spark, and the control plane's state (the
    status reporter, the offset store, the topic tracker), or stand-ins that forward to it."""

    spark: SparkEngine
    status: TaskStatusWriter
    offsets: SourceOffsets
    topic_tracker: TopicRecorder | None


class TaskFactory(Protocol):
    def __call__(self, plan: TaskPlan, services: TaskServices) -> WorkerTask: ...


class TaskArgs(TypedDict):
    """What a source and a sink task are both built with (type-checked where unpacked)."""

    connector: str
    task: int
    status: TaskStatusWriter
    target: TargetState
    task_config: dict[str, str]
    flush_interval_ms: int
    batching: Batching
    topic_tracker: TopicRecorder | None
    error_handling: ErrorHandling


def build_task(plan: TaskPlan, services: TaskServices) -> WorkerTask:
    """The task runner of a plan (not started). Raises if the plugin cannot be loaded or
    built, or if its class does not match its connector's type."""
    plugin = plan.task_class.load()()
    common = TaskArgs(
        connector=plan.connector,
        task=plan.task,
        status=services.status,
        target=plan.target,
        task_config=dict(plan.task_config),
        flush_interval_ms=plan.flush_interval_ms,
        batching=plan.batching,
        topic_tracker=services.topic_tracker,
        error_handling=plan.error_handling,
    )
    if plan.kind == "source" and isinstance(plugin, SourceTask):
        creator = None
        if plan.topic_creation is not None:
            creator = TopicCreator(Admin(plan.admin_config), plan.topic_creation)
        return WorkerSourceTask(
            plugin=plugin,
            topic_creator=creator,
            job=SourceJob(services.spark, plan.spec, plan.job_group),
            producer_factory=functools.partial(Producer, plan.producer_config),
            send_config=plan.producer_config,  # the executors produce each batch
            offsets=services.offsets,
            flush_timeout_ms=plan.flush_timeout_ms,
            **common,
        )
    if plan.kind == "sink" and isinstance(plugin, SinkTask) and plan.subscription is not None:
        return WorkerSinkTask(
            plugin=plugin,
            subscription=plan.subscription,
            job=SinkJob(services.spark, plan.spec, plan.job_group),
            consumer_factory=functools.partial(Consumer, plan.consumer_config),
            dlq_producer_factory=functools.partial(Producer, plan.producer_config),
            dlq_admin_factory=functools.partial(Admin, plan.admin_config),
            record_writer_factory=record_writer.factory(plan.producer_config, plan.admin_config),
            reads_in_executors=True,  # a DataFrame sink's records are read by the executors
            **common,
        )
    raise ConnectError(f"Task class {type(plugin).__qualname__} does not match its connector")


def shared(services: TaskServices) -> Callable[[TaskPlan], TaskServices]:
    """The same services for every task (tasks in the worker's own process)."""
    return lambda _plan: services


class LocalTasks:
    """A TaskHost whose tasks are threads of this process. ``services_for`` gives each task
    what it reaches outside itself (in the data-plane process: stand-ins that carry the
    task's identity and generation to the worker)."""

    def __init__(
        self,
        spark: SparkEngine,
        services_for: Callable[[TaskPlan], TaskServices],
        shutdown_timeout_ms: int,
        factory: TaskFactory = build_task,
    ) -> None:
        self.spark = spark
        self.services_for = services_for
        self.shutdown_timeout_ms = shutdown_timeout_ms
        self._factory = factory
        self._tasks: dict[TaskKey, WorkerTask] = {}
        self._plans: dict[TaskKey, TaskPlan] = {}

    def start(self, plan: TaskPlan) -> bool:
        key = plan.key
        services = self.services_for(plan)
        with logging_context(*key):
            try:
                runner = self._factory(plan, services)
            except Exception as error:
                log.exception("Failed to start task")
                services.status.task(*key, State.FAILED, trace_of(error))
                return False
            self._tasks[key] = runner
            self._plans[key] = plan
            runner.start()
            return True

    def transition(self, connector: str, target: TargetState) -> None:
        for (name, _), runner in self._tasks.items():
            if name == connector:
                runner.transition_to(target)

    def stop(self, keys: Sequence[TaskKey]) -> None:
        """Ask every task to stop at once (each on a thread of its own: a stop may call the
        plugin's ``stop``, which may hang), then wait for them within the graceful timeout
        in all; a task that misses it is abandoned and commits nothing more, unless all it has
        left to do is let go of its consumer (``releasing``)."""
        runners = [self._tasks.pop(k) for k in keys if k in self._tasks]
        for key in keys:
            self._plans.pop(key, None)
        stoppers = [_on_thread(runner.stop, f"stop-{runner.id}") for runner in runners]
        deadline = time.monotonic() + self.shutdown_timeout_ms / 1000
        for runner in runners:
            if not runner.join(max(deadline - time.monotonic(), 0.0)):
                if runner.releasing:
                    runner.log.info(
                        "Task stopped; its consumer leaves the group once the group has settled"
                    )
                    continue
                runner.abandoned = True
                _on_thread(runner.abandon, f"abandon-{runner.id}")
                runner.log.error("Graceful stop of task failed; abandoned, it commits nothing more")
        for stopper in stoppers:  # their cancels too, unless one hangs in a plugin's stop
            stopper.join(max(deadline - time.monotonic(), 0.0))

    def held(self) -> list[TaskKey]:
        return sorted(self._tasks)

    def last_batches(self, connector: str) -> dict[int, LastBatch]:
        found = {}
        for (name, task), runner in sorted(list(self._tasks.items())):
            batch = runner.last_batch() if name == connector else None
            if batch is not None:
                found[task] = batch
        return found

    def views(self) -> list[TaskView]:
        views = []
        for key, runner in sorted(list(self._tasks.items())):
            plan = self._plans.get(key)
            plugin = getattr(runner, "plugin", None)
            views.append(
                TaskView(
                    runner.connector,
                    runner.task,
                    runner.kind,
                    public_class_name(type(plugin)) if plugin is not None else "",
                    runner.version,
                    plan.components if plan is not None else (),
                    runner.counters.snapshot(),
                    runner.error_counters.snapshot(),
                    runner.last_batch(),
                )
            )
        return views

    def engine_failure(self) -> str | None:
        return self.spark.unavailable or self.spark.start_error

    def running(self) -> list[WorkerTask]:
        """The task runners themselves (this process only)."""
        return list(self._tasks.values())


def _on_thread(work: Callable[[], None], name: str) -> threading.Thread:
    thread = threading.Thread(
        target=contextvars.copy_context().run, args=(work,), name=name, daemon=True
    )
    thread.start()
    return thread


__all__ = ["LocalTasks", "TaskFactory", "TaskServices", "build_task", "shared"]
