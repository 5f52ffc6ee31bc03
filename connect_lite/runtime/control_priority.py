"""Control-plane requests first: the data plane's driver threads step aside while one runs.

The REST API shares the worker's interpreter, and so its GIL, with the tasks' driver work
(polling, pickling chunks, producing, building records, putting). A request gives the GIL
up at every socket and SQLite call, and CPython lets a busy thread keep it for up to
``sys.getswitchinterval()`` (5 ms) each time another thread asks for it back: under load a
status request waited for the data plane again and again (scripts/bench_rest_process.py).

So, while a request is in flight (from the moment its request line and headers have
arrived, or on a kept-alive connection its first bytes, until its answer is written):
- every data-plane thread that reaches a step-aside point (``step_aside``: between polls,
  chunks, and slices of a produce, of record building and of a put; never while holding a
  lock a request could need) waits until no request is in flight. Waiting on an Event
  releases the GIL, so the request runs nearly alone;
- the interpreter's switch interval is REQUEST_SWITCH_INTERVAL_S (the process has one,
  shared by every ControlPriority), so a data-plane thread between two points gives the
  GIL back to the request sooner.

The data plane waits at most ``max_wait_s`` per stretch of time with requests in flight,
counted from the first of them, not per point: a request that itself waits for a task (a
stop waits for the task's loop, which may pass many points) holds it up once and briefly.
And it steps aside at most MAX_SHARE of the time: what a stretch held it for is spent from
a credit earned back at that share of the time passing, so a client that sends requests
back to back slows the data plane by half at most. With no request in flight a
step-aside point costs one attribute read.

This narrows the gap; it cannot close it. Plugin code (a poll, a put), pickling and garbage
collection run between points, and the REST server's own threads take the GIL before a
request is known. A REST API that never waits for the data plane needs a process of its
own (see the README's "Not built yet").
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

MAX_WAIT_S = 0.05
"""The longest the data plane steps aside for one stretch of requests in flight."""

MAX_SHARE = 0.5
"""The largest share of time the data plane steps aside, over any stretch of time: a client
that sends requests back to back gets them first half of the time, no more."""

REQUEST_SWITCH_INTERVAL_S = 0.0005
"""The interpreter's switch interval while a request is in flight (CPython's default: 5 ms)."""


class _SwitchInterval:
    """The process's switch interval is one: every ControlPriority with a stretch of requests
    in flight shares the short one, and the last to end puts back what was there first."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._saved = sys.getswitchinterval()

    def shorten(self, seconds: float) -> None:
        with self._lock:
            if not self._users:
                self._saved = sys.getswitchinterval()
            self._users += 1
            sys.setswitchinterval(min(seconds, sys.getswitchinterval()))

    def restore(self) -> None:
        with self._lock:
            self._users -= 1
            if not self._users:
                sys.setswitchinterval(self._saved)


_SWITCH_INTERVAL = _SwitchInterval()


class ControlPriority:
    """Counts the control-plane requests in flight; data-plane threads wait while any is."""

    def __init__(
        self,
        max_wait_s: float = MAX_WAIT_S,
        clock: Callable[[], float] = time.monotonic,
        switch_interval_s: float | None = REQUEST_SWITCH_INTERVAL_S,
        max_share: float = MAX_SHARE,
    ) -> None:
        self.max_wait_s = max_wait_s
        self.max_share = max_share
        self._clock = clock
        self._credit = max_wait_s
        """Seconds the data plane may still step aside: spent while held, earned back at
        ``max_share`` of the time passing, at most ``max_wait_s`` (a token bucket)."""
        self._credit_at = clock()
        self._since = 0.0
        """When the stretch in flight began."""
        self._switch_interval_s = switch_interval_s
        self._lock = threading.Lock()
        self._in_flight = 0
        self._until = 0.0
        """When the data plane stops waiting for the stretch of requests in flight."""
        self._clear = threading.Event()
        self._clear.set()
        self.stepped_aside = 0
        """How many times a data-plane thread waited at a step-aside point."""

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def hold_left(self) -> float:
        """Seconds the data plane may still be held for the requests in flight (0 if none)."""
        return max(0.0, self._until - self._clock()) if self._in_flight else 0.0

    def begin(self) -> None:
        """One more request in flight; the first of a stretch starts its clock, and may hold
        the data plane for as long as the credit left (``max_wait_s`` at most)."""
        with self._lock:
            if not self._in_flight:
                now = self._clock()
                self._earn(now)
                self._since, self._until = now, now + self._credit
                self._clear.clear()
                if self._switch_interval_s is not None:
                    _SWITCH_INTERVAL.shorten(self._switch_interval_s)
            self._in_flight += 1

    def end(self) -> None:
        """One request fewer in flight; after the last, the data plane goes on. (After
        ``reset``, the end of a request counted before it changes nothing.)"""
        with self._lock:
            if not self._in_flight:
                return
            self._in_flight -= 1
            if not self._in_flight:
                self._end_stretch()

    def reset(self) -> None:
        """No request in flight any more (the REST server stopped with some unanswered)."""
        with self._lock:
            if self._in_flight:
                self._in_flight = 0
                self._end_stretch()

    def _earn(self, now: float) -> None:
        earned = (now - self._credit_at) * self.max_share
        self._credit = min(self.max_wait_s, self._credit + earned)
        self._credit_at = now

    def _end_stretch(self) -> None:
        now = self._clock()
        self._earn(now)
        held = max(0.0, min(now, self._until) - self._since)
        self._credit = max(0.0, self._credit - held)
        if self._switch_interval_s is not None:
            _SWITCH_INTERVAL.restore()
        self._clear.set()

    @contextmanager
    def request(self) -> Iterator[None]:
        """One request in flight for the duration of the block."""
        self.begin()
        try:
            yield
        finally:
            self.end()

    def step_aside(self) -> None:
        """Called by data-plane threads between units of work: return at once when no
        request is in flight, else wait until none is, or the stretch's time is up."""
        if self._in_flight:
            left = self._until - self._clock()
            if left > 0:
                self.stepped_aside += 1
                self._clear.wait(left)


def no_step_aside() -> None:
    """The step-aside point of a data plane with no control plane to yield to."""
