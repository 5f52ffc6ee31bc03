"""Batching for the task loops: poll a batch, and run one in its stage while polling the next."""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")
"""What a task polls: SourceRecords, or messages from the consumer."""
Result = TypeVar("Result")
"""What the stage makes of a batch."""


@dataclass(frozen=True)
class Batching:
    """How records are grouped into one Spark job: large under load, small when trickling."""

    max_records: int = 200_000
    max_wait_ms: int = 500


DEFAULT_BATCHING = Batching()


def collect_batch(
    fetch: Callable[[int, float], Sequence[T] | None],
    batching: Batching,
    stopping: Callable[[], bool],
) -> list[T]:
    """Poll one batch: call ``fetch(room left, seconds left)`` until it returns nothing, the
    batch is full, the wait is over or the task stops. The first call comes whatever the wait;
    a fetch that must not wait past the deadline returns nothing once no seconds are left."""
    batch: list[T] = []
    deadline = time.monotonic() + batching.max_wait_ms / 1000
    while not stopping() and len(batch) < batching.max_records:
        got = fetch(batching.max_records - len(batch), deadline - time.monotonic())
        if not got:
            break
        batch.extend(got)
        if time.monotonic() >= deadline:
            break
    return batch


@dataclass(frozen=True)
class _InFlight(Generic[T, Result]):
    batch: list[T]
    result: Future[Result]


class BatchPipeline(Generic[T, Result]):
    """Double buffering: one batch runs in the stage, on a thread of its own, while the task
    polls the next one; the task delivers each result on its own thread, in order. The stage
    runs in a copy of the caller's context (its logging context).

    The stage waits on Spark's JVM and Python worker processes, so polling and the Spark
    job overlap for real."""

    def __init__(
        self,
        name: str,
        run: Callable[[list[T]], Result],
        deliver: Callable[[list[T], Result], None],
    ) -> None:
        self._pool = ThreadPoolExecutor(1, thread_name_prefix=name)
        self._run = run
        self._deliver = deliver
        self._in_flight: _InFlight[T, Result] | None = None

    def advance(self, batch: list[T]) -> bool:
        """Start ``batch`` in the stage (unless it is empty), then deliver the batch that was
        in flight, once its stage is done; whether there was one."""
        previous, self._in_flight = self._in_flight, None
        if batch:
            # In the task's context (its log lines carry [connector|task-N]), on the stage thread.
            run_in_context = contextvars.copy_context().run
            self._in_flight = _InFlight(batch, self._pool.submit(run_in_context, self._run, batch))
        if previous is None:
            return False
        self._deliver(previous.batch, previous.result.result())
        return True

    def finish(self) -> None:
        """Deliver the batch in flight, if any, once its stage is done."""
        previous, self._in_flight = self._in_flight, None
        if previous is not None:
            self._deliver(previous.batch, previous.result.result())

    def drop(self) -> list[T]:
        """Forget the batch in flight, once its stage is done, without delivering it; the
        batch (empty if none was in flight)."""
        dropped, self._in_flight = self._in_flight, None
        if dropped is None:
            return []
        dropped.result.exception()  # wait for the stage; its result is not wanted
        return dropped.batch

    def close(self) -> None:
        """Stop the stage's thread: a batch still in the stage is waited for, not delivered."""
        self._pool.shutdown(wait=True, cancel_futures=True)
