"""ClusterWatch: when a cluster session counts as unreachable; Backoff: the delays between
attempts to start a new one."""

from __future__ import annotations

from connect_lite.pipeline.cluster_watch import Backoff, ClusterWatch
from tests.fakes import FakeClock

MASTER = "spark://127.0.0.1:7077"


def test_reachable_while_executors_are_registered() -> None:
    clock = FakeClock(50.0)
    watch = ClusterWatch(30.0, clock)
    for _ in range(100):
        clock.now += 1
        assert watch.observe(1, False, MASTER) is None


def test_unreachable_after_the_timeout_without_executors() -> None:
    clock = FakeClock(50.0)
    watch = ClusterWatch(30.0, clock)
    assert watch.observe(0, False, MASTER) is None
    clock.now += 29
    assert watch.observe(None, False, MASTER) is None  # a failed probe counts as none
    clock.now += 1
    assert watch.observe(0, False, MASTER) == (
        f"no executor for 30 s: the master at {MASTER} or its workers are unreachable"
    )


def test_an_executor_coming_back_restarts_the_count() -> None:
    clock = FakeClock(50.0)
    watch = ClusterWatch(30.0, clock)
    watch.observe(0, False, MASTER)
    clock.now += 20
    assert watch.observe(2, False, MASTER) is None
    clock.now += 1
    watch.observe(0, False, MASTER)
    clock.now += 29
    assert watch.observe(0, False, MASTER) is None
    watch.reset()
    clock.now += 5
    assert watch.observe(0, False, MASTER) is None  # counted from after the reset


def test_a_stopped_application_is_unreachable_at_once() -> None:
    watch = ClusterWatch(30.0, FakeClock(50.0))
    reason = watch.observe(None, True, MASTER)
    assert reason == f"the application was stopped: the master at {MASTER} is unresponsive"


def test_backoff_doubles_up_to_its_cap_and_resets() -> None:
    backoff = Backoff(1.0, 30.0)
    assert [backoff.next() for _ in range(7)] == [1, 2, 4, 8, 16, 30, 30]
    for _ in range(2000):
        backoff.next()  # no overflow however long the cluster is away
    assert backoff.next() == 30
    backoff.reset()
    assert backoff.next() == 1
