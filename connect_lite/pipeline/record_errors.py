"""Structured per-record errors from a stage, and the exceptions the driver raises for them."""

from __future__ import annotations

import random
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from connect_lite.api import errors as api_errors
from connect_lite.api.errors import ConnectError, DataError, RetriableError
from connect_lite.plugins.isolation import public_class_name

KEY_CONVERTER = "KEY_CONVERTER"
VALUE_CONVERTER = "VALUE_CONVERTER"
HEADER_CONVERTER = "HEADER_CONVERTER"
TRANSFORMATION = "TRANSFORMATION"
PREDICATE = "PREDICATE"
TASK_PUT = "TASK_PUT"
"""Kafka's Stage names; PREDICATE is ours (Kafka runs predicates in its TRANSFORMATION stage)."""

RETRY_DELAY_MIN_MS = 300
"""Kafka's first backoff after a RetriableError; each further retry doubles it."""


class JobCancelledError(ConnectError):
    """The stage's Spark job was cancelled (its task is stopping)."""


class JobFailedError(ConnectError):
    """The Spark job of a stage failed for a reason that is not one record's fault."""


@dataclass(frozen=True)
class RecordError:
    """One failure inside a stage: which record, which stage and component, and why.

    ``index`` is the record's position in the batch (None for a failure that is not
    about one record, such as a factory that raised). ``error_class`` is the
    connect_lite.api.errors class to raise for it: the original exception's nearest
    ConnectError ancestor, or DataError for any other exception.
    """

    index: int | None
    stage: str
    component: str
    exception_class: str
    message: str
    trace: str
    error_class: str = "DataError"
    where: str = ""

    def describe(self) -> str:
        where = f" for record {self.where}" if self.where else ""
        return (
            f"Error in stage {self.stage} ({self.component}){where}: "
            f"{self.exception_class}: {self.message}"
        )

    def to_exception(self) -> ConnectError:
        """The exception the driver raises: message names the stage, ``trace`` attached."""
        cls = getattr(api_errors, self.error_class, DataError)
        if not (isinstance(cls, type) and issubclass(cls, ConnectError)):
            cls = DataError
        try:
            exc = cls(self.describe())
        except TypeError:  # a subclass with another constructor signature
            exc = DataError(self.describe())
        exc.trace = self.trace  # type: ignore[attr-defined]
        exc.stage = self.stage  # type: ignore[attr-defined]
        exc.record_index = self.index  # type: ignore[attr-defined]
        exc.record_error = self  # type: ignore[attr-defined]
        return exc


def _connect_class_name(exc: BaseException) -> str:
    for klass in type(exc).__mro__:
        if klass.__module__ == api_errors.__name__ and issubclass(klass, ConnectError):
            return klass.__name__
    return "DataError"


def _qualified(obj: object) -> str:
    klass = obj if isinstance(obj, type) else type(obj)
    return f"{klass.__module__}.{klass.__qualname__}"


def capture(
    exc: BaseException, index: int | None, stage: str, component: object, where: str = ""
) -> RecordError:
    """A RecordError for an exception caught inside the stage (call from the except block).

    ``component`` is the plugin (or its class name): its class name as the listings show it
    (Kafka's for a built-in) becomes the error's ``class.name``."""
    if isinstance(component, str):
        name = component
    else:
        name = public_class_name(component if isinstance(component, type) else type(component))
    error_class = _connect_class_name(exc)
    if index is None and error_class == "DataError" and not isinstance(exc, DataError):
        error_class = "ConnectError"  # e.g. a factory that raised: not a data problem
    return RecordError(
        index=index,
        stage=stage,
        component=name,
        exception_class=_qualified(exc),
        message=str(exc),
        trace="".join(traceback.format_exception(exc)),
        error_class=error_class,
        where=where,
    )


@dataclass
class Retry:
    """Kafka's ``errors.retry.timeout`` loop for operations that raise RetriableError.

    Backoff starts at 300 ms and doubles; past ``delay_max_ms`` it is a random delay below
    that cap (as Kafka does), and never beyond the deadline. ``timeout_ms`` -1 retries
    forever. ``retries`` counts the retries made, so the driver can report total-retries.
    """

    timeout_ms: int
    delay_max_ms: int
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    rand: Callable[[], float] = random.random
    retries: int = field(default=0)

    @property
    def enabled(self) -> bool:
        return self.timeout_ms != 0

    def delay_ms(self, attempt: int, remaining_ms: float) -> float:
        """The pause before retry number ``attempt`` (1-based)."""
        delay = float(RETRY_DELAY_MIN_MS << min(attempt - 1, 40))
        if delay > self.delay_max_ms:
            delay = self.rand() * self.delay_max_ms
        return max(0.0, min(delay, remaining_ms))

    def recover(self, error: BaseException, call: Callable[..., Any], *args: Any) -> Any:
        """After ``call(*args)`` raised ``error``: retry while allowed, return its result.

        Raises the last error when it is not retriable, or the timeout is spent."""
        if not self.enabled or not isinstance(error, RetriableError):
            raise error
        start = self.clock()
        attempt = 0
        while True:
            elapsed_ms = (self.clock() - start) * 1000
            if self.timeout_ms >= 0 and elapsed_ms >= self.timeout_ms:
                raise error
            attempt += 1
            remaining = float("inf") if self.timeout_ms < 0 else self.timeout_ms - elapsed_ms
            self.sleep(self.delay_ms(attempt, remaining) / 1000)
            self.retries += 1
            try:
                return call(*args)
            except RetriableError as again:
                error = again
