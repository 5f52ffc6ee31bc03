"""Channel: calls and notices between two processes (here two ends in one process)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from connect_lite.api.errors import ConnectError, NotFoundError, RetriableError
from connect_lite.protocol.channel import CallTimeoutError, Channel, ChannelClosedError, portable

Handlers = Mapping[type, Callable[[Any], Any]]


# The messages these tests send: a message's type picks its handler.
@dataclass(frozen=True)
class Add:
    a: Any
    b: Any


@dataclass(frozen=True)
class Fail:
    kind: str = ""


@dataclass(frozen=True)
class Nothing:
    pass


@dataclass(frozen=True)
class Note:
    i: int


@dataclass(frozen=True)
class Commit:
    pass


@dataclass(frozen=True)
class Stop:
    pass


@dataclass(frozen=True)
class Slow:
    name: str = ""


@dataclass(frozen=True)
class Fast:
    pass


@dataclass(frozen=True)
class Hang:
    pass


@dataclass(frozen=True)
class Anything:
    pass


@dataclass(frozen=True)
class Lock:
    pass


@dataclass(frozen=True)
class Broken:
    pass


@dataclass(frozen=True)
class Echo:
    x: Any


@dataclass(frozen=True)
class CallsBack:
    pass


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
    left, _ = pair({}, {Add: lambda m: m.a + m.b})
    assert left.call(Add(2, 3)) == 5
    assert left.call(Add([1], [2])) == [1, 2]


def test_a_call_raises_what_the_handler_raised_as_itself(pair: Any) -> None:
    def fail(m: Fail) -> None:
        raise {"retriable": RetriableError, "missing": NotFoundError}[m.kind]("the store is busy")

    left, _ = pair({}, {Fail: fail})
    with pytest.raises(RetriableError, match="the store is busy"):
        left.call(Fail("retriable"))
    with pytest.raises(NotFoundError):
        left.call(Fail("missing"))


class _Unpicklable(Exception):
    def __init__(self, a: str, b: str) -> None:
        super().__init__(f"{a}/{b}")


def test_an_error_that_cannot_cross_becomes_a_connect_error_naming_it(pair: Any) -> None:
    def fail(_: Fail) -> None:
        raise _Unpicklable("x", "y")

    left, _ = pair({}, {Fail: fail})
    with pytest.raises(ConnectError, match="_Unpicklable: x/y"):
        left.call(Fail())
    assert isinstance(portable(RetriableError("r")), RetriableError)


def test_an_unknown_method_is_an_error_not_a_hang(pair: Any) -> None:
    left, _ = pair({}, {})
    with pytest.raises(ConnectError, match="no handler for Nothing"):
        left.call(Nothing(), timeout=5)


def test_notices_run_in_order_and_answer_nothing(pair: Any) -> None:
    seen: list[int] = []
    done = threading.Event()

    def note(m: Note) -> None:
        seen.append(m.i)
        if m.i == 99:
            done.set()

    left, _ = pair({}, {Note: note})
    for i in range(100):
        assert left.notify(Note(i)) is True
    assert done.wait(5)
    assert seen == list(range(100))


def test_an_ordered_handler_may_call_back_while_it_runs(pair: Any) -> None:
    """A task stop (ordered, on the child) commits offsets through a call to the worker,
    whose answer the child's reader must still hand over: no deadlock."""
    child_end: list[Channel] = []

    def stop(_: Stop) -> str:
        return str(child_end[0].call(Commit(), timeout=5))

    worker, child = pair({Commit: lambda m: "committed"}, {Stop: stop}, ordered=(Stop,))
    child_end.append(child)
    assert worker.call(Stop(), timeout=5) == "committed"


def test_ordered_handlers_run_one_at_a_time_in_the_order_sent(pair: Any) -> None:
    running: list[str] = []
    order: list[str] = []
    release = threading.Event()

    def slow(m: Slow) -> None:
        running.append(m.name)
        assert len(running) == 1, "two ordered handlers ran at once"
        release.wait(5)
        order.append(m.name)
        running.remove(m.name)

    left, _ = pair({}, {Slow: slow, Fast: lambda m: "fast"}, ordered=(Slow,))
    assert left.notify(Slow("first")) and left.notify(Slow("second"))
    assert left.call(Fast(), timeout=5) == "fast"  # answered while "first" still runs
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

    def hang(_: Hang) -> None:
        started.set()
        gate.wait(5)

    worker, child = pair({}, {Hang: hang}, ordered=(Hang,))
    worker._on_closed = lambda: closed.append(True)
    caller_error: list[BaseException] = []

    def call() -> None:
        try:
            worker.call(Hang())
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
    assert worker.notify(Anything()) is False
    with pytest.raises(ChannelClosedError):
        worker.call(Anything())


def test_close_with_drain_sends_the_answer_under_way(pair: Any) -> None:
    """The data plane answers the worker's shutdown, then closes: the answer arrives."""
    started, go = threading.Event(), threading.Event()

    def shutdown(_: Stop) -> str:
        started.set()
        go.wait(5)  # still working when its side starts closing
        return "stopped"

    worker, child = pair({}, {Stop: shutdown}, ordered=(Stop,))
    answer: list[Any] = []
    caller = threading.Thread(target=lambda: answer.append(worker.call(Stop(), timeout=5)))
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
    left, _ = pair({}, {Lock: lambda m: threading.Lock()})
    with pytest.raises(ConnectError, match="pickle"):
        left.call(Lock(), timeout=5)


def test_a_failing_notice_is_logged_and_the_channel_goes_on(
    pair: Any, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(_: Broken) -> None:
        raise ValueError("bad notice")

    left, _ = pair({}, {Broken: broken, Echo: lambda m: m.x})
    assert left.notify(Broken())
    assert left.call(Echo(7), timeout=5) == 7  # after the notice, in order
    assert "notice Broken failed" in caplog.text and "bad notice" in caplog.text


def test_threaded_methods_do_not_hold_up_the_reader(pair: Any) -> None:
    gate = threading.Event()
    left, _ = pair({}, {Slow: lambda m: gate.wait(5), Fast: lambda m: "fast"}, threaded=(Slow,))
    assert left.notify(Slow())
    assert left.call(Fast(), timeout=5) == "fast"  # answered while "slow" waits
    gate.set()


def test_a_handler_on_the_reader_thread_cannot_call_back(pair: Any) -> None:
    ends: list[Channel] = []
    errors: list[BaseException] = []

    def calls_back(_: CallsBack) -> None:
        try:
            ends[0].call(Anything(), timeout=1)
        except RuntimeError as error:
            errors.append(error)

    worker, child = pair({}, {CallsBack: calls_back})
    ends.append(child)
    worker.call(CallsBack(), timeout=5)
    assert errors and "cannot call" in str(errors[0])


def test_a_call_without_an_answer_in_time_says_so(pair: Any) -> None:
    gate = threading.Event()
    left, _ = pair({}, {Hang: lambda m: gate.wait(5)}, ordered=(Hang,))
    with pytest.raises(CallTimeoutError, match=r"no answer to Hang within 0\.2 s"):
        left.call(Hang(), timeout=0.2)
    gate.set()
