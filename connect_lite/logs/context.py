"""Which connector or task a log line is about: Kafka's ``LoggingContext``, in a ContextVar.

The worker sets the context where it runs connector and task code; ``ContextFilter`` copies
it onto every record as ``connector_context``, so a plugin's own
``logging.getLogger(...)`` lines carry ``[my-connector|task-0]`` as the worker's do. A new
thread starts with no context: code that hands work to another thread copies it
(``contextvars.copy_context().run``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

CONNECTOR_SCOPE = "worker"
"""Kafka's scope name for a connector's own code (start, stop, task configs)."""


@dataclass(frozen=True)
class LogContext:
    """A connector and what of it runs: a task (``task-N``) or the connector (``worker``).

    ``str()`` is what Kafka's log4j layout shows, trailing space included:
    ``"[my-connector|task-0] "``, and ``""`` for no context."""

    connector: str = ""
    task: int | None = None

    @property
    def scope(self) -> str:
        return CONNECTOR_SCOPE if self.task is None else f"task-{self.task}"

    def __bool__(self) -> bool:
        return bool(self.connector)

    def __str__(self) -> str:
        return f"[{escape_controls(self.connector)}|{self.scope}] " if self.connector else ""


NO_CONTEXT = LogContext()

_CONTROLS = {
    code: {0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"}.get(code, f"\\x{code:02x}")
    for code in [*range(0x20), *range(0x7F, 0xA0)]
}


def escape_controls(text: str) -> str:
    """``text`` with ISO control characters written as escapes (``\\n``, ``\\x1b``): a
    user-supplied string cannot start a log line of its own or drive a terminal."""
    return text.translate(_CONTROLS)


def escape_record_args(record: logging.LogRecord) -> None:
    """Escape the control characters of a record's string and exception arguments: they
    carry what users supplied (names, keys, values, error texts), while the message format and
    a traceback are the code's own and keep their lines. Done once, before formatting."""
    args = record.args
    if not args or getattr(record, "_args_escaped", False):
        return
    if isinstance(args, tuple):
        record.args = tuple(_escaped(arg) for arg in args)
    elif isinstance(args, dict):
        record.args = {key: _escaped(arg) for key, arg in args.items()}
    record._args_escaped = True


class Verbatim(str):
    """Text of the worker's own, or of its operator (the command line, the worker config),
    logged as it is: its line breaks are meant (a start-up failure's advice), and no REST
    user wrote it."""


def _escaped(arg: object) -> object:
    if isinstance(arg, Verbatim):
        return str(arg)
    if isinstance(arg, str):
        return escape_controls(arg)
    if isinstance(arg, BaseException):
        return escape_controls(str(arg))
    return arg


_current: ContextVar[LogContext] = ContextVar("connect_lite_log_context", default=NO_CONTEXT)


def current() -> LogContext:
    """The context of the code running now (``NO_CONTEXT`` outside connector and task code)."""
    return _current.get()


@contextmanager
def logging_context(connector: str, task: int | None = None) -> Iterator[LogContext]:
    """Log lines inside the block, from any logger, are about this connector (or task)."""
    context = LogContext(connector, task)
    token = _current.set(context)
    try:
        yield context
    finally:
        _current.reset(token)


class ContextFilter(logging.Filter):
    """Adds ``connector_context`` (a LogContext) to each record, from the emitting thread.

    A record that already has one (``extra={"connector_context": ...}``) keeps it. Put it on
    handlers, not loggers: a logger's filters do not see records from its children."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not isinstance(getattr(record, "connector_context", None), LogContext):
            record.connector_context = _current.get()
        escape_record_args(record)
        return True


__all__ = [
    "NO_CONTEXT",
    "ContextFilter",
    "LogContext",
    "Verbatim",
    "current",
    "escape_controls",
    "escape_record_args",
    "logging_context",
]
