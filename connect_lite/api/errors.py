"""The exception hierarchy: one root, small subclasses, no HTTP in any of them."""

from __future__ import annotations


class ConnectError(Exception):
    """Root of every error connect-lite raises on purpose."""


class RetriableError(ConnectError):
    """The operation failed for a passing reason and may be retried later."""


class DataError(ConnectError):
    """A record cannot be converted or transformed."""


class ConfigError(ConnectError):
    """A configuration is invalid. ``errors`` maps keys to their messages."""

    def __init__(self, message: str, errors: dict[str, list[str]] | None = None) -> None:
        super().__init__(message)
        self.errors = errors or {}


class NotFoundError(ConnectError):
    """A connector, task, plugin or status does not exist."""


class AlreadyExistsError(ConnectError):
    """A connector with that name exists already."""


class BadRequestError(ConnectError):
    """The request is malformed or not allowed in the current state."""


class ForbiddenError(ConnectError):
    """The operation is disabled by the worker's configuration."""


class TimeoutError_(ConnectError):
    """An operation did not finish in time."""


__all__ = [
    "AlreadyExistsError",
    "BadRequestError",
    "ConfigError",
    "ConnectError",
    "DataError",
    "ForbiddenError",
    "NotFoundError",
    "RetriableError",
    "TimeoutError_",
]
