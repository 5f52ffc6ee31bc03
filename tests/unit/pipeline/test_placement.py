"""Where a task's last batch ran: the job tag each job group opening adds, and the executors
read back from (a fake of) Spark's status tracker and status store."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from connect_lite.pipeline.job_groups import POOL_KEY
from connect_lite.pipeline.placement import BatchTracker, executors_of_tag
from connect_lite.pipeline.session import SparkEngine
from connect_lite.protocol.host import LastBatch


class Option:
    def __init__(self, value: Any = None) -> None:
        self.value = value

    def isEmpty(self) -> bool:  # Scala's names, as Py4J calls them
        return self.value is None

    def get(self) -> Any:
        return self.value


class Seq:
    def __init__(self, items: list[Any]) -> None:
        self.items = items

    def size(self) -> int:
        return len(self.items)

    def apply(self, i: int) -> Any:
        return self.items[i]


@dataclass
class Job:
    state: str
    stages: list[int]

    def status(self) -> Any:
        return self.state  # JobExecutionStatus: its toString() is the name

    def stageIds(self) -> list[int]:
        return self.stages


@dataclass
class Stage:
    attempt: int

    def currentAttemptId(self) -> int:
        return self.attempt


@dataclass
class Task:
    executor: str

    def executorId(self) -> str:
        return self.executor


@dataclass
class FakeScalaContext:
    """SparkContext's statusTracker() and statusStore(), from plain dicts."""

    jobs_by_tag: dict[str, list[int]] = field(default_factory=dict)
    jobs: dict[int, Job] = field(default_factory=dict)
    stages: dict[int, Stage] = field(default_factory=dict)
    tasks: dict[tuple[int, int], list[str]] = field(default_factory=dict)
    calls: int = 0

    def statusTracker(self) -> FakeScalaContext:
        self.calls += 1
        return self

    def statusStore(self) -> FakeScalaContext:
        return self

    def getJobIdsForTag(self, tag: str) -> list[int]:
        return self.jobs_by_tag.get(tag, [])

    def getJobInfo(self, job: int) -> Option:
        return Option(self.jobs.get(job))

    def getStageInfo(self, stage: int) -> Option:
        return Option(self.stages.get(stage))

    def taskList(self, stage: int, attempt: int, limit: int) -> Seq:
        return Seq([Task(e) for e in self.tasks.get((stage, attempt), [])])


class JobState(str):
    def toString(self) -> str:
        return str(self)


def test_executors_are_those_of_every_task_attempt_of_every_stage_of_the_tagged_jobs() -> None:
    sc = FakeScalaContext(
        jobs_by_tag={"t": [3, 4]},
        jobs={3: Job(JobState("SUCCEEDED"), [5]), 4: Job(JobState("SUCCEEDED"), [6, 7])},
        stages={5: Stage(0), 6: Stage(1)},  # 7 was skipped: the store has no attempt of it
        tasks={(5, 0): ["1", "1"], (6, 0): ["1", "2"], (6, 1): ["3"]},  # 6 ran again on 3
    )
    assert executors_of_tag(sc, "t") == (("1", "2", "3"), True)


def test_a_running_job_is_not_final_and_an_unknown_tag_has_no_answer_yet() -> None:
    sc = FakeScalaContext(
        jobs_by_tag={"t": [1]},
        jobs={1: Job(JobState("RUNNING"), [1])},
        stages={1: Stage(0)},
        tasks={(1, 0): ["driver"]},
    )
    assert executors_of_tag(sc, "t") == (("driver",), False)
    assert executors_of_tag(sc, "other") == (None, False)


def test_the_tracker_asks_spark_until_the_batch_is_over_then_keeps_the_answer() -> None:
    tracker = BatchTracker()
    assert tracker.last_batch("g", FakeScalaContext()) is None  # no batch yet
    sc = FakeScalaContext(jobs_by_tag={}, stages={1: Stage(0)}, tasks={(1, 0): ["0"]})
    tracker.finished("g", "pool-g", "t1")
    assert tracker.last_batch("g", sc) == LastBatch("pool-g", None)  # the store lags
    sc.jobs_by_tag["t1"] = [1]
    sc.jobs[1] = Job(JobState("RUNNING"), [1])
    assert tracker.last_batch("g", sc) == LastBatch("pool-g", ("0",))
    sc.jobs[1] = Job(JobState("SUCCEEDED"), [1])
    sc.tasks[(1, 0)] = ["0", "1"]
    assert tracker.last_batch("g", sc) == LastBatch("pool-g", ("0", "1"))
    asked = sc.calls
    assert tracker.last_batch("g", sc) == LastBatch("pool-g", ("0", "1"))
    assert sc.calls == asked  # final: Spark is not asked again
    assert tracker.last_batch("g", None) == LastBatch("pool-g", ("0", "1"))  # no session
    assert LastBatch("p", ("0", "1")).executors == 2
    assert LastBatch("p", None).executors is None


def test_after_the_session_is_gone_what_was_known_stays_and_spark_is_not_asked() -> None:
    tracker = BatchTracker()
    tracker.finished("g", "g", "t1")
    tracker.forget()
    sc = FakeScalaContext(jobs_by_tag={"t1": [1]}, jobs={1: Job(JobState("SUCCEEDED"), [])})
    assert tracker.last_batch("g", sc) == LastBatch("g", None)
    assert sc.calls == 0


class FakeSparkContext:
    def __init__(self) -> None:
        self.props: dict[str, str | None] = {}
        self.tags: list[str] = []
        self.tags_seen: list[set[str]] = []
        self._jsc = self

    def sc(self) -> FakeScalaContext:
        return FakeScalaContext()

    def getLocalProperty(self, key: str) -> str | None:
        return self.props.get(key)

    def setLocalProperty(self, key: str, value: str | None) -> None:
        self.props[key] = value

    def setJobGroup(self, group: str, description: str, interruptOnCancel: bool) -> None:
        self.props["spark.jobGroup.id"] = group

    def addJobTag(self, tag: str) -> None:
        self.tags.append(tag)

    def removeJobTag(self, tag: str) -> None:
        self.tags.remove(tag)


class JobGroupSession:
    """A SparkSession whose context keeps the local properties and job tags set on it."""

    def __init__(self) -> None:
        self.sparkContext = FakeSparkContext()
        self._jsc = self.sparkContext


class LocalRuntime(SparkEngine):
    def _create(self) -> Any:
        return JobGroupSession()


def test_each_job_group_opening_tags_its_jobs_and_becomes_the_groups_last_batch() -> None:
    engine = LocalRuntime({"spark.master": "local[2]"})
    sc = engine.session().sparkContext
    assert engine.last_batch("connect-lite:a-0") is None
    with engine.job_group("connect-lite:a-0", "batch 1"):
        (tag,) = sc.tags
        assert tag.startswith("connect-lite:a-0:")
        assert sc.props[POOL_KEY] == "connect-lite:a-0"
        assert engine.last_batch("connect-lite:a-0") is None  # not finished yet
    assert sc.tags == []  # the tag is removed with the group
    assert sc.props[POOL_KEY] is None
    assert engine.last_batch("connect-lite:a-0") == LastBatch("connect-lite:a-0", None)
    with engine.job_group("connect-lite:a-0", "batch 2"):
        assert sc.tags != [tag]  # a new tag per batch
