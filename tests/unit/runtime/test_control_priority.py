"""ControlPriority: data-plane threads wait at step-aside points while a REST request is in
flight, for a bounded time per stretch of requests, and the switch interval follows."""

from __future__ import annotations

import sys
import threading

import pytest

from connect_lite.runtime.control_priority import ControlPriority


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def stepping(priority: ControlPriority) -> tuple[threading.Thread, threading.Event]:
    """A data-plane thread that steps aside once; the Event is set when it went on."""
    went_on = threading.Event()

    def run() -> None:
        priority.step_aside()
        went_on.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, went_on


def test_with_no_request_in_flight_a_step_aside_point_does_not_wait() -> None:
    priority = ControlPriority(max_wait_s=60)
    priority.step_aside()
    assert priority.stepped_aside == 0
    assert priority.in_flight == 0


def test_the_data_plane_waits_while_a_request_is_in_flight_and_goes_on_after_it() -> None:
    priority = ControlPriority(max_wait_s=60)
    with priority.request():
        assert priority.in_flight == 1
        thread, went_on = stepping(priority)
        assert not went_on.wait(0.2)  # held at its point while the request runs
    assert went_on.wait(5)  # the request is done: it goes on at once
    thread.join(5)
    assert priority.stepped_aside == 1
    assert priority.in_flight == 0


def test_overlapping_requests_hold_the_data_plane_until_the_last_one_ends() -> None:
    priority = ControlPriority(max_wait_s=60)
    priority.begin()
    priority.begin()
    thread, went_on = stepping(priority)
    priority.end()
    assert not went_on.wait(0.2)
    priority.end()
    assert went_on.wait(5)
    thread.join(5)


def test_the_wait_is_bounded_per_stretch_of_requests_not_per_point() -> None:
    """A request that waits for the data plane (a stop waits for the task's loop) must not
    hold it at every point it passes: once the stretch's time is up, points do not wait."""
    clock = Clock()
    priority = ControlPriority(max_wait_s=0.2, clock=clock)
    with priority.request():
        thread, went_on = stepping(priority)
        assert went_on.wait(5)  # waited out the stretch's 0.2 s, then went on
        thread.join(5)
        assert priority.stepped_aside == 1
        clock.now += 0.2  # the stretch's time is up
        priority.step_aside()  # returns at once, the request still in flight
        assert priority.stepped_aside == 1
        priority.begin()  # a request joining the stretch does not restart its clock
        priority.step_aside()
        assert priority.stepped_aside == 1
        priority.end()
    clock.now += 0.4  # half of it earns back the 0.2 s spent
    priority.begin()  # a new stretch, a new clock
    thread, went_on = stepping(priority)
    assert not went_on.wait(0.1)
    priority.end()
    assert went_on.wait(5)
    assert priority.stepped_aside == 2


def test_requests_back_to_back_hold_the_data_plane_half_of_the_time_at_most() -> None:
    """The time a stretch held the data plane is spent from a credit earned back at half of
    the time passing: once a client sending requests without pause has spent it, its
    requests go without the data plane stepping aside, until it is earned again."""
    clock = Clock()
    priority = ControlPriority(max_wait_s=0.05, clock=clock)
    held = 0.0
    for _ in range(100):  # requests of 10 ms, one after the other, for 1 s
        priority.begin()
        held += min(priority.hold_left(), 0.01)
        clock.now += 0.01
        priority.end()
    assert 0.5 <= held <= 0.05 + 0.5 + 1e-9  # the first credit, then half of 1 s
    priority.begin()
    assert priority.hold_left() == pytest.approx(0.005)  # half of the last 10 ms
    priority.end()
    clock.now += 0.1  # a quiet 0.1 s: the whole credit is back
    priority.begin()
    assert priority.hold_left() == pytest.approx(0.05)
    priority.end()
    assert priority.hold_left() == 0.0


def test_the_switch_interval_is_short_during_a_stretch_and_restored_after() -> None:
    before = sys.getswitchinterval()
    priority = ControlPriority(switch_interval_s=0.0005)
    with priority.request():
        assert sys.getswitchinterval() == pytest.approx(0.0005)
        with priority.request():
            assert sys.getswitchinterval() == pytest.approx(0.0005)
        assert sys.getswitchinterval() == pytest.approx(0.0005)
    assert sys.getswitchinterval() == pytest.approx(before)


def test_reset_ends_the_stretch_of_requests_never_answered() -> None:
    before = sys.getswitchinterval()
    priority = ControlPriority(max_wait_s=60)
    priority.begin()
    priority.begin()  # two connections queued when the REST server stopped
    priority.reset()
    assert priority.in_flight == 0
    assert sys.getswitchinterval() == pytest.approx(before)
    priority.step_aside()  # does not wait
    assert priority.stepped_aside == 0
    priority.reset()  # nothing in flight: nothing to do


def test_the_end_of_a_request_counted_before_a_reset_changes_nothing() -> None:
    priority = ControlPriority(max_wait_s=60)
    priority.begin()
    priority.reset()
    priority.end()  # the request's connection was answered after all
    assert priority.in_flight == 0
    priority.begin()
    assert priority.in_flight == 1  # counts on from zero
    priority.end()


def test_instances_share_the_process_switch_interval_and_the_last_puts_it_back() -> None:
    """Stretches of two ControlPriority instances overlapping in any order leave the
    interval as it was before the first."""
    before = sys.getswitchinterval()
    first, second = ControlPriority(), ControlPriority(switch_interval_s=0.001)
    first.begin()
    second.begin()
    assert sys.getswitchinterval() == pytest.approx(0.0005)  # the shorter of the two
    first.end()
    assert sys.getswitchinterval() == pytest.approx(0.0005)  # still in a stretch
    second.end()
    assert sys.getswitchinterval() == pytest.approx(before)
