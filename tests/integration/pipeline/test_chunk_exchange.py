"""On a local master a batch's chunks and results travel through files (exchange.py): the
job's outcome is the same, and no file outlives its job, whether the job succeeded or failed."""

from __future__ import annotations

import os

import pytest

from connect_lite.api import SourceRecord
from connect_lite.pipeline import SourceJob, SparkEngine
from connect_lite.pipeline.record_errors import JobFailedError
from connect_lite.protocol.job_spec import TransformSpec
from tests.integration.pipeline import plugins
from tests.integration.pipeline.jobs import spec

pytestmark = pytest.mark.integration


def records(n: int) -> list[SourceRecord]:
    return [SourceRecord({"file": "f"}, {"pos": i}, "t", f"v{i}") for i in range(n)]


def left_over(engine: SparkEngine) -> list[str]:
    """The job directories in the engine's private directory."""
    assert engine.exchange is not None
    directory = engine.exchange.directory
    assert directory is not None
    return [name for name in os.listdir(directory) if name.startswith("job-")]


def test_chunks_go_through_files_and_none_is_left_after_the_job(engine: SparkEngine):
    assert engine.exchange is not None  # the session is local[2]
    job = SourceJob(engine, spec("exchange-ok"), "task-exchange-ok")
    sent = engine.exchange.sent
    result = job.run(records(100))
    assert [r.value for r in result.records] == [f"v{i}".encode() for i in range(100)]
    assert engine.exchange.sent - sent == 4  # spark.default.parallelism: one file per chunk
    assert left_over(engine) == []


def test_the_python_workers_sockets_are_in_the_private_directory(engine: SparkEngine):
    """Unix domain sockets, only its user can reach (it is 0700)."""
    SourceJob(engine, spec("exchange-sockets"), "task-exchange-sockets").run(records(2))
    assert engine.exchange is not None and engine.exchange.directory is not None
    sockets = [n for n in os.listdir(engine.exchange.directory) if n.endswith(".sock")]
    assert sockets, os.listdir(engine.exchange.directory)


def test_a_failed_job_leaves_no_file(engine: SparkEngine):
    crash = (TransformSpec(plugins.EndThePythonWorker),)
    job = SourceJob(engine, spec("exchange-crash", transforms=crash), "task-exchange-crash")
    assert engine.exchange is not None
    sent = engine.exchange.sent
    with pytest.raises(JobFailedError):
        job.run(records(100))
    assert engine.exchange.sent - sent == 4
    assert left_over(engine) == []
    # The session goes on: the next job runs on new Python workers.
    ok = SourceJob(engine, spec("exchange-after"), "task-exchange-after")
    assert len(ok.run(records(10)).records) == 10
