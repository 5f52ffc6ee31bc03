"""Polling with a deadline; a timeout names what was awaited and the last state seen."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_MISSING = object()


class WaitTimeout(AssertionError):
    """A wait ran out of time; ``last_seen`` is the last state observed (or error raised)."""

    def __init__(self, what: str, timeout: float, last_seen: Any) -> None:
        super().__init__(
            f"timed out after {timeout:g}s waiting for {what}; last seen: {_show(last_seen)}"
        )
        self.what = what
        self.timeout = timeout
        self.last_seen = last_seen


class WaitFailed(AssertionError):
    """A wait stopped early because what it waited for can no longer happen (e.g. FAILED)."""


def _show(value: Any) -> str:
    if value is _MISSING:
        return "nothing (no attempt finished)"
    if isinstance(value, BaseException):
        return f"{type(value).__name__}: {value}"
    try:
        return json.dumps(value, sort_keys=True, default=repr)
    except (TypeError, ValueError):
        return repr(value)


def poll(
    observe: Callable[[], T],
    done: Callable[[T], bool],
    what: str,
    timeout: float,
    interval: float = 0.1,
) -> T:
    """Call ``observe`` until ``done(state)``; return that state or raise WaitTimeout.

    An exception from ``observe`` (the worker is restarting, the connector does not exist yet)
    counts as the last seen state and polling goes on; WaitFailed from ``done`` ends at once.
    """
    deadline = time.monotonic() + timeout
    last: Any = _MISSING
    while True:
        try:
            state = observe()
        except WaitFailed:
            raise
        except Exception as error:
            last = error
        else:
            last = state
            if done(state):
                return state
        if time.monotonic() >= deadline:
            raise WaitTimeout(what, timeout, last)
        time.sleep(interval)


def wait_for(
    condition: Callable[[], T],
    timeout: float = 60.0,
    interval: float = 0.1,
    what: str | None = None,
) -> T:
    """Call ``condition`` until it returns a truthy value; return that value.

    For what a test checks by hand (a file's lines, a log line, a process gone):
    ``wait_for(lambda: len(lines(out)) >= 3, 30, what="3 lines in out.txt")``. As in
    :func:`poll`, an exception from ``condition`` counts as the last seen state and polling
    goes on (WaitFailed ends it at once); after ``timeout`` seconds WaitTimeout names ``what``
    (default: the condition's docstring or name) and the last value seen.
    """
    return poll(condition, bool, what or describe(condition), timeout, interval)


def describe(function: Callable[..., Any]) -> str:
    """What a condition or predicate waits for: its docstring, else its name."""
    doc = (getattr(function, "__doc__", None) or "").strip()
    return doc or getattr(function, "__name__", repr(function))


__all__ = ["WaitFailed", "WaitTimeout", "describe", "poll", "wait_for"]
