"""The shared SparkRuntime: background start, conf passthrough, job groups and cancel."""

from __future__ import annotations

import functools
import sys
import threading
import time

import pytest

from connect_lite.api import SourceRecord
from connect_lite.pipeline import (
    SourceStage,
    SparkRuntime,
    StageCancelledError,
    StageSpec,
    TransformSpec,
)
from connect_lite.pipeline.session import effective_conf
from tests.integration.pipeline import plugins
from tests.integration.pipeline.conftest import BackgroundStart

pytestmark = pytest.mark.integration


def wait_for(condition, timeout: float = 60.0, interval: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError("condition not met in time")


def test_background_start_does_not_block(spark_start: tuple[SparkRuntime, BackgroundStart]):
    runtime, info = spark_start
    assert info.call_seconds < 1.0
    assert info.started_right_after_call is False
    wait_for(lambda: runtime.is_started, timeout=120)
    assert runtime.session() is runtime.session()


def test_spark_conf_passthrough_and_defaults(runtime: SparkRuntime):
    conf = runtime.session().sparkContext.getConf()
    assert conf.get("spark.connectlite.test.marker") == "passed-through"
    assert conf.get("spark.master") == "local[2]"
    assert runtime.session().conf.get("spark.sql.shuffle.partitions") == "3"
    assert conf.get("spark.app.name") == "connect-lite"
    assert conf.get("spark.ui.enabled") == "false"
    assert conf.get("spark.pyspark.python") == sys.executable
    assert conf.get("spark.sql.execution.arrow.pyspark.enabled") == "true"
    assert runtime.default_parallelism == 4


def test_effective_conf_keeps_given_values():
    conf = effective_conf({"spark.master": "spark://h:7077", "spark.pyspark.python": "/x/py"})
    assert conf["spark.master"] == "spark://h:7077"
    assert conf["spark.pyspark.python"] == "/x/py"
    assert conf["spark.pyspark.driver.python"] == sys.executable
    assert effective_conf({})["spark.master"] == "local[*]"


def test_empty_batch_runs_no_spark():
    idle = SparkRuntime({"spark.master": "local[1]"})
    spec = StageSpec(
        "empty", plugins.Utf8Converter, plugins.Utf8Converter, plugins.Utf8HeaderConverter
    )
    result = SourceStage(idle, spec, "g-empty").run([])
    assert result.size == 0 and result.records == []
    assert idle.is_started is False


def test_job_group_tags_jobs_of_this_thread_only(runtime: SparkRuntime):
    sc = runtime.session().sparkContext
    with runtime.job_group("group-tag-test", "tagging test"):
        assert sc.getLocalProperty("spark.jobGroup.id") == "group-tag-test"
        seen_elsewhere: list[str | None] = []
        other = threading.Thread(
            target=lambda: seen_elsewhere.append(sc.getLocalProperty("spark.jobGroup.id"))
        )
        other.start()
        other.join()
        sc.parallelize(range(10), 2).count()
    assert seen_elsewhere == [None]
    assert sc.getLocalProperty("spark.jobGroup.id") is None
    assert len(sc.statusTracker().getJobIdsForGroup("group-tag-test")) == 1


def test_cancel_stops_a_running_stage_from_another_thread(runtime: SparkRuntime):
    slow = TransformSpec(functools.partial(plugins.Sleep, 1.0))
    spec = StageSpec(
        "slow", plugins.Utf8Converter, plugins.Utf8Converter, plugins.Utf8HeaderConverter, (slow,)
    )
    stage = SourceStage(runtime, spec, "task-slow-0")
    records = [SourceRecord(None, None, "t", f"v{i}") for i in range(120)]  # ~30 s of work
    outcome: list[BaseException | object] = []

    def run() -> None:
        try:
            outcome.append(stage.run(records))
        except BaseException as e:
            outcome.append(e)

    worker = threading.Thread(target=run)
    started = time.monotonic()
    worker.start()
    tracker = runtime.session().sparkContext.statusTracker()
    wait_for(lambda: tracker.getActiveJobsIds() and tracker.getJobIdsForGroup("task-slow-0"))
    stage.cancel()
    worker.join(timeout=60)
    assert not worker.is_alive()
    assert time.monotonic() - started < 25
    assert len(outcome) == 1 and isinstance(outcome[0], StageCancelledError)


def test_cancel_of_an_idle_group_is_harmless(runtime: SparkRuntime):
    runtime.cancel("nobody-runs-this")
    with runtime.job_group("after-cancel", "still works") as group:
        assert group.cancelled is False
        assert runtime.session().sparkContext.parallelize(range(5), 1).count() == 5


@pytest.mark.parametrize("n", [1, 3, 7])
def test_split_covers_everything(n: int):
    from connect_lite.pipeline.transfer import split

    bounds = split(n, 4)
    assert bounds[0][0] == 0 and bounds[-1][1] == n
    assert all(a < b for a, b in bounds)
    assert all(bounds[i][1] == bounds[i + 1][0] for i in range(len(bounds) - 1))
    assert len(bounds) == min(n, 4)
