"""SparkRetry: a batch that met an unreachable Spark cluster is kept and runs again with
backoff; the status says so once per reason, and is cleared when a batch runs; a stopping
task ends the retries without delivering the batch."""

from __future__ import annotations

import logging

import pytest

from connect_lite.dataplane.spark_retry import SparkRetry
from connect_lite.pipeline.cluster_watch import Backoff
from connect_lite.pipeline.record_errors import JobCancelledError
from connect_lite.pipeline.session import SparkStartError, SparkUnavailableError

LOG = logging.getLogger("test.spark_retry")
LOST = SparkUnavailableError("Spark is unreachable: no executor for 30 s")


class Scripted:
    """A batch job that raises the queued errors in turn, then returns the batch's length."""

    def __init__(self, errors: list[Exception]) -> None:
        self.errors = errors
        self.runs: list[list[int]] = []

    def __call__(self, batch: list[int]) -> int:
        self.runs.append(list(batch))
        if self.errors:
            raise self.errors.pop(0)
        return len(batch)


def retry(
    job: Scripted, stop_after: int | None = None
) -> tuple[SparkRetry[int, int], list[object], list[float]]:
    reports: list[object] = []
    waits: list[float] = []

    def wait(seconds: float) -> bool:
        waits.append(seconds)
        return stop_after is not None and len(waits) >= stop_after

    def report(error: BaseException | None) -> None:
        reports.append(None if error is None else str(error))

    return SparkRetry(job, report, wait, LOG, Backoff(1.0, 8.0)), reports, waits


def test_the_same_batch_runs_again_with_backoff_until_spark_is_back() -> None:
    job = Scripted([LOST, LOST, LOST, LOST, LOST])
    run, reports, waits = retry(job)
    assert run([1, 2, 3]) == 3
    assert job.runs == [[1, 2, 3]] * 6  # nothing skipped: the batch itself, again
    assert waits == [1, 2, 4, 8, 8]
    assert reports == [str(LOST), None]  # said once while unreachable, cleared once back
    assert run.unreachable is None


def test_a_new_reason_is_reported_and_the_backoff_restarts_after_a_success() -> None:
    other = SparkUnavailableError("Spark is unreachable: the application was stopped")
    job = Scripted([LOST, other])
    run, reports, waits = retry(job)
    run([1])
    job.errors = [LOST]
    run([2])
    assert reports == [str(LOST), str(other), None, str(LOST), None]
    assert waits == [1, 2, 1]


def test_no_report_when_spark_was_reachable() -> None:
    run, reports, waits = retry(Scripted([]))
    assert run([1, 2]) == 2
    assert (reports, waits) == ([], [])


def test_other_errors_are_not_retried() -> None:
    failed = SparkStartError("Spark failed to start: bad conf")  # not a passing failure
    run, reports, _ = retry(Scripted([failed]))
    with pytest.raises(SparkStartError):
        run([1])
    assert reports == []


def test_a_stopping_task_ends_the_retries_without_the_batch() -> None:
    job = Scripted([LOST] * 10)
    run, _, waits = retry(job, stop_after=2)
    with pytest.raises(JobCancelledError) as stopped:
        run([1])
    assert stopped.value.__cause__ is LOST
    assert len(job.runs) == 2 and waits == [1, 2]
