"""DataPlaneProcess, the worker's side of the data plane, against a stand-in child (a channel
served by threads of this process): holding tasks, fencing off stopped ones, a dead child."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from connect_lite.api.errors import ConnectError
from connect_lite.control import dataplane_process
from connect_lite.control.dataplane_process import DataPlaneProcess
from connect_lite.control.status import StatusReporter
from connect_lite.control.topic_tracking import TopicTracker
from connect_lite.protocol.channel import Channel
from connect_lite.protocol.host import LastBatch, TaskView
from connect_lite.protocol.messages import (
    CommitOffsets,
    DataPlaneSettings,
    EngineState,
    ReadViews,
    Shutdown,
    Snapshot,
    StartTask,
    StopTasks,
    TaskStatusReport,
    Transition,
)
from connect_lite.protocol.plan import TaskPlan
from connect_lite.protocol.states import State
from connect_lite.protocol.task_metrics import TaskCounters
from connect_lite.storage.memory import open_memory_stores
from connect_lite.testing import wait_for
from tests.unit.protocol.fake_plan import plan


def view(connector: str, task: int, records: int = 0) -> TaskView:
    counters = TaskCounters()
    counters.add(records_in=records)
    batch = LastBatch("pool", ("driver",))
    return TaskView(connector, task, "source", "T", "1", (), counters, {}, batch)


class FakeProc:
    """A child process that exits when its stand-in dies."""

    pid = 4242

    def __init__(self) -> None:
        self.exited = threading.Event()
        self.code = -9

    def wait(self, timeout: float | None = None) -> int:
        self.exited.wait(timeout)
        return self.code

    def kill(self) -> None:
        self.exited.set()


class StandIn:
    """What the data-plane process answers, served by a channel in this process."""

    def __init__(self, sock: socket.socket) -> None:
        self.proc = FakeProc()
        self.plans: list[TaskPlan] = []
        self.stopped: list[list[tuple[str, int]]] = []
        self.refuse: set[str] = set()
        self.views: list[TaskView] = []
        self.hang = threading.Event()
        self.crash_on_start = False
        self.channel = Channel(
            sock,
            {
                StartTask: lambda m: self.start(m.plan),
                StopTasks: lambda m: self.stop(m.keys),
                Shutdown: lambda m: self.shutdown(),
                ReadViews: lambda m: tuple(self.views),
                Transition: lambda m: None,
            },
            name="stand-in",
            ordered=(StartTask, StopTasks, Shutdown),
        )
        self.channel.start()

    def start(self, made: TaskPlan) -> bool:
        if made.connector == "slow":
            self.hang.wait(5)
        if self.crash_on_start:  # the process dies before it answers
            self.die()
            return False
        self.plans.append(made)
        if made.connector in self.refuse:
            self.status(made, State.FAILED)  # as LocalTasks does when it cannot build it
            return False
        if made.connector == "quick":  # its thread reports before the start is answered
            self.status(made, State.RUNNING)
        return True

    def stop(self, keys: list[tuple[str, int]]) -> None:
        self.stopped.append(list(keys))

    def shutdown(self) -> None:
        self.proc.exited.set()

    def die(self) -> None:
        self.proc.exited.set()
        self.channel.close()

    # what the data plane's tasks send
    def status(self, made: TaskPlan, state: State) -> None:
        self.channel.notify(
            TaskStatusReport(made.connector, made.task, made.generation, state, None, "1")
        )

    def commit(self, made: TaskPlan, offsets: dict[str, Any]) -> None:
        self.channel.call(CommitOffsets(made.connector, made.task, made.generation, offsets))


class Harness:
    def __init__(self) -> None:
        self.children: list[StandIn] = []
        self.crashing_children = False
        """Whether each new stand-in dies at its first start."""
        self.stores = open_memory_stores()
        self.status = StatusReporter(self.stores.statuses, "w")
        settings = DataPlaneSettings(spark_conf={}, shutdown_timeout_ms=1000)
        self.plane = DataPlaneProcess(settings, spawn=self.spawn)
        self.plane.attach(
            self.status, self.stores.offsets, TopicTracker(self.stores.topics, True, True)
        )

    def spawn(self, _settings: DataPlaneSettings) -> tuple[FakeProc, socket.socket]:
        ours, theirs = socket.socketpair()
        child = StandIn(theirs)
        child.crash_on_start = self.crashing_children
        self.children.append(child)
        return child.proc, ours

    @property
    def child(self) -> StandIn:
        return self.children[-1]

    def state(self, connector: str, task: int = 0) -> State | None:
        found = self.stores.statuses.get_task(connector, task)
        return None if found is None else found.state


@pytest.fixture
def harness() -> Iterator[Harness]:
    made = Harness()
    yield made
    made.plane.close()
    made.status.close()


def test_a_started_task_is_held_with_a_generation_of_its_own(harness: Harness) -> None:
    assert harness.plane.start(plan("c", 0)) is True
    assert harness.plane.start(plan("c", 1)) is True
    harness.child.refuse.add("bad")
    assert harness.plane.start(plan("bad", 0)) is False  # it could not be built: not held
    assert harness.plane.held() == [("c", 0), ("c", 1)]
    generations = [p.generation for p in harness.child.plans]
    assert len(set(generations)) == 3 and all(g > 0 for g in generations)


def test_a_tasks_first_status_may_come_before_its_start_is_answered(harness: Harness) -> None:
    assert harness.plane.start(plan("quick", 0)) is True
    harness.child.commit(harness.child.plans[-1], {})  # after the status, in order
    assert harness.state("quick") is State.RUNNING
    harness.child.refuse.add("bad")
    assert harness.plane.start(plan("bad", 0)) is False
    harness.child.commit(harness.child.plans[0], {})
    assert harness.state("bad") is State.FAILED  # the child's own FAILED status is taken


def test_a_stopped_task_is_fenced_off(harness: Harness) -> None:
    """What a stopped task sends later (its stop timed out, say) changes nothing."""
    harness.plane.start(plan())
    first = harness.child.plans[-1]
    harness.child.commit(first, {"p": ({"f": 1}, {"o": 1})})
    assert harness.stores.offsets.all("c") == [({"f": 1}, {"o": 1})]
    harness.plane.stop([("c", 0)])
    assert harness.child.stopped == [[("c", 0)]]
    assert harness.plane.held() == []
    with pytest.raises(ConnectError, match="Task c-0 was stopped: its offsets are not committed"):
        harness.child.commit(first, {"p": ({"f": 1}, {"o": 99})})
    harness.child.status(first, State.RUNNING)

    harness.plane.start(plan())  # restarted: a new generation
    second = harness.child.plans[-1]
    harness.child.status(second, State.RUNNING)
    wait_for(lambda: harness.state("c") is State.RUNNING, 5, 0.01, "the new start's status")
    harness.child.status(first, State.FAILED)  # the old one, late
    harness.child.commit(second, {"p": ({"f": 1}, {"o": 2})})  # handled after that notice
    assert harness.state("c") is State.RUNNING
    assert harness.stores.offsets.all("c") == [({"f": 1}, {"o": 2})]
    with pytest.raises(ConnectError):
        harness.child.commit(first, {"p": ({"f": 1}, {"o": 99})})
    assert harness.stores.offsets.all("c") == [({"f": 1}, {"o": 2})]


def test_a_dead_child_fails_its_tasks_until_they_are_restarted(harness: Harness) -> None:
    harness.plane.start(plan("a", 0))
    harness.plane.start(plan("b", 0))
    harness.child.status(harness.child.plans[0], State.RUNNING)
    wait_for(lambda: harness.state("a") is State.RUNNING, 5, 0.01, "a RUNNING")
    first = harness.child
    first.die()
    wait_for(lambda: harness.state("a") is State.FAILED, 5, 0.01, "a FAILED")
    wait_for(lambda: harness.state("b") is State.FAILED, 5, 0.01, "b FAILED")
    trace = harness.stores.statuses.get_task("a", 0).trace  # type: ignore[union-attr]
    assert trace is not None and "exited unexpectedly (exit code -9)" in trace
    failure = harness.plane.engine_failure()
    assert failure is not None and "exited unexpectedly" in failure
    assert harness.plane.held() == [("a", 0), ("b", 0)]  # as a failed task stays held

    harness.plane.stop([("a", 0)])  # a restart: stop (nothing to reach), then start
    assert harness.plane.start(plan("a", 0)) is True
    assert len(harness.children) == 2, "a new data-plane process"
    assert harness.plane.engine_failure() is None  # tasks run again; b stays FAILED
    assert harness.state("b") is State.FAILED


def test_a_dead_child_with_no_task_is_no_failure(harness: Harness) -> None:
    harness.plane.start(plan("a", 0))
    harness.plane.stop([("a", 0)])
    harness.child.die()
    child = harness.plane._child
    assert child is not None
    wait_for(lambda: child.gone is not None, 5, 0.01, "the worker saw it die")
    assert harness.plane.engine_failure() is None  # nothing held died with it


def test_a_start_that_finds_the_child_gone_fails_the_task(harness: Harness) -> None:
    harness.plane.start(plan("a", 0))
    harness.child.die()
    # the worker's side has noticed (not only the stand-in's): a start now needs a new child
    wait_for(lambda: harness.plane.engine_failure() is not None, 5, 0.01, "the worker saw it die")

    def spawn_fails(_settings: DataPlaneSettings) -> Any:
        raise OSError(24, "Too many open files")

    harness.plane._spawn = spawn_fails
    assert harness.plane.start(plan("b", 0)) is False
    trace = harness.stores.statuses.get_task("b", 0).trace  # type: ignore[union-attr]
    assert harness.state("b") is State.FAILED and trace is not None and "Too many open" in trace
    assert ("b", 0) not in harness.plane.held()


def test_a_child_that_dies_as_a_task_starts_is_replaced_once(harness: Harness) -> None:
    harness.plane.start(plan("a", 0))
    first = harness.child
    first.crash_on_start = True
    assert harness.plane.start(plan("b", 0)) is True
    assert len(harness.children) == 2 and harness.child is not first
    started = harness.child.plans[-1]
    assert started.key == ("b", 0) and harness.plane.held() == [("a", 0), ("b", 0)]
    wait_for(lambda: harness.state("a") is State.FAILED, 5, 0.01, "a FAILED with the first child")
    harness.child.status(started, State.RUNNING)
    wait_for(lambda: harness.state("b") is State.RUNNING, 5, 0.01, "b RUNNING in the new child")
    trace = harness.stores.statuses.get_task("a", 0).trace  # type: ignore[union-attr]
    assert trace is not None and "exited unexpectedly" in trace


def test_a_task_whose_start_kills_two_children_fails(harness: Harness) -> None:
    harness.crashing_children = True
    assert harness.plane.start(plan("b", 0)) is False
    assert len(harness.children) == 2, "replaced once, not again"
    trace = harness.stores.statuses.get_task("b", 0).trace  # type: ignore[union-attr]
    assert harness.state("b") is State.FAILED and trace is not None and "gone" in trace
    assert harness.plane.held() == []


def test_a_start_without_an_answer_is_failed_but_held(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child may still start it: held, so that a stop or restart reaches it."""
    monkeypatch.setattr(dataplane_process, "START_TIMEOUT_S", 0.2)
    assert harness.plane.start(plan("slow", 0)) is True
    assert harness.state("slow") is State.FAILED
    assert harness.plane.held() == [("slow", 0)]
    harness.child.hang.set()


def test_views_come_from_the_child_and_only_for_held_tasks(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    harness.plane.start(plan("a", 0))
    harness.child.views = [view("a", 0, records=5), view("gone", 0)]
    seen = harness.plane.views()
    assert [(v.connector, v.counters.records_in) for v in seen] == [("a", 5)]

    busy = threading.Event()  # the child does not answer in time: the last ones read
    harness.child.channel._handlers[ReadViews] = lambda m: busy.wait(5) and ()
    harness.child.channel._threaded = frozenset({ReadViews})
    monkeypatch.setattr(dataplane_process, "VIEWS_TIMEOUT_S", 0.1)
    monkeypatch.setattr(harness.plane, "_views_read_at", 0.0)
    try:
        assert [v.counters.records_in for v in harness.plane.views()] == [5]
    finally:
        busy.set()


def test_the_snapshot_gives_status_and_health_without_a_call(harness: Harness) -> None:
    harness.plane.start(plan("a", 0))
    engine = EngineState(unavailable="Spark is unreachable")
    harness.child.channel.notify(Snapshot((view("a", 0), view("gone", 0)), engine))
    wait_for(lambda: harness.plane.engine_failure() is not None, 5, 0.01, "the snapshot")
    assert harness.plane.engine_failure() == "Spark is unreachable"
    assert harness.plane.last_batches("a") == {0: LastBatch("pool", ("driver",))}
    assert harness.plane.last_batches("gone") == {}  # not held: not shown


def test_a_stop_returns_only_after_a_commit_already_let_through(harness: Harness) -> None:
    """The check that a task is current and its write are one step: a stop that drops the
    task waits for a write it already let through (then an offset reset cannot be undone)."""
    harness.plane.start(plan())
    made = harness.child.plans[-1]
    writing, release = threading.Event(), threading.Event()
    store = harness.stores.offsets
    real_put = store.put_many

    def slow_put(connector: str, offsets: Any) -> None:
        writing.set()
        release.wait(5)
        real_put(connector, offsets)

    store.put_many = slow_put  # type: ignore[method-assign]
    committer = threading.Thread(target=harness.child.commit, args=(made, {"p": ({}, {"o": 1})}))
    committer.start()
    assert writing.wait(5)
    stopped = threading.Event()
    stopper = threading.Thread(target=lambda: (harness.plane.stop([("c", 0)]), stopped.set()))
    stopper.start()
    assert not stopped.wait(0.3), "the stop returned while the write was under way"
    release.set()
    committer.join(5)
    stopper.join(5)
    assert stopped.is_set() and store.all("c") == [({}, {"o": 1})]
    with pytest.raises(ConnectError):
        harness.child.commit(made, {"p": ({}, {"o": 2})})
