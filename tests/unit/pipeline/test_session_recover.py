"""SparkEngine.recover after a job failed because Spark's JVM died, with several tasks: the
first to find the session dead starts a new one; a job that ran on the dead session and fails
after that runs again on the new one, instead of failing its task because the new session is
alive. Fake sessions, no JVM."""

from __future__ import annotations

from typing import Any

import pytest

from connect_lite.pipeline import session as session_module
from connect_lite.pipeline.session import SparkEngine


class FakeSession:
    def __init__(self, name: str) -> None:
        self.name = name
        self.alive = True


class LocalRuntime(SparkEngine):
    def __init__(self) -> None:
        super().__init__({"spark.master": "local[1]"})
        self.created: list[FakeSession] = []

    def _create(self) -> Any:
        spark = FakeSession(f"session-{len(self.created) + 1}")
        self.created.append(spark)
        return spark


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch) -> LocalRuntime:
    monkeypatch.setattr(session_module, "jvm_alive", lambda spark: spark.alive)
    monkeypatch.setattr(session_module, "forget_dead_session", lambda: None)
    return LocalRuntime()


def test_a_job_on_a_session_already_replaced_runs_again_on_the_new_one(
    engine: LocalRuntime,
) -> None:
    first = engine.current_session()
    second = engine.current_session()  # another task's job, on the same session
    assert first == second == 1
    engine.created[0].alive = False  # the JVM dies under both jobs

    assert engine.recover(first)  # the first task to fail forgets the dead session
    # the other task's job failed on it too, and recovers before the new session started
    assert engine.recover(second)
    assert engine.current_session() > first  # both jobs run again on a new one
    assert engine.created[-1].name == "session-2"

    # a third job failed on session 1 and recovers once session 2 is up: it is alive, but
    # that says nothing of the job's failure
    assert engine.recover(first)
    assert len(engine.created) == 2  # no third session


def test_a_failure_on_a_live_current_session_is_the_jobs_own(engine: LocalRuntime) -> None:
    attempt = engine.current_session()
    assert not engine.recover(attempt)  # e.g. a plugin's error: the task handles it
    assert not engine.recover()  # without the attempt's session: judged by the current one
    engine.created[0].alive = False
    assert engine.recover()
