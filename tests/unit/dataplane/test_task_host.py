"""LocalTasks: task threads built from plans, held until stopped, seen through views."""

from __future__ import annotations

import pickle
import threading
import time
from types import SimpleNamespace
from typing import Any

import pytest

from connect_lite.api.errors import ConnectError
from connect_lite.dataplane.local_tasks import LocalTasks, TaskServices, shared
from connect_lite.dataplane.task import WorkerTask
from connect_lite.protocol.host import LastBatch, TaskView
from connect_lite.protocol.plan import Component, TaskPlan
from connect_lite.protocol.states import State, TargetState
from connect_lite.protocol.task_metrics import TaskCounters
from tests.unit.protocol.fake_plan import plan


class Statuses:
    def __init__(self) -> None:
        self.seen: list[tuple[str, int, State, str | None]] = []

    def task(
        self,
        connector: str,
        task: int,
        state: State,
        trace: str | None = None,
        version: str | None = None,
    ) -> None:
        self.seen.append((connector, task, state, trace))


class Looping(WorkerTask):
    """A task whose loop counts; a ``stubborn`` one does not finish closing until released,
    and a ``letting_go`` one is then only letting go of its clients (``releasing``)."""

    kind = "source"

    def __init__(
        self, stubborn: threading.Event | None = None, letting_go: bool = False, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.stubborn = stubborn
        self.letting_go = letting_go
        self.plugin = SimpleNamespace()
        self.version = "1.2"

    def initialize(self) -> None:
        pass

    def iteration(self) -> None:
        self.counters.add(records_in=1)
        time.sleep(0.01)

    def close(self) -> None:
        self.releasing = self.letting_go
        if self.stubborn is not None:
            self.stubborn.wait(30)

    def last_batch(self) -> LastBatch | None:
        return LastBatch("pool", ("driver",))


def host(statuses: Statuses, shutdown_ms: int = 5000, **task_kwargs: Any) -> LocalTasks:
    spark = SimpleNamespace(unavailable=None, start_error=None)
    services = TaskServices(spark, statuses, None, None)  # type: ignore[arg-type]

    def factory(p: TaskPlan, s: TaskServices) -> WorkerTask:
        if p.connector == "broken":
            raise ConnectError("no such class")
        return Looping(
            connector=p.connector, task=p.task, status=s.status, target=p.target, **task_kwargs
        )

    return LocalTasks(spark, shared(services), shutdown_ms, factory)  # type: ignore[arg-type]


def test_a_started_task_runs_and_is_held_until_stopped() -> None:
    statuses = Statuses()
    tasks = host(statuses)
    assert tasks.start(plan("c", 0)) is True
    assert tasks.start(plan("c", 1)) is True
    assert tasks.held() == [("c", 0), ("c", 1)]
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not all(v.counters.records_in for v in tasks.views()):
        time.sleep(0.01)
    views = tasks.views()
    assert [(v.connector, v.task, v.kind, v.version) for v in views] == [
        ("c", 0, "source", "1.2"),
        ("c", 1, "source", "1.2"),
    ]
    assert all(v.counters.records_in > 0 for v in views)
    assert views[0].components == (Component("value_converter", "", "StringConverter", "4.1"),)
    assert tasks.last_batches("c") == {
        0: LastBatch("pool", ("driver",)),
        1: LastBatch("pool", ("driver",)),
    }
    tasks.stop([("c", 0), ("c", 1)])
    assert tasks.held() == []
    assert tasks.views() == []
    assert ("c", 0, State.RUNNING, None) in statuses.seen


def test_a_task_that_cannot_be_built_is_failed_and_not_held() -> None:
    statuses = Statuses()
    tasks = host(statuses)
    assert tasks.start(plan("broken", 0)) is False
    assert tasks.held() == []
    (connector, task, state, trace), *_ = statuses.seen
    assert (connector, task, state) == ("broken", 0, State.FAILED)
    assert trace is not None and "no such class" in trace


def test_a_task_that_misses_the_graceful_deadline_is_abandoned() -> None:
    release = threading.Event()
    tasks = host(Statuses(), shutdown_ms=100, stubborn=release)
    tasks.start(plan())
    runner = tasks.running()[0]
    try:
        tasks.stop([("c", 0)])  # returns at the deadline, the task still closing
        assert runner.abandoned is True
        assert tasks.held() == []
    finally:
        release.set()
    assert runner.join(10)


def test_a_task_only_letting_go_of_its_consumer_at_the_deadline_is_not_abandoned(
    caplog: pytest.LogCaptureFixture,
) -> None:
    release = threading.Event()
    tasks = host(Statuses(), shutdown_ms=100, stubborn=release, letting_go=True)
    tasks.start(plan())
    runner = tasks.running()[0]
    try:
        with caplog.at_level("INFO"):
            tasks.stop([("c", 0)])  # returns at the deadline, the consumer still leaving
        assert runner.abandoned is False
        assert tasks.held() == []
        assert [r.levelname for r in caplog.records if "Task stopped" in r.message] == ["INFO"]
        assert not [r for r in caplog.records if r.levelname == "ERROR"]
    finally:
        release.set()
    assert runner.join(10)


def test_transition_pauses_the_connectors_tasks_only() -> None:
    statuses = Statuses()
    tasks = host(statuses)
    tasks.start(plan("a", 0))
    tasks.start(plan("b", 0))
    tasks.transition("a", TargetState.PAUSED)
    deadline = time.monotonic() + 5
    while ("a", 0, State.PAUSED, None) not in statuses.seen and time.monotonic() < deadline:
        time.sleep(0.01)
    assert ("a", 0, State.PAUSED, None) in statuses.seen
    assert ("b", 0, State.PAUSED, None) not in statuses.seen
    tasks.stop(tasks.held())


def test_engine_failure_is_sparks() -> None:
    tasks = host(Statuses())
    assert tasks.engine_failure() is None
    tasks.spark.start_error = "no Java"  # type: ignore[misc]
    assert tasks.engine_failure() == "no Java"


def test_views_cross_to_another_process() -> None:
    """A TaskView is pickled from the data-plane process: its counters without their lock."""
    counters = TaskCounters()
    counters.add(records_in=3, success=1)
    view = TaskView("c", 0, "sink", "T", "1", (), counters.snapshot(), {"x": 1}, None)
    copy = pickle.loads(pickle.dumps(view))
    assert copy == view
    copy.counters.add(records_in=1)  # a lock of its own
    assert copy.counters.records_in == 4
    assert isinstance(copy.counters._lock, type(threading.Lock()))


class RecordingHost:
    """A TaskHost that keeps the plans it is given."""

    def __init__(self) -> None:
        self.plans: list[TaskPlan] = []

    def start(self, made: TaskPlan) -> bool:
        self.plans.append(made)
        return True


BUILD_IN_ANOTHER_PROCESS = """
import pickle, sys
from connect_lite.pipeline.session import SparkEngine
from connect_lite.dataplane.local_tasks import TaskServices, build_task
from connect_lite.storage.memory import open_memory_stores
plan = pickle.load(open(sys.argv[1], "rb"))
stores = open_memory_stores()
task = build_task(plan, TaskServices(SparkEngine(), None, stores.offsets, None))
spec = task.job.spec
print(type(task).__name__, type(task.plugin).__name__, type(spec.value_converter()).__name__,
      [type(t.factory()).__name__ for t in spec.transforms], task.plugin.__class__.__module__)
"""


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (
            {
                "connector.class": "FileStreamSource",
                "file": "in.txt",
                "topic": "t",
                "value.converter": "org.apache.kafka.connect.storage.StringConverter",
                "transforms": "up",
                "transforms.up.type": "UppercaseTransformation",
            },
            "WorkerSourceTask FileStreamSourceTask StringConverter ['UppercaseTransformation']",
        ),
        (
            {"connector.class": "RecordingSinkConnector", "topics": "t", "output.file": "o"},
            "WorkerSinkTask RecordingSinkTask JsonConverter []",
        ),
    ],
)
def test_a_plan_builds_its_task_in_another_process(
    tmp_path: Any, config: dict[str, str], expected: str
) -> None:
    """What the worker plans crosses to the data-plane process, which loads the same classes
    (built in, or from their plugin location) and builds the task from the plan alone."""
    import subprocess
    import sys

    from connect_lite.control.status import StatusReporter
    from connect_lite.control.worker import Worker
    from connect_lite.plugins.registry import Plugins
    from connect_lite.storage.memory import open_memory_stores
    from tests.unit.control.real_herder import TEST_PLUGINS

    recorded = RecordingHost()
    stores = open_memory_stores()
    props = {"bootstrap.servers": "127.0.0.1:1", "value.converter": "JsonConverter"}
    props |= {"key.converter": "JsonConverter", "header.converter": "SimpleHeaderConverter"}
    worker = Worker(
        props,
        Plugins([TEST_PLUGINS]),
        recorded,  # type: ignore[arg-type]
        StatusReporter(stores.statuses, "w"),
        flush_interval_ms=1000,
        flush_timeout_ms=1000,
    )
    worker.start_connector("c", {"name": "c", **config}, TargetState.RUNNING, lambda _: None)
    worker.start_task("c", 0, worker.connector_task_configs("c")[0], TargetState.RUNNING)
    (made,) = recorded.plans
    path = tmp_path / "plan.pickle"
    path.write_bytes(pickle.dumps(made))
    built = subprocess.run(
        [sys.executable, "-c", BUILD_IN_ANOTHER_PROCESS, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert built.returncode == 0, built.stderr
    assert built.stdout.startswith(expected), built.stdout
    assert stores.statuses.get_task("c", 0).state is State.UNASSIGNED  # type: ignore[union-attr]
