"""GET /metrics' content: WorkerMetrics over memory stores, scraped and parsed as Prometheus."""

from __future__ import annotations

from dataclasses import dataclass, field

from prometheus_client.parser import text_string_to_metric_families

from connect_lite.control.metric_samples import MetricSources
from connect_lite.control.metrics import WorkerMetrics
from connect_lite.control.retry import StatusCounters
from connect_lite.control.topic_tracking import TopicTracker
from connect_lite.control.worker import RunningPlugin
from connect_lite.protocol.host import LastBatch
from connect_lite.protocol.states import ConnectorStatus, State, TargetState, TaskStatus
from connect_lite.protocol.task_metrics import BatchTimes, ErrorCounters, TaskCounters
from connect_lite.storage.memory import open_memory_stores

W = "127.0.0.1:8083"
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


@dataclass
class FakeTask:
    """What the collector reads of a TaskView: identity, kind, its two counter sets (live
    here, so a test can count on after the metrics were built) and its last batch."""

    connector: str
    task: int
    kind: str
    counters: TaskCounters = field(default_factory=TaskCounters)
    error_counters: ErrorCounters = field(default_factory=ErrorCounters)
    last: LastBatch | None = None

    @property
    def errors(self) -> dict[str, int]:
        return self.error_counters.snapshot()

    @property
    def last_batch(self) -> LastBatch | None:
        return self.last


def scrape(metrics: WorkerMetrics) -> Samples:
    text = metrics.exposition().decode()
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def labels(**values: str) -> frozenset[tuple[str, str]]:
    return frozenset(values.items())


def build(tasks: list[FakeTask], running: list[RunningPlugin]) -> tuple[WorkerMetrics, Samples]:
    stores = open_memory_stores()
    for name in ("src", "snk"):
        stores.configs.put_connector_config(name, {"name": name}, TargetState.RUNNING)
    stores.statuses.put_connector(ConnectorStatus("src", State.RUNNING, W, None, "1.0"))
    stores.statuses.put_connector(ConnectorStatus("snk", State.FAILED, W, "trace", "2.0"))
    for task, state in ((0, State.RUNNING), (1, State.RUNNING), (2, State.PAUSED)):
        stores.statuses.put_task(TaskStatus("src", task, state, W, None, "1.0"))
    stores.statuses.put_task(TaskStatus("snk", 0, State.FAILED, W, "trace", "2.0"))
    tracker = TopicTracker(stores.topics, True, True)
    tracker.record("src", ["a", "b"], 0)
    tracker.record("src", ["b", "c"], 1)
    status = StatusCounters()
    status.add(retry=3, failure=1, success=7)
    sources = MetricSources(status, lambda: tasks, stores.statuses)
    metrics = WorkerMetrics(stores.configs, tracker, lambda: running, sources=sources)
    return metrics, scrape(metrics)


def test_task_counters_are_exported_per_task_with_kafka_names() -> None:
    source = FakeTask("src", 0, "source")
    source.counters.add(records_in=10, records_out=9, success=2, failure=1)
    source.counters.batches = BatchTimes(count=4, total_ms=20.0, max_ms=8.0)
    sink = FakeTask("snk", 0, "sink")
    sink.counters.add(records_in=5, records_out=4, success=1)
    sink.error_counters.add(total_record_failures=3, total_retries=2, total_records_skipped=1)
    sink.error_counters.error_at(1_700_000_000_000)
    _, samples = build([source, sink], [])

    src, snk = labels(connector="src", task="0"), labels(connector="snk", task="0")
    expected = {
        ("kafka_connect_source_task_metrics_source_record_poll_total", src): 10,
        ("kafka_connect_source_task_metrics_source_record_write_total", src): 9,
        ("kafka_connect_source_task_metrics_poll_batch_avg_time_ms", src): 5.0,
        ("kafka_connect_source_task_metrics_poll_batch_max_time_ms", src): 8.0,
        ("kafka_connect_connector_task_metrics_offset_commit_success_total", src): 2,
        ("kafka_connect_connector_task_metrics_offset_commit_failure_total", src): 1,
        ("kafka_connect_sink_task_metrics_sink_record_read_total", snk): 5,
        ("kafka_connect_sink_task_metrics_sink_record_send_total", snk): 4,
        ("kafka_connect_sink_task_metrics_put_batch_avg_time_ms", snk): 0.0,  # no batch yet
        ("kafka_connect_sink_task_metrics_put_batch_max_time_ms", snk): 0.0,
        ("kafka_connect_connector_task_metrics_offset_commit_success_total", snk): 1,
        ("kafka_connect_connector_task_metrics_offset_commit_failure_total", snk): 0,
        ("kafka_connect_task_error_metrics_total_record_failures", snk): 3,
        ("kafka_connect_task_error_metrics_total_record_errors", snk): 0,
        ("kafka_connect_task_error_metrics_total_records_skipped", snk): 1,
        ("kafka_connect_task_error_metrics_total_retries", snk): 2,
        ("kafka_connect_task_error_metrics_total_errors_logged", snk): 0,
        ("kafka_connect_task_error_metrics_deadletterqueue_produce_requests", snk): 0,
        ("kafka_connect_task_error_metrics_deadletterqueue_produce_failures", snk): 0,
        ("kafka_connect_task_error_metrics_last_error_timestamp", snk): 1_700_000_000_000,
    }
    assert {key: samples.get(key) for key in expected} == expected
    # A source task has no sink-task names, and the other way round.
    names_of = {name for name, have in samples if have == src}
    assert not [n for n in names_of if "sink_task" in n]
    assert len([n for n, have in samples if have == src and "task_error" in n]) == 8


def test_status_store_counters_connector_status_and_task_counts() -> None:
    _, samples = build([], [])
    store = "kafka_connect_status_backing_store_status_update_"
    assert samples[(store + "retry_total", labels())] == 3
    assert samples[(store + "failure_total", labels())] == 1
    assert samples[(store + "success_total", labels())] == 7
    status = "kafka_connect_connector_metrics_status"
    assert {k: v for k, v in samples.items() if k[0] == status} == {
        (status, labels(connector="src", status="running")): 1,
        (status, labels(connector="snk", status="failed")): 1,
    }
    count = "kafka_connect_connect_worker_metrics_connector_{}_task_count"
    got = {
        (state, connector): samples[(count.format(state), labels(connector=connector))]
        for state in ("running", "paused", "failed")
        for connector in ("src", "snk")
    }
    assert got == {
        ("running", "src"): 2,
        ("paused", "src"): 1,
        ("failed", "src"): 0,
        ("running", "snk"): 0,
        ("paused", "snk"): 0,
        ("failed", "snk"): 1,
    }


def test_active_topic_count_per_connector() -> None:
    _, samples = build([], [])
    active = "kafka_connect_connector_metrics_active_topic_count"
    assert {k: v for k, v in samples.items() if k[0] == active} == {
        (active, labels(connector="src")): 3,  # a, b, c: b counted once
        (active, labels(connector="snk")): 0,
    }


def test_kip_891_info_metrics_name_every_running_plugin() -> None:
    running = [
        RunningPlugin("src", None, "connector", "", "x.SourceConn", "1.0", "source"),
        RunningPlugin("src", 0, "task", "", "x.SourceTask", "1.1"),
        RunningPlugin("src", 0, "key_converter", "", "x.KeyConv", "0.1"),
        RunningPlugin("src", 0, "value_converter", "", "x.ValueConv", None),
        RunningPlugin("src", 0, "header_converter", "", "x.HeaderConv", "0.3"),
        RunningPlugin("src", 0, "transform", "route", "x.Router", "2.0"),
        RunningPlugin("src", 0, "predicate", "isTomb", "x.Tombstone", "3.0"),
    ]
    _, samples = build([], running)
    info = {k: v for k, v in samples.items() if k[0].endswith("_info")}
    assert info == {
        (
            "kafka_connect_connector_info",
            labels(
                connector="src",
                connector_class="x.SourceConn",
                connector_type="source",
                connector_version="1.0",
            ),
        ): 1,
        (
            "kafka_connect_connector_task_info",
            labels(
                connector="src",
                task="0",
                task_class="x.SourceTask",
                task_version="1.1",
                key_converter_class="x.KeyConv",
                key_converter_version="0.1",
                value_converter_class="x.ValueConv",
                value_converter_version="",  # no version
                header_converter_class="x.HeaderConv",
                header_converter_version="0.3",
            ),
        ): 1,
        (
            "kafka_connect_connector_transform_info",
            labels(
                connector="src",
                task="0",
                transform="route",
                transform_class="x.Router",
                transform_version="2.0",
            ),
        ): 1,
        (
            "kafka_connect_connector_predicate_info",
            labels(
                connector="src",
                task="0",
                predicate="isTomb",
                predicate_class="x.Tombstone",
                predicate_version="3.0",
            ),
        ): 1,
    }


def test_counters_are_read_at_scrape_time() -> None:
    task = FakeTask("src", 0, "source")
    metrics, first = build([task], [])
    poll = (
        "kafka_connect_source_task_metrics_source_record_poll_total",
        labels(connector="src", task="0"),
    )
    assert first[poll] == 0
    task.counters.add(records_in=25)
    assert scrape(metrics)[poll] == 25


def test_last_batch_executors_per_task_with_its_scheduler_pool() -> None:
    two = FakeTask("src", 0, "source", last=LastBatch("connect-lite:src-0", ("0", "1")))
    local = FakeTask("snk", 0, "sink", last=LastBatch("connect-lite:snk-0", ("driver",)))
    lagging = FakeTask("src", 1, "source", last=LastBatch("connect-lite:src-1", None))
    idle = FakeTask("src", 2, "source")  # no batch yet
    _, samples = build([two, local, lagging, idle], [])

    gauge = "kafka_connect_spark_task_metrics_last_batch_executors"
    assert {k: v for k, v in samples.items() if k[0] == gauge} == {
        (gauge, labels(connector="src", task="0", scheduler_pool="connect-lite:src-0")): 2,
        (gauge, labels(connector="snk", task="0", scheduler_pool="connect-lite:snk-0")): 1,
    }
