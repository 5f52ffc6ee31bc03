"""Samples of the worker's plain counters, named after Kafka Connect's metric groups."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from connect_lite.control.retry import StatusCounters
from connect_lite.protocol.host import TaskView
from connect_lite.protocol.states import State
from connect_lite.protocol.task_metrics import ERROR_METRICS
from connect_lite.storage.base import StatusStore

PREFIX = "kafka_connect_"
SPARK_LAST_BATCH_EXECUTORS = PREFIX + "spark_task_metrics_last_batch_executors"


@dataclass(frozen=True)
class Sample:
    """One value of one metric; ``counter`` metrics end in ``_total``."""

    name: str
    doc: str
    labels: dict[str, str]
    value: float
    counter: bool = False


@dataclass(frozen=True)
class MetricSources:
    """Where the worker's counters live: the status reporter's, the tasks', the statuses."""

    status_counters: StatusCounters
    tasks: Callable[[], Sequence[TaskView]]
    statuses: StatusStore


_STATUS_DOCS = {
    "retry": "Status writes retried after a retriable failure.",
    "failure": "Status writes dropped after the last retry, or failed for a non-retriable reason.",
    "success": "Status writes stored.",
}

_TASK_NAMES = {
    "source": ("source_record_poll", "source_record_write", "poll_batch"),
    "sink": ("sink_record_read", "sink_record_send", "put_batch"),
}

_TASK_COUNT_STATES = (State.RUNNING, State.PAUSED, State.FAILED)


def collect_samples(sources: MetricSources, connectors: Iterable[str]) -> Iterator[Sample]:
    """Every sample, in a stable order."""
    yield from _status_store(sources.status_counters)
    for task in sorted(sources.tasks(), key=lambda t: (t.connector, t.task)):
        yield from _task(task)
    for connector in connectors:
        yield from _connector(sources.statuses, connector)


def _status_store(counters: StatusCounters) -> Iterator[Sample]:
    group = PREFIX + "status_backing_store_"
    for what, value in counters.snapshot().items():
        yield Sample(f"{group}status_update_{what}_total", _STATUS_DOCS[what], {}, value, True)


def _task(task: TaskView) -> Iterator[Sample]:
    names = _TASK_NAMES.get(task.kind)
    if names is None:
        return
    labels = {"connector": task.connector, "task": str(task.task)}
    c = task.counters
    group = f"{PREFIX}{task.kind}_task_metrics_"
    records_in, records_out, batch = names
    yield Sample(
        group + records_in + "_total", "Records read by the task.", labels, c.records_in, True
    )
    yield Sample(
        group + records_out + "_total", "Records written by the task.", labels, c.records_out, True
    )
    yield Sample(
        group + batch + "_avg_time_ms", "Average batch time (ms).", labels, c.batches.avg_ms
    )
    yield Sample(
        group + batch + "_max_time_ms", "Maximum batch time (ms).", labels, c.batches.max_ms
    )
    errors = PREFIX + "task_error_metrics_"
    for name, value in task.errors.items():
        yield Sample(errors + name.replace("-", "_"), ERROR_METRICS[name], labels, value)
    commits = PREFIX + "connector_task_metrics_offset_commit_"
    yield Sample(
        commits + "success_total", "Offset commits that succeeded.", labels, c.commit_success, True
    )
    yield Sample(
        commits + "failure_total", "Offset commits that failed.", labels, c.commit_failure, True
    )
    yield from _last_batch(task, labels)


def _last_batch(task: TaskView, labels: dict[str, str]) -> Iterator[Sample]:
    """Where the task's last batch ran on Spark: its scheduler pool (a label) and how many
    executors ran it; nothing before its first batch or while Spark's store lags."""
    batch = task.last_batch
    if batch is None or batch.executors is None:
        return
    yield Sample(
        SPARK_LAST_BATCH_EXECUTORS,
        "Executors that ran the Spark tasks of the task's last batch, in its scheduler pool.",
        {**labels, "scheduler_pool": batch.pool},
        batch.executors,
    )


def _connector(statuses: StatusStore, connector: str) -> Iterator[Sample]:
    status = statuses.get_connector(connector)
    if status is not None:
        yield Sample(
            PREFIX + "connector_metrics_status",
            "The connector's status (1 for the current one).",
            {"connector": connector, "status": status.state.value.lower()},
            1,
        )
    states = [t.state for t in statuses.get_tasks(connector)]
    for state in _TASK_COUNT_STATES:
        name = state.value.lower()
        yield Sample(
            f"{PREFIX}connect_worker_metrics_connector_{name}_task_count",
            f"Tasks of the connector in state {state.value}.",
            {"connector": connector},
            states.count(state),
        )


__all__ = ["MetricSources", "Sample", "collect_samples"]
