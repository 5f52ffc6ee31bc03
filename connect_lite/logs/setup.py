"""The worker's log output: Kafka's layout and level names as text, or one JSON object a line.

Text, as Kafka's ``connect-log4j2.properties`` lays it out (one line)::

    [2026-11-24 05:00:00,123] INFO [my-connector|task-0] Source task started
    (connect_lite.task.my-connector:104)

Called once by the command line, before the worker starts: the worker adds its secret
redaction to the root logger's handlers when it starts, so every handler must be in place by
then.
"""

from __future__ import annotations

import json
import logging
import logging.config
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from connect_lite.api.errors import ConfigError
from connect_lite.logs.context import ContextFilter, LogContext, current
from connect_lite.logs.loggers import LEVELS, TRACE

LOG_FORMATS = ("text", "json")
LOG_LEVELS = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")
"""The levels the command line takes: log4j's names."""

TEXT_FORMAT = "[%(asctime)s] %(levelname)s %(connector_context)s%(message)s (%(name)s:%(lineno)d)"
"""Kafka's ``[%d] %p %X{connector.context}%m (%c:%L)%n``."""

HANDLER_NAME = "connect-lite"
"""The name of the handler ``configure_logging`` installs (and replaces when called again)."""

_KAFKA_LEVEL_NAMES = {"WARNING": "WARN", "CRITICAL": "FATAL"}
_PYTHON_LEVELS = {name: level for name, level in LEVELS.items() if name not in ("ALL", "OFF")}
"""The levels --log-level takes: log4j's names, as PUT /admin/loggers does, less ALL and OFF."""


class LogConfigError(ConfigError):
    """The log settings cannot be applied: an unknown level or format, or a bad config file."""


def kafka_level_name(record: logging.LogRecord) -> str:
    """The record's level as log4j names it: WARN and FATAL for Python's WARNING and CRITICAL."""
    return _KAFKA_LEVEL_NAMES.get(record.levelname, record.levelname)


def _context_of(record: logging.LogRecord) -> LogContext:
    context = getattr(record, "connector_context", None)
    if not isinstance(context, LogContext):  # no ContextFilter on this handler
        context = current()
        record.connector_context = context
    return context


class KafkaFormatter(logging.Formatter):
    """Kafka's text layout; any ``%``-format may use ``%(connector_context)s``."""

    def __init__(self, fmt: str = TEXT_FORMAT, datefmt: str | None = None) -> None:
        super().__init__(fmt, datefmt)

    def format(self, record: logging.LogRecord) -> str:
        _context_of(record)
        python_name = record.levelname
        record.levelname = kafka_level_name(record)  # for this handler only: restored below
        try:
            return super().format(record)
        finally:
            record.levelname = python_name


class JsonFormatter(logging.Formatter):
    """One JSON object a line: timestamp, level, logger, line, thread, message; connector,
    task and context when set; exception (the traceback's text) and stack when any."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "timestamp": datetime.fromtimestamp(record.created)
            .astimezone()
            .isoformat(timespec="milliseconds"),
            "level": kafka_level_name(record),
            "logger": record.name,
            "line": record.lineno,
            "thread": record.threadName,
            "message": record.getMessage(),
        }
        context = _context_of(record)
        if context:
            line["connector"] = context.connector
            if context.task is not None:
                line["task"] = context.task
            line["context"] = f"{context.connector}|{context.scope}"
        # The redaction filter may have put a concealed traceback in exc_text already: use it.
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def formatter_for(log_format: str) -> logging.Formatter:
    """The formatter of ``text`` or ``json`` (any case)."""
    chosen = log_format.strip().lower()
    if chosen == "json":
        return JsonFormatter()
    if chosen == "text":
        return KafkaFormatter()
    raise LogConfigError(f"Unknown log format '{log_format}': use text or json")


def python_level(level: str) -> int:
    """The Python level of a log4j level name (any case)."""
    value = _PYTHON_LEVELS.get(level.strip().upper())
    if value is None:
        raise LogConfigError(f"Unknown log level '{level}': use one of {', '.join(LOG_LEVELS)}")
    return value


def configure_logging(
    level: str | None = None, log_format: str = "text", config_file: str | None = None
) -> None:
    """Set up the root logger: a stderr handler in ``log_format``, or ``config_file``.

    ``config_file`` is a :func:`logging.config.dictConfig` dictionary in JSON; loggers that
    exist already stay enabled unless it says otherwise, and its handlers without a
    formatter get ``log_format``'s. ``level`` (a log4j name) sets the root level, over the
    file's; without either it is INFO. Every handler gets the ``ContextFilter``.

    Raises LogConfigError (one line) if the file cannot be read or applied."""
    logging.addLevelName(TRACE, "TRACE")
    formatter = formatter_for(log_format)
    threshold = None if level is None else python_level(level)
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == HANDLER_NAME]:
        root.removeHandler(old)
        old.close()
    if config_file is not None:
        _apply_dict_config(config_file)
    else:
        default = logging.StreamHandler(sys.stderr)
        default.set_name(HANDLER_NAME)
        root.addHandler(default)
        if threshold is None:
            threshold = logging.INFO
    if threshold is not None:
        root.setLevel(threshold)
    for handler in _all_handlers():
        if handler.formatter is None:
            handler.setFormatter(formatter)
        if not any(isinstance(f, ContextFilter) for f in handler.filters):
            handler.addFilter(ContextFilter())


def _apply_dict_config(path: str) -> None:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise LogConfigError(f"cannot read log config file {path}: {_reason(error)}") from None
    try:
        config = json.loads(text)
    except ValueError as error:
        raise LogConfigError(f"log config file {path} is not valid JSON: {error}") from None
    if not isinstance(config, dict):
        raise LogConfigError(f"log config file {path} must hold a JSON object (a dictConfig)")
    config.setdefault("version", 1)
    config.setdefault("disable_existing_loggers", False)
    try:
        logging.config.dictConfig(config)
    except (ValueError, TypeError, AttributeError, ImportError) as error:
        raise LogConfigError(f"log config file {path} cannot be applied: {error}") from None


def _reason(error: BaseException) -> str:
    """``No such file or directory`` rather than ``[Errno 2] No such file or directory: 'x'``."""
    return getattr(error, "strerror", None) or str(error)


def _all_handlers() -> list[logging.Handler]:
    """The handlers of the root logger and of every other logger, each once."""
    loggers: list[logging.Logger] = [logging.getLogger()]
    loggers += [
        lg
        for lg in list(logging.Logger.manager.loggerDict.values())
        if isinstance(lg, logging.Logger)
    ]
    seen: dict[int, logging.Handler] = {}
    for logger in loggers:
        for handler in logger.handlers:
            seen.setdefault(id(handler), handler)
    return list(seen.values())


__all__ = [
    "LOG_FORMATS",
    "LOG_LEVELS",
    "TEXT_FORMAT",
    "JsonFormatter",
    "KafkaFormatter",
    "LogConfigError",
    "configure_logging",
    "formatter_for",
    "kafka_level_name",
    "python_level",
]
