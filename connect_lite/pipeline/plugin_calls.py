"""Plugin calls on a chunk's records, each guarded: a failing record becomes a RecordError.

Runs inside Spark's Python workers. A failing record is recorded and the chunk goes on. A
converter that offers a vectorized form (``from_connect_batch(topic, schema, values)`` or
``to_connect_batch(topic, values)``) is called once per run of records with the same topic
and schema; if that call raises, the run is redone record by record to find the culprit.

A call that raises RetriableError is retried (``errors.retry.timeout``) only in the except
branch, so records that do not fail pay nothing for it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import Enum
from typing import Any, Final, Literal

from connect_lite.api.components import Converter
from connect_lite.api.data import Schema
from connect_lite.api.errors import RetriableError
from connect_lite.api.records import R
from connect_lite.pipeline.record_errors import (
    PREDICATE,
    TRANSFORMATION,
    RecordError,
    Retry,
    capture,
)
from connect_lite.protocol.job_spec import Chain


class Outcome(Enum):
    FAILED = "failed"


FAILED: Final = Outcome.FAILED
"""What apply_transforms returns for a record whose chain raised."""


class Failures(dict[int, RecordError]):
    """Local index -> its first error, plus the chunk's retry policy and its retry count."""

    def __init__(self, retry: Retry | None = None) -> None:
        super().__init__()
        self.retry = retry

    @property
    def retries(self) -> int:
        return self.retry.retries if self.retry is not None else 0

    def recover(self, error: Exception, call: Callable[..., Any], *args: Any) -> tuple[bool, Any]:
        """(True, result) if retrying ``call`` succeeded, else (False, the final error)."""
        retry = self.retry
        if retry is None or not retry.enabled or not isinstance(error, RetriableError):
            return False, error
        try:
            return True, retry.recover(error, call, *args)
        except Exception as final:
            return False, final

    def in_order(self) -> list[RecordError]:
        """The errors, by record position."""
        return [self[i] for i in sorted(self)]


def retry_of(comps: object) -> Retry | None:
    """The batch job's retry policy (JobSpec.retry_*), or None when retries are off."""
    spec = getattr(comps, "spec", None)
    timeout = int(getattr(spec, "retry_timeout_ms", 0) or 0)
    if not timeout:
        return None
    return Retry(timeout, int(getattr(spec, "retry_delay_max_ms", 60000)))


def apply_transforms(
    chain: Chain, record: R, index: int, failures: Failures
) -> R | Literal[Outcome.FAILED] | None:
    """Run the transform chain on one record: the new record, None (dropped) or FAILED."""
    for transform, predicate, negate in chain:
        if predicate is not None:
            try:
                applies = bool(predicate.test(record)) != negate
            except Exception as e:
                ok, out = failures.recover(e, predicate.test, record)
                if not ok:
                    failures[index] = capture(out, index, PREDICATE, predicate)
                    return FAILED
                applies = bool(out) != negate
            if not applies:
                continue
        try:
            applied = transform.apply(record)
        except Exception as e:
            ok, out = failures.recover(e, transform.apply, record)
            if not ok:
                failures[index] = capture(out, index, TRANSFORMATION, transform)
                return FAILED
            applied = out
        if applied is None:
            return None
        record = applied
    return record


def _runs(topics: Sequence[str], schemas: Sequence[Schema | None] | None) -> list[tuple[int, int]]:
    """[start, end) runs of equal topic (and schema, when given)."""
    runs, start, n = [], 0, len(topics)
    for i in range(1, n):
        if topics[i] != topics[start] or (
            schemas is not None
            and schemas[i] is not schemas[start]
            and schemas[i] != schemas[start]
        ):
            runs.append((start, i))
            start = i
    if n:
        runs.append((start, n))
    return runs


def convert_column(
    converter: Converter,
    stage: str,
    args: tuple[Sequence[Any], ...],
    indices: Sequence[int],
    failures: Failures,
) -> list[Any]:
    """Convert one column: ``args`` are (topics, [schemas,] values), aligned with ``indices``."""
    batch_name = "from_connect_batch" if len(args) == 3 else "to_connect_batch"
    one: Callable[..., Any] = getattr(
        converter, "from_connect_data" if len(args) == 3 else "to_connect_data"
    )
    batch = getattr(converter, batch_name, None)
    out: list[Any] = [None] * len(indices)
    if batch is None:
        _convert_each(one, converter, stage, args, indices, 0, len(indices), out, failures)
        return out
    for start, end in _runs(args[0], args[1] if len(args) == 3 else None):
        head = tuple(col[start] for col in args[:-1])
        try:
            result = batch(*head, args[-1][start:end])
            if len(result) != end - start:
                raise ValueError(f"{batch_name} returned {len(result)} results for {end - start}")
            out[start:end] = result
        except Exception:
            _convert_each(one, converter, stage, args, indices, start, end, out, failures)
    return out


def _convert_each(
    one: Callable[..., Any],
    converter: Converter,
    stage: str,
    args: tuple[Sequence[Any], ...],
    indices: Sequence[int],
    start: int,
    end: int,
    out: list[Any],
    failures: Failures,
) -> None:
    i = start
    cols = zip(*(col[start:end] for col in args), strict=True)
    while True:  # resumes after a failing record; the loop body stays a plain call
        try:
            for call_args in cols:
                out[i] = one(*call_args)
                i += 1
            return
        except Exception as e:
            ok, result = failures.recover(e, one, *call_args)
            if ok:
                out[i] = result
            else:
                failures.setdefault(indices[i], capture(result, indices[i], stage, converter))
            i += 1
