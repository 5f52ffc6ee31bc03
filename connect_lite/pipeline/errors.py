"""Structured per-record errors from a stage, and the exceptions the driver raises for them."""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import Any

from connect_lite.api import errors as api_errors
from connect_lite.api.errors import ConnectError, DataError

KEY_CONVERTER = "KEY_CONVERTER"
VALUE_CONVERTER = "VALUE_CONVERTER"
HEADER_CONVERTER = "HEADER_CONVERTER"
TRANSFORMATION = "TRANSFORMATION"
PREDICATE = "PREDICATE"


class StageCancelledError(ConnectError):
    """The stage's Spark job was cancelled (its task is stopping)."""


class StageExecutionError(ConnectError):
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


def _qualified(obj: Any) -> str:
    klass = obj if isinstance(obj, type) else type(obj)
    return f"{klass.__module__}.{klass.__qualname__}"


def capture(
    exc: BaseException, index: int | None, stage: str, component: Any, where: str = ""
) -> RecordError:
    """A RecordError for an exception caught inside the stage (call from the except block)."""
    name = component if isinstance(component, str) else _qualified(component)
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
