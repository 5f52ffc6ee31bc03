"""SparkEngine on a cluster whose master or workers go away: the keeper notices, stops the
session, and starts a new one with backoff; meanwhile callers get SparkUnavailableError at
once and ``unavailable`` says why. Local mode has none of it.

The keeper's rounds are driven by hand (``keep_once``), with a fake clock and fake probes;
no thread and no JVM."""

from __future__ import annotations

from typing import Any

import pytest

from connect_lite.pipeline import cluster_keeper
from connect_lite.pipeline.cluster_watch import UNREACHABLE_AFTER_S
from connect_lite.pipeline.session import SparkEngine, SparkStartError, SparkUnavailableError
from connect_lite.pipeline.shipping import ExecutorMismatchError
from tests.fakes import FakeClock

MASTER = "spark://127.0.0.1:7077"


class CancelCountingContext:
    """A SparkContext that counts cancelAllJobs calls."""

    def __init__(self) -> None:
        self.cancelled = 0

    def cancelAllJobs(self) -> None:  # PySpark's name
        self.cancelled += 1


class NamedSession:
    """A SparkSession told apart by its name, whose context counts cancellations; a session
    the keeper stops is marked ``stopped``."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.sparkContext = CancelCountingContext()
        self.stopped = False


class ClusterRuntime(SparkEngine):
    """``_create`` raises the queued errors in turn, else returns a new NamedSession; probes
    answer from ``executors``; no keeper thread is started."""

    def __init__(self, errors: list[Exception], clock: FakeClock, master: str = MASTER) -> None:
        super().__init__({"spark.master": master}, clock=clock)
        self.errors = errors
        self.created: list[NamedSession] = []
        self.executors: int | None = 2
        self.stopped_app = False
        self.fake_clock = clock
        self._keeper.watch = lambda: None  # type: ignore[method-assign]  # no keeper thread

    def _create(self) -> Any:
        if self.errors:
            raise self.errors.pop(0)
        spark = NamedSession(f"session-{len(self.created) + 1}")
        self.created.append(spark)
        return spark

    def keep_once(self) -> None:
        """A keeper round: the test drives them itself."""
        self._keeper.keep_once()

    def restart_now(self) -> None:
        """A keeper round whose restart runs on this thread."""
        self.keep_once()
        if self._keeper._restarter is not None:
            self._keeper._restarter.join(10)


@pytest.fixture(autouse=True)
def fake_probes(monkeypatch: pytest.MonkeyPatch) -> None:
    def probe(spark: Any) -> tuple[int | None, bool]:
        engine = probe.engine  # type: ignore[attr-defined]
        return engine.executors, engine.stopped_app

    def stop(spark: Any) -> None:
        spark.stopped = True

    monkeypatch.setattr(cluster_keeper, "_probe", probe)
    monkeypatch.setattr(cluster_keeper, "_stop_session", stop)
    fake_probes.probe = probe  # type: ignore[attr-defined]


def cluster_runtime(errors: list[Exception] | None = None) -> tuple[ClusterRuntime, FakeClock]:
    clock = FakeClock(100.0)
    engine = ClusterRuntime(list(errors or []), clock)
    fake_probes.probe.engine = engine  # type: ignore[attr-defined]
    return engine, clock


def lose_the_cluster(engine: ClusterRuntime, clock: FakeClock) -> None:
    engine.executors = 0
    engine.keep_once()
    clock.now += UNREACHABLE_AFTER_S
    engine.keep_once()


def test_a_session_without_executors_for_the_timeout_is_dropped() -> None:
    engine, clock = cluster_runtime()
    first = engine.session()
    engine.executors = 0
    engine.keep_once()
    clock.now += UNREACHABLE_AFTER_S - 1
    engine.keep_once()
    assert engine.unavailable is None and engine.session() is first
    clock.now += 1
    engine.keep_once()
    assert first.sparkContext.cancelled == 1 and first.stopped  # its waiting jobs fail
    assert engine.unavailable == (
        f"Spark is unreachable: no executor for {UNREACHABLE_AFTER_S:.0f} s: the master at "
        f"{MASTER} or its workers are unreachable"
    )
    assert not engine.is_started
    with pytest.raises(SparkUnavailableError, match=r"^Spark is unreachable: no executor"):
        engine.session()  # at once, no start on the caller's thread
    assert len(engine.created) == 1


def test_the_reason_is_set_before_the_jobs_are_cancelled() -> None:
    engine, clock = cluster_runtime()
    seen: list[str | None] = []
    engine.session().sparkContext.cancelAllJobs = lambda: seen.append(engine.unavailable)
    lose_the_cluster(engine, clock)
    # a job failing from the cancel finds the reason, so its task retries instead of failing
    assert len(seen) == 1 and (seen[0] or "").startswith("Spark is unreachable: no executor")


def test_a_failed_job_raises_unavailable_only_while_the_cluster_is_unreachable() -> None:
    engine, clock = cluster_runtime()
    engine.session()
    job_error = RuntimeError("Job 3 cancelled as part of cancellation of all jobs")
    engine.raise_if_unavailable(job_error)  # reachable: the caller handles the error
    lose_the_cluster(engine, clock)
    with pytest.raises(SparkUnavailableError) as raised:
        engine.raise_if_unavailable(job_error)
    assert raised.value.__cause__ is job_error


def test_the_keeper_starts_a_new_session_with_backoff_until_one_starts() -> None:
    engine, clock = cluster_runtime()
    engine.session()
    lose_the_cluster(engine, clock)
    unresponsive = RuntimeError("All masters are unresponsive! Giving up.")
    engine.errors = [unresponsive, unresponsive]
    attempts = []
    for _ in range(40):  # a keeper round a second
        clock.now += 1
        before = len(engine.errors)
        engine.restart_now()
        if len(engine.errors) != before or engine.is_started:
            attempts.append(clock.now)
        if engine.is_started:
            break
    # tried after 1 s, then 2 s after that failure, then 4 s: the third start works
    assert [t - attempts[0] for t in attempts] == [0, 2, 6]
    assert engine.unavailable is None and engine.start_error is None
    assert engine.session() is engine.created[-1] and len(engine.created) == 2


def test_the_backoff_restarts_once_a_session_started() -> None:
    engine, clock = cluster_runtime()
    engine.session()
    for _ in range(2):
        lose_the_cluster(engine, clock)
        engine.executors = 2
        clock.now += 1
        engine.restart_now()
        assert engine.is_started  # 1 s after each loss, not 1 s then 2 s
    assert len(engine.created) == 3


def test_a_first_start_without_a_master_is_unavailable_and_retried_by_the_keeper() -> None:
    engine, clock = cluster_runtime([RuntimeError("All masters are unresponsive! Giving up.")])
    with pytest.raises(SparkUnavailableError) as failed:
        engine.session()
    assert isinstance(failed.value, SparkStartError)  # what callers already catch
    assert str(failed.value).startswith("Spark is unreachable: Spark failed to start: All ")
    assert engine.unavailable == str(failed.value)
    clock.now += 1
    engine.restart_now()
    assert engine.is_started and engine.unavailable is None


def test_executors_that_cannot_run_connect_lite_fail_the_start_as_before() -> None:
    mismatch = ExecutorMismatchError("Spark's executors run connect_lite 0.1 on Python 3.9")
    engine, _ = cluster_runtime([mismatch])
    with pytest.raises(SparkStartError) as failed:
        engine.session()
    assert not isinstance(failed.value, SparkUnavailableError)
    assert engine.unavailable is None and engine.start_error is not None


def test_a_handshake_the_keeper_cancelled_is_unavailable() -> None:
    engine, clock = cluster_runtime()
    starting = NamedSession("starting")

    def create() -> Any:
        engine._keeper._candidate = starting  # type: ignore[assignment]  # probed during the start
        engine.executors = 0
        engine.keep_once()
        clock.now += UNREACHABLE_AFTER_S
        engine.keep_once()  # cancels the handshake's job
        assert starting.sparkContext.cancelled == 1
        raise ExecutorMismatchError("Spark's executors could not run connect_lite's handshake")

    engine._create = create  # type: ignore[method-assign]
    with pytest.raises(SparkUnavailableError, match=r"^Spark is unreachable: no executor for"):
        engine.session()


def test_local_mode_has_no_keeper_and_no_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeClock(100.0)
    engine = ClusterRuntime([RuntimeError("gateway exited")], clock, master="local[2]")
    kept: list[bool] = []
    monkeypatch.setattr(engine._keeper, "watch", lambda: kept.append(True))
    with pytest.raises(SparkStartError) as failed:
        engine.session()
    assert not isinstance(failed.value, SparkUnavailableError)
    assert engine.unavailable is None and kept == []
