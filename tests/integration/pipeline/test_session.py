"""The shared SparkEngine: background start, conf passthrough, job groups and cancel."""

from __future__ import annotations

import functools
import sys
import threading
from typing import Any

import pytest

from connect_lite.api import SourceRecord
from connect_lite.pipeline import JobCancelledError, SourceJob, SparkEngine
from connect_lite.pipeline.session_start import effective_conf
from connect_lite.protocol.job_spec import JobSpec, TransformSpec
from connect_lite.testing import wait_for
from tests.integration.pipeline import plugins

pytestmark = pytest.mark.integration


class GatedRuntime(SparkEngine):
    """A SparkEngine whose session creation waits for a gate instead of starting Spark."""

    def __init__(self) -> None:
        super().__init__({})
        self.creating = threading.Event()
        self.gate = threading.Event()
        self.created = object()
        self.creations = 0

    def _create(self):
        self.creations += 1
        self.creating.set()
        if not self.gate.wait(30):
            raise RuntimeError("the test never opened the gate")
        return self.created


@pytest.mark.timeout(60)
def test_background_start_returns_while_the_session_is_being_created():
    engine = GatedRuntime()
    starter = engine.start_in_background()
    # Creation is blocked on the gate, and the call has returned: it did not wait for it.
    assert engine.creating.wait(30)
    assert starter.is_alive() and engine.is_started is False
    assert engine.start_in_background() is starter  # a second call starts nothing new
    got: list[object] = []
    user = threading.Thread(target=lambda: got.append(engine.session()))
    user.start()
    assert got == []  # session() cannot return before the creation it waits for
    engine.gate.set()
    starter.join(30)
    user.join(30)
    assert got == [engine.created]
    assert engine.creations == 1 and engine.is_started and engine.start_error is None


def test_background_start_gives_the_one_shared_session(engine: SparkEngine):
    wait_for(lambda: engine.is_started, timeout=120)
    assert engine.start_error is None
    assert engine.session() is engine.session()


def test_spark_conf_passthrough_and_defaults(engine: SparkEngine):
    conf = engine.session().sparkContext.getConf()
    assert conf.get("spark.connectlite.test.marker") == "passed-through"
    assert conf.get("spark.master") == "local[2]"
    assert engine.session().conf.get("spark.sql.shuffle.partitions") == "3"
    assert conf.get("spark.app.name") == "connect-lite"
    assert conf.get("spark.ui.enabled") == "false"
    assert conf.get("spark.pyspark.python") == sys.executable
    assert conf.get("spark.sql.execution.arrow.pyspark.enabled") == "true"
    assert engine.default_parallelism == 4


def test_effective_conf_keeps_given_values():
    conf = effective_conf({"spark.master": "spark://h:7077", "spark.pyspark.python": "/x/py"})
    assert conf["spark.master"] == "spark://h:7077"
    assert conf["spark.pyspark.python"] == "/x/py"
    assert conf["spark.pyspark.driver.python"] == sys.executable
    assert effective_conf({})["spark.master"] == "local[*]"


def test_unix_sockets_to_the_python_workers_only_on_a_local_master():
    key = "spark.python.unix.domain.socket.enabled"
    assert effective_conf({"spark.master": "local[2]"})[key] == "true"
    assert key not in effective_conf({"spark.master": "spark://h:7077"})
    assert effective_conf({"spark.master": "local[2]", key: "false"})[key] == "false"


def test_empty_batch_runs_no_spark():
    idle = SparkEngine({"spark.master": "local[1]"})
    spec = JobSpec(
        "empty", plugins.Utf8Converter, plugins.Utf8Converter, plugins.Utf8HeaderConverter
    )
    result = SourceJob(idle, spec, "g-empty").run([])
    assert result.size == 0 and result.records == []
    assert idle.is_started is False


def test_job_group_tags_jobs_of_this_thread_only(engine: SparkEngine):
    sc = engine.session().sparkContext
    with engine.job_group("group-tag-test", "tagging test"):
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


def run_on_a_thread(
    job: SourceJob, records: list[SourceRecord]
) -> tuple[threading.Thread, list[object], threading.Event]:
    """The batch job runs the batch on a thread of its own; ``outcome`` gets its result or what
    it raised, then ``returned`` is set."""
    outcome: list[object] = []
    returned = threading.Event()

    def run() -> None:
        try:
            outcome.append(job.run(records))
        except BaseException as error:
            outcome.append(error)
        finally:
            returned.set()

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    return worker, outcome, returned


def running_job(tracker: Any, group: str) -> int:
    """The one running Spark job of ``group``, once there is one."""
    (job,) = wait_for(
        lambda: set(tracker.getActiveJobsIds()) & set(tracker.getJobIdsForGroup(group))
    )
    return int(job)


@pytest.mark.timeout(240)
def test_cancel_stops_a_running_job_from_another_thread(engine: SparkEngine, tmp_path):
    """Every record waits for a file that does not exist: only cancel can end the job."""
    gate = tmp_path / "gate"
    blocked = TransformSpec(functools.partial(plugins.WaitForFile, str(gate)))
    spec = JobSpec(
        "blocked",
        plugins.Utf8Converter,
        plugins.Utf8Converter,
        plugins.Utf8HeaderConverter,
        (blocked,),
    )
    job = SourceJob(engine, spec, "task-blocked-0")
    records = [SourceRecord(None, None, "t", f"v{i}") for i in range(8)]
    tracker = engine.session().sparkContext.statusTracker()
    worker, outcome, returned = run_on_a_thread(job, records)
    try:
        spark_job = running_job(tracker, "task-blocked-0")
        assert not returned.is_set()
        job.cancel()
        assert returned.wait(120), "the batch job did not return after cancel"
    finally:
        gate.touch()  # releases a Python worker Spark has not killed yet
        worker.join(60)
    assert len(outcome) == 1 and isinstance(outcome[0], JobCancelledError), outcome
    wait_for(lambda: tracker.getJobInfo(spark_job).status == "FAILED")  # cancelled, not completed


def test_cancel_of_an_idle_group_is_harmless(engine: SparkEngine):
    engine.cancel("nobody-runs-this")
    with engine.job_group("after-cancel", "still works") as group:
        assert group.cancelled is False
        assert engine.session().sparkContext.parallelize(range(5), 1).count() == 5


@pytest.mark.parametrize("n", [1, 3, 7])
def test_split_covers_everything(n: int):
    from connect_lite.pipeline.transfer import split

    bounds = split(n, 4)
    assert bounds[0][0] == 0 and bounds[-1][1] == n
    assert all(a < b for a, b in bounds)
    assert all(bounds[i][1] == bounds[i + 1][0] for i in range(len(bounds) - 1))
    assert len(bounds) == min(n, 4)


def test_a_cancelled_job_starts_no_later_spark_job(engine: SparkEngine) -> None:
    """A task asked to stop while its batch waited (e.g. for Spark's start) runs no job."""
    spec = JobSpec(
        "cancelled-early", plugins.Utf8Converter, plugins.Utf8Converter, plugins.Utf8HeaderConverter
    )
    job = SourceJob(engine, spec, "task-cancelled-early-0")
    tracker = engine.session().sparkContext.statusTracker()
    job.cancel()
    with pytest.raises(JobCancelledError, match="cancelled"):
        job.run([SourceRecord(None, None, "t", "v")])
    assert list(tracker.getJobIdsForGroup("task-cancelled-early-0")) == []


@pytest.mark.timeout(240)
def test_a_late_cancel_of_a_replaced_job_leaves_its_successor_running(
    engine: SparkEngine, tmp_path
) -> None:
    """A task's restart makes a new batch job in the same job group (its scheduler pool): the
    old batch job's cancel, arriving late (its stop timed out), cancels only the old one's jobs."""
    from tests.integration.pipeline.jobs import spec

    gate = tmp_path / "gate"
    blocked = TransformSpec(functools.partial(plugins.WaitForFile, str(gate)))
    old = SourceJob(engine, spec("replaced-old"), "task-replaced-0")
    new = SourceJob(engine, spec("replaced-new", transforms=(blocked,)), "task-replaced-0")
    records = [SourceRecord(None, None, "t", f"v{i}") for i in range(4)]
    tracker = engine.session().sparkContext.statusTracker()
    worker, outcome, _ = run_on_a_thread(new, records)
    try:
        spark_job = running_job(tracker, "task-replaced-0")
        old.cancel()  # the replaced batch job's late cancel
        assert tracker.getJobInfo(spark_job).status == "RUNNING"
    finally:
        gate.touch()
        worker.join(120)
    assert len(outcome) == 1 and getattr(outcome[0], "size", None) == 4, outcome
    assert tracker.getJobInfo(spark_job).status == "SUCCEEDED"
