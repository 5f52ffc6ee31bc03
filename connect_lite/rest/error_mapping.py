"""The one place that maps exceptions to HTTP statuses and Kafka's error body."""

from __future__ import annotations

import logging

from flask import Flask, Response, jsonify
from werkzeug.exceptions import HTTPException, MethodNotAllowed

from connect_lite.api.errors import (
    AlreadyExistsError,
    BadRequestError,
    ConfigError,
    ConnectError,
    ForbiddenError,
    NotFoundError,
    TimeoutError_,
)
from connect_lite.control.herder_api import STOPPING_ERRORS, WorkerStartingError

log = logging.getLogger(__name__)


class UnauthorizedError(ConnectError):
    """Missing or wrong credentials (401, with a ``WWW-Authenticate`` challenge)."""


STATUS_CODES: tuple[tuple[type[Exception], int], ...] = (
    (UnauthorizedError, 401),
    (NotFoundError, 404),
    (AlreadyExistsError, 409),
    (BadRequestError, 400),
    (ConfigError, 400),
    (ForbiddenError, 403),
    (TimeoutError_, 500),
    (WorkerStartingError, 503),
    *((error, 503) for error in STOPPING_ERRORS),
)
"""Domain error -> HTTP status; anything not listed is a 500."""


def status_code(exc: Exception) -> int:
    """The HTTP status for an exception raised while serving a request."""
    if isinstance(exc, HTTPException):
        return exc.code or 500
    for error_type, code in STATUS_CODES:
        if isinstance(exc, error_type):
            return code
    return 500


def error_body(exc: Exception) -> dict[str, object]:
    """Kafka's ``{"error_code", "message"}``; routing errors use Jersey's ``HTTP 404 Not Found``."""
    code = status_code(exc)
    if isinstance(exc, HTTPException):
        message: str | None = f"HTTP {code} {exc.name}"
    else:
        message = str(exc) or None
    return {"error_code": code, "message": message}


def error_response(exc: Exception) -> Response:
    """The JSON response for any exception; unexpected ones are logged with their traceback,
    client errors (4xx) only at DEBUG."""
    body = error_body(exc)
    code = status_code(exc)
    if code < 500:
        log.debug("Client error in REST call: %s", exc, exc_info=exc)
    elif not isinstance(exc, (HTTPException, ConnectError)):
        log.error("Uncaught exception in REST call: %s", exc, exc_info=exc)
    response = jsonify(body)
    response.status_code = code
    if isinstance(exc, MethodNotAllowed) and exc.valid_methods:
        response.headers["Allow"] = ", ".join(exc.valid_methods)
    return response


def register(app: Flask) -> None:
    """Route every exception a handler or the router raises through ``error_response``."""
    app.register_error_handler(Exception, error_response)
