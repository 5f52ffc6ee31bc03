"""Runtime log levels over Python's logging, in the terms of Kafka Connect's /admin/loggers."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from connect_lite.api.errors import NotFoundError
from connect_lite.config.resolution import Concealer

ROOT = "root"

TRACE = 5
"""Python has no TRACE level; connect-lite uses 5, below DEBUG."""

OFF = logging.CRITICAL + 50
"""A threshold above every level Python logs at: nothing passes it."""

ALL = 1
"""The lowest threshold that is not NOTSET (0 means "inherit" on a non-root logger)."""

# log4j2 level names and the Python threshold each one stands for, lowest first.
LEVELS: dict[str, int] = {
    "ALL": ALL,
    "TRACE": TRACE,
    "DEBUG": logging.DEBUG,
    "INFO": logging.INFO,
    "WARN": logging.WARNING,
    "ERROR": logging.ERROR,
    "FATAL": logging.CRITICAL,
    "OFF": OFF,
}


@dataclass(frozen=True)
class LoggerLevel:
    """A logger's effective level (a log4j name) and when the REST API last changed it."""

    level: str
    last_modified: int | None


def level_name(python_level: int) -> str:
    """The log4j name for a Python threshold: the lowest log4j level it still lets through."""
    for name, value in LEVELS.items():
        if python_level <= value:
            return name
    return "OFF"


def parse_level(level: str) -> int:
    """The Python threshold for a log4j level name (any case); 404 as Kafka does if unknown."""
    value = LEVELS.get(level.upper())
    if value is None:
        raise NotFoundError(f"invalid log level '{level}'.")
    return value


class PeerLoggers(Protocol):
    """The loggers of another process of the same worker (the data plane's): listed and
    changed with this process's own."""

    def loggers_all(self) -> dict[str, LoggerLevel]: ...

    def loggers_set(self, namespace: str, level: str) -> list[str]: ...


class Loggers:
    """Reads and changes the levels of this process's loggers, and of its ``peer``'s when
    it has one; remembers when each changed."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._last_modified: dict[str, int] = {}
        self._lock = threading.Lock()
        self.peer: PeerLoggers | None = None
        logging.addLevelName(TRACE, "TRACE")

    def all(self) -> dict[str, LoggerLevel]:
        """Every existing logger except those turned OFF; the root logger is named "root"."""
        levels = dict(self.peer.loggers_all()) if self.peer is not None else {}
        levels.update({name: self._level_of(name, lg) for name, lg in _existing().items()})
        return {name: level for name, level in sorted(levels.items()) if level.level != "OFF"}

    def get(self, name: str) -> LoggerLevel:
        """One existing logger's level; never creates a logger. 404 if it does not exist."""
        key = ROOT if name.lower() == ROOT else name
        logger = _existing().get(key)
        if logger is not None:
            return self._level_of(key, logger)
        found = self.peer.loggers_all().get(key) if self.peer is not None else None
        if found is None:
            raise NotFoundError(f"Logger {name} not found.")
        return found

    def set_level(self, namespace: str, level: str) -> list[str]:
        """Set ``namespace`` and its descendants to ``level``; return the sorted names that changed.

        Loggers already at that level are left alone and keep their last-modified time, so
        repeating a request changes nothing.
        """
        threshold = parse_level(level)
        target = level_name(threshold)
        with self._lock:
            loggers = _namespace(namespace)
            changed = [
                n for n, lg in loggers.items() if level_name(lg.getEffectiveLevel()) != target
            ]
            now = int(self._clock() * 1000)
            for name in changed:
                loggers[name].setLevel(threshold)
                self._last_modified[name] = now
        if self.peer is not None:
            changed = list({*changed, *self.peer.loggers_set(namespace, level)})
        return sorted(changed)

    def _level_of(self, name: str, logger: logging.Logger) -> LoggerLevel:
        return LoggerLevel(level_name(logger.getEffectiveLevel()), self._last_modified.get(name))


class RedactingFilter(logging.Filter):
    """Conceals the worker's secrets in a record's message and traceback, before any handler
    formats it: resolved provider values show as their references, passwords as [hidden]."""

    def __init__(self, redactor: Concealer) -> None:
        super().__init__()
        self._redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        if not self._redactor:
            return True
        try:
            message = record.getMessage()
        except Exception:
            return True  # a bad format: the handler reports it, as without this filter
        record.msg = self._redactor.conceal(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self._redactor.conceal(record.exc_text)
        if record.stack_info:
            record.stack_info = self._redactor.conceal(record.stack_info)
        return True


def install_redaction(redactor: Concealer) -> Callable[[], None]:
    """Adds a RedactingFilter to every handler of the root logger; returns its undo."""
    redacting = RedactingFilter(redactor)
    handlers = list(logging.getLogger().handlers)
    for handler in handlers:
        handler.addFilter(redacting)

    def remove() -> None:
        for handler in handlers:
            handler.removeFilter(redacting)

    return remove


def _existing() -> dict[str, logging.Logger]:
    """The root logger and every logger created so far (placeholders are not loggers)."""
    found: dict[str, logging.Logger] = {ROOT: logging.getLogger()}
    for name, logger in list(logging.Logger.manager.loggerDict.items()):
        if isinstance(logger, logging.Logger):
            found[name] = logger
    return found


def _namespace(namespace: str) -> dict[str, logging.Logger]:
    """The loggers a level change on ``namespace`` applies to; creates the namespace logger."""
    if namespace.lower() == ROOT:
        return _existing()
    logging.getLogger(namespace)
    prefix = namespace + "."
    return {
        name: logger
        for name, logger in _existing().items()
        if name == namespace or name.startswith(prefix)
    }
