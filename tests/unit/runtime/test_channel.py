"""Channel: calls and notices between two processes (here two ends in one process)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from connect_lite.api.errors import ConnectError, NotFoundError, RetriableError
from connect_lite.runtime.channel import CallTimeoutError, Channel, ChannelClosedError, portable

Handlers = Mapping[str, Callable[..., Any]]


@pytest.fixture
def pair() -> Iterator[Callable[..., tuple[Channel, Channel]]]:
    """``make(left_handlers, right_handlers, **right_options)``: two started, connected ends."""
    made: list[Channel] = []

    def make(left: Handlers, right: Handlers, **options: Any) -> tuple[Channel, Channel]:
        a, b = socket.socketpair()
        ends = Channel(a, left, name="left"), Channel(b, right, name="right", **options)
        for end in ends:
            end.start()
        made.extend(ends)
        return ends

    yield make
    for end in made:
        end.close()


def test_a_call_returns_what_the_other_side_answers(pair: Any) -> None:
    left, _ = pair({}, {"add": lambda a, b: a + b})
    assert left.call("add", 2, 3) == 5
    assert left.call("add", [1], [2]) == [1, 2]


def test_a_call_raises_what_the_handler_raised_as_itself(pair: Any) -> None:
    def fail(kind: str) -> None:
        raise {"retriable": RetriableError, "missing": NotFoundError}[kind]("the store is busy")

    left, _ = pair({}, {"fail": fail})
    with pytest.raises(RetriableError, match="the store is busy"):
        left.call("fail", "retriable")
    with pytest.raises(NotFoundError):
        left.call("fail", "missing")


class _Unpicklable(Exception):
    def __init__(self, a: str, b: str) -> None:
        super().__init__(f"{a}/{b}")


def test_an_error_that_cannot_cross_becomes_a_connect_error_naming_it(pair: Any) -> None:
    def fail() -> None:
        raise _Unpicklable("x", "y")

    left, _ = pair({}, {"fail": fail})
    with pytest.raises(ConnectError, match="_Unpicklable: x/y"):
        left.call("fail")
    assert isinstance(portable(RetriableError("r")), RetriableError)


def test_an_unknown_method_is_an_error_not_a_hang(pair: Any) -> None:
    left, _ = pair({}, {})
    with pytest.raises(ConnectError, match="no handler for nothing"):
        left.call("nothing", timeout=5)


def test_notices_run_in_order_and_answer_nothing(pair: Any) -> None:
    seen: list[int] = []
    done = threading.Event()

    def note(i: int) -> None:
        seen.append(i)
        if i == 99:
            done.set()

    left, _ = pair({}, {"note": note})
    for i in range(100):
        assert left.notify("note", i) is True
    assert done.wait(5)
    assert seen == list(range(100))


def test_an_ordered_handler_may_call_back_while_it_runs(pair: Any) -> None:
    """A task stop (ordered, on the child) commits offsets through a call to the worker,
    whose answer the child's reader must still hand over: no deadlock."""
    child_end: list[Channel] = []

    def stop() -> str:
        return str(child_end[0].call("commit", timeout=5))

    worker, child = pair({"commit": lambda: "committed"}, {"stop": stop}, ordered=("stop",))
    child_end.append(child)
    assert worker.call("stop", timeout=5) == "committed"


def test_ordered_handlers_run_one_at_a_time_in_the_order_sent(pair: Any) -> None:
    running: list[str] = []
    order: list[str] = []
    release = threading.Event()

    def slow(name: str) -> None:
        running.append(name)
        assert len(running) == 1, "two ordered handlers ran at once"
        release.wait(5)
        order.append(name)
        running.remove(name)

    left, _ = pair({}, {"slow": slow, "fast": lambda: "fast"}, ordered=("slow",))
    assert left.notify("slow", "first") and left.notify("slow", "second")
    assert left.call("fast", timeout=5) == "fast"  # answered while "first" still runs
    release.set()
    deadline = time.monotonic() + 5
    while len(order) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert order == ["first", "second"]


def test_a_waiting_call_fails_when_the_other_side_goes_away(pair: Any) -> None:
    """The data-plane process dies while the worker waits for an answer: the call raises,
    and the worker's on_closed runs once."""
    closed: list[bool] = []
    started, gate = threading.Event(), threading.Event()

    def hang() -> None:
        started.set()
        gate.wait(5)

    worker, child = pair({}, {"hang": hang}, ordered=("hang",))
    worker._on_closed = lambda: closed.append(True)
    caller_error: list[BaseException] = []

    def call() -> None:
        try:
            worker.call("hang")
        except BaseException as error:
            caller_error.append(error)

    thread = threading.Thread(target=call)
    thread.start()
    assert started.wait(5)
    child.close()  # the other end goes away, mid-call
    thread.join(5)
    gate.set()
    assert caller_error and isinstance(caller_error[0], ChannelClosedError)
    deadline = time.monotonic() + 5
    while not closed and time.monotonic() < deadline:
        time.sleep(0.01)
    assert closed == [True]
    assert worker.closed
    assert worker.notify("anything") is False
    with pytest.raises(ChannelClosedError):
        worker.call("anything")


def test_close_with_drain_sends_the_answer_under_way(pair: Any) -> None:
    """The data plane answers the worker's shutdown, then closes: the answer arrives."""
    started, go = threading.Event(), threading.Event()

    def shutdown() -> str:
        started.set()
        go.wait(5)  # still working when its side starts closing
        return "stopped"

    worker, child = pair({}, {"shutdown": shutdown}, ordered=("shutdown",))
    answer: list[Any] = []
    caller = threading.Thread(target=lambda: answer.append(worker.call("shutdown", timeout=5)))
    caller.start()
    assert started.wait(5)
    closer = threading.Thread(target=child.close, kwargs={"drain": True})
    closer.start()
    deadline = time.monotonic() + 5
    while not child._commands._shutdown and time.monotonic() < deadline:  # draining now
        time.sleep(0.01)
    go.set()
    closer.join(5)
    caller.join(5)
    assert answer == ["stopped"]


def test_an_answer_that_cannot_be_pickled_is_an_error_not_a_hang(pair: Any) -> None:
    left, _ = pair({}, {"lock": threading.Lock})
    with pytest.raises(ConnectError, match="pickle"):
        left.call("lock", timeout=5)


def test_a_failing_notice_is_logged_and_the_channel_goes_on(
    pair: Any, caplog: pytest.LogCaptureFixture
) -> None:
    def broken() -> None:
        raise ValueError("bad notice")

    left, _ = pair({}, {"broken": broken, "echo": lambda x: x})
    assert left.notify("broken")
    assert left.call("echo", 7, timeout=5) == 7  # after the notice, in order
    assert "notice broken failed" in caplog.text and "bad notice" in caplog.text


def test_threaded_methods_do_not_hold_up_the_reader(pair: Any) -> None:
    gate = threading.Event()
    left, _ = pair({}, {"slow": lambda: gate.wait(5), "fast": lambda: "fast"}, threaded=("slow",))
    assert left.notify("slow")
    assert left.call("fast", timeout=5) == "fast"  # answered while "slow" waits
    gate.set()


def test_a_handler_on_the_reader_thread_cannot_call_back(pair: Any) -> None:
    ends: list[Channel] = []
    errors: list[BaseException] = []

    def calls_back() -> None:
        try:
            ends[0].call("anything", timeout=1)
        except RuntimeError as error:
            errors.append(error)

    worker, child = pair({}, {"calls_back": calls_back})
    ends.append(child)
    worker.call("calls_back", timeout=5)
    assert errors and "cannot call" in str(errors[0])


def test_a_call_without_an_answer_in_time_says_so(pair: Any) -> None:
    gate = threading.Event()
    left, _ = pair({}, {"hang": lambda: gate.wait(5)}, ordered=("hang",))
    with pytest.raises(CallTimeoutError, match=r"no answer to hang within 0\.2 s"):
        left.call("hang", timeout=0.2)
    gate.set()
