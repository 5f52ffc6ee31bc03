"""Batching for the task loops: poll a batch, and run one as a batch job while polling the next."""

from __future__ import annotations

import contextvars
import gc
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Generic, TypeVar

from connect_lite.config.batching import Batching


def tune_garbage_collector() -> None:
    """Batches of 100,000s of short-lived records make CPython's default thresholds run a
    full collection many times a batch, rescanning every long-lived object; measured, that
    was a third of a batch job's time. Collect less often, and leave start-up objects out."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)


T = TypeVar("T")
"""What a task polls: SourceRecords, or messages from the consumer."""
Result = TypeVar("Result")
"""What the batch job makes of a batch."""


IN_FLIGHT_SLICE_S = 0.05
"""While a batch is in its batch job, the longest one fetch waits: the task notices within this
that the batch job is done, and hands the finished batch on."""


def collect_batch(
    fetch: Callable[[int, float], Sequence[T] | None],
    batching: Batching,
    stopping: Callable[[], bool],
    busy: Callable[[], bool] = lambda: False,
    size: Callable[[Sequence[T]], int] = len,
    weigh: Callable[[Sequence[T]], int] | None = None,
) -> list[T]:
    """Poll one batch, latency first: ``fetch(room left, seconds it may wait)``.

    - Nothing in the batch job (``busy()`` false): the first fetch may wait up to
      ``max_wait_ms`` for a record; then fetches get 0 seconds (what is waiting now), and the
      batch goes once one finds nothing.
    - A batch in the batch job: fetches wait at most IN_FLIGHT_SLICE_S each and the batch grows
      until the batch job is done; then one more fetch takes what is waiting, and the batch goes
      (even empty, so the finished one is handed on at once).

    No fixed window sits between a record and its job, and under load batches fill up: they
    grow for as long as the job before them runs. It stops when the batch is full or the
    task stops. ``size`` counts what a batch holds (offset ranges count their offsets);
    ``weigh`` gives its bytes, when the records are in this process: the batch also stops
    once it holds ``max_bytes`` (it may pass it by one fetch)."""
    batch: list[T] = []
    was_busy = busy()
    held = 0
    held_bytes = 0
    while not stopping() and held < batching.max_records and held_bytes < batching.max_bytes:
        in_flight = busy()
        room = batching.max_records - held
        if was_busy and not in_flight:  # the batch job is done: hand it on, with what is waiting
            batch.extend(fetch(room, 0.0) or ())
            break
        idle_wait = 0.0 if batch else batching.max_wait_ms / 1000
        wait = IN_FLIGHT_SLICE_S if in_flight else idle_wait
        got = fetch(room, wait)
        if got:
            batch.extend(got)
            held += size(got)
            if weigh is not None:
                held_bytes += weigh(got)
        elif not in_flight:
            break
    return batch


@dataclass(frozen=True)
class _InFlight(Generic[T, Result]):
    batch: list[T]
    result: Future[Result]


class BatchPipeline(Generic[T, Result]):
    """Double buffering: one batch runs in the batch job, on a thread of its own, while the task
    polls the next one; the task delivers each result on its own thread, in order. The batch job
    runs in a copy of the caller's context (its logging context).

    The batch job waits on Spark's JVM and Python worker processes, so polling and the Spark
    job overlap for real."""

    def __init__(
        self,
        name: str,
        run: Callable[[list[T]], Result],
        deliver: Callable[[list[T], Result], None],
        discard: Callable[[Result], None] = lambda _result: None,
    ) -> None:
        self._pool = ThreadPoolExecutor(1, thread_name_prefix=name)
        self._run = run
        self._deliver = deliver
        self._discard = discard  # told a result that is not delivered
        self._in_flight: _InFlight[T, Result] | None = None

    @property
    def busy(self) -> bool:
        """Whether a batch is in the batch job (not yet done)."""
        return self._in_flight is not None and not self._in_flight.result.done()

    def advance(self, batch: list[T]) -> bool:
        """Start ``batch`` in the batch job (unless it is empty), then deliver the batch that was
        in flight, once its batch job is done; whether there was one."""
        previous, self._in_flight = self._in_flight, None
        if batch:
            # In the task's context (its log lines carry [connector|task-N]), on the job's thread.
            run_in_context = contextvars.copy_context().run
            self._in_flight = _InFlight(batch, self._pool.submit(run_in_context, self._run, batch))
        if previous is None:
            return False
        self._deliver(previous.batch, previous.result.result())
        return True

    def finish(self) -> None:
        """Deliver the batch in flight, if any, once its batch job is done."""
        previous, self._in_flight = self._in_flight, None
        if previous is not None:
            self._deliver(previous.batch, previous.result.result())

    def drop(self) -> list[T]:
        """Forget the batch in flight, once its batch job is done, without delivering it; the
        batch (empty if none was in flight)."""
        dropped, self._in_flight = self._in_flight, None
        if dropped is None:
            return []
        self._forget(dropped.result)  # wait for the batch job; its result is not wanted
        return dropped.batch

    def _forget(self, result: Future[Result]) -> None:
        if not result.cancelled() and result.exception() is None:
            self._discard(result.result())

    def close(self) -> None:
        """Stop the job's thread: a batch still in its batch job is waited for, not delivered,
        and forgotten (a later ``finish`` delivers nothing)."""
        self._pool.shutdown(wait=True, cancel_futures=True)
        dropped, self._in_flight = self._in_flight, None
        if dropped is not None and not dropped.result.cancelled():
            self._forget(dropped.result)
