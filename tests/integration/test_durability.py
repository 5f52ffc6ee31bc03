"""Nothing is lost on a restart or a kill -9: configs, target states, offsets and records."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from connect_lite.testing import EmbeddedConnect, wait_for
from tests.integration.testkit import lines

pytestmark = pytest.mark.integration


def append(path: Path, start: int, count: int) -> None:
    with path.open("a") as out:
        out.write("".join(f"record {n:07d}\n" for n in range(start, start + count)))


def file_pipeline(worker: EmbeddedConnect, src: Path, dst: Path, topic: str) -> None:
    source = {"connector.class": "FileStreamSource", "file": str(src), "topic": topic}
    sink = {"connector.class": "FileStreamSink", "file": str(dst), "topics": topic}
    assert worker.http.put("/connectors/copy-in/config", source).status == 201
    assert worker.http.put("/connectors/copy-out/config", sink).status == 201


def test_kill_9_mid_stream_loses_no_record_and_no_config(
    new_worker: Callable[..., EmbeddedConnect], tmp_path: Path
) -> None:
    src, dst = tmp_path / "in.txt", tmp_path / "out.txt"
    topic = f"durable-{uuid.uuid4().hex[:8]}"
    append(src, 0, 20_000)
    worker = new_worker().start()
    file_pipeline(worker, src, dst, topic)
    parked = {"connector.class": "ScriptedSource", "topic": f"{topic}-parked"}
    assert (
        worker.http.post(
            "/connectors", {"name": "parked", "config": parked, "initial_state": "PAUSED"}
        ).status
        == 201
    )
    assert (
        worker.http.post(
            "/connectors", {"name": "halted", "config": parked, "initial_state": "stopped"}
        ).status
        == 201
    )
    wait_for(lambda: len(lines(dst)) >= 1, 120, what="the first records in the sink")
    for batch in range(5):  # keep the stream going while the worker dies
        append(src, 20_000 + batch * 1_000, 1_000)
    worker.kill_worker()
    seen_before_kill = len(lines(dst))
    append(src, 25_000, 5_000)
    assert seen_before_kill < 30_000, "the stream finished before the kill; nothing was tested"

    worker.start_worker()  # again, on the same state file
    assert sorted(worker.http.get("/connectors").body) == [
        "copy-in",
        "copy-out",
        "halted",
        "parked",
    ]
    assert worker.http.get("/connectors/copy-in/config").body["file"] == str(src)
    expected = set(lines(src))
    assert len(expected) == 30_000
    wait_for(lambda: set(lines(dst)) >= expected, 180, what="every input line in the output")
    assert set(lines(dst)) == expected
    parked_status = wait_for(
        lambda: (s := worker.client.status("parked")) and s["connector"]["state"] == "PAUSED" and s,
        60,
    )
    assert [t["state"] for t in parked_status["tasks"]] in ([], ["PAUSED"])
    halted = worker.client.status("halted")
    assert halted["connector"]["state"] == "STOPPED" and halted["tasks"] == []
    offsets = worker.http.get("/connectors/copy-in/tasks").body
    assert offsets[0]["config"]["file"] == str(src)


def test_graceful_stop_commits_offsets_so_nothing_is_sent_twice(
    new_worker: Callable[..., EmbeddedConnect], tmp_path: Path
) -> None:
    """The periodic flush never runs here: only the commits made on SIGTERM can prevent
    the source from re-reading, and the sink from re-consuming, after the restart."""
    src, dst = tmp_path / "in.txt", tmp_path / "out.jsonl"
    topic = f"graceful-{uuid.uuid4().hex[:8]}"
    append(src, 0, 3_000)
    source = {"connector.class": "FileStreamSource", "file": str(src), "topic": topic}
    sink = {"connector.class": "RecordingSink", "output.file": str(dst), "topics": topic}
    slow_flush = {"offset.flush.interval.ms": "600000"}
    worker = new_worker(worker_properties=slow_flush).start()
    assert worker.http.put("/connectors/copy-in/config", source).status == 201
    assert worker.http.put("/connectors/copy-out/config", sink).status == 201
    wait_for(lambda: len(lines(dst)) == 3_000, 120, what="3000 records")
    assert worker.terminate_worker() == 0
    append(src, 3_000, 500)
    worker.start_worker()  # again, on the same state file
    wait_for(lambda: len(lines(dst)) >= 3_500, 120, what="the 500 new records")
    values = [json.loads(line)["value"] for line in lines(dst)]
    assert sorted(values) == sorted(lines(src))


def _descendants(pid: int) -> list[tuple[int, str]]:
    """(pid, command name) of every process below ``pid``."""
    table = [
        line.split(None, 2)
        for line in subprocess.run(
            ["ps", "-eo", "pid=,ppid=,comm="], capture_output=True, text=True, check=True
        ).stdout.splitlines()
    ]
    found, frontier = [], {pid}
    while frontier:
        children = [(int(p), c) for p, pp, c in table if int(pp) in frontier]
        found += children
        frontier = {p for p, _ in children}
    return found


def test_a_killed_spark_jvm_is_replaced_and_no_record_is_lost(
    new_worker: Callable[..., EmbeddedConnect], tmp_path: Path
) -> None:
    """Spark's JVM dies (an OutOfMemoryError ends it too): the next batch starts a new
    SparkSession and runs again on it; the tasks stay RUNNING and the stream has no gap."""
    src, dst = tmp_path / "in.txt", tmp_path / "out.txt"
    topic = f"jvm-{uuid.uuid4().hex[:8]}"
    append(src, 0, 2_000)
    worker = new_worker().start()
    file_pipeline(worker, src, dst, topic)
    wait_for(lambda: len(lines(dst)) >= 2_000, 120, what="the first records in the sink")
    assert worker.worker_pid is not None
    jvms = [p for p, name in _descendants(worker.worker_pid) if name == "java"]
    assert jvms, "no Spark JVM under the worker"
    for pid in jvms:
        os.kill(pid, signal.SIGKILL)
    append(src, 2_000, 3_000)  # the next batches meet the dead JVM
    wait_for(lambda: len(lines(dst)) >= 5_000, 180, what="records after the JVM died")
    for name in ("copy-in", "copy-out"):
        status = worker.client.status(name)
        assert status["tasks"][0]["state"] == "RUNNING", status
    worker.stop_worker()
    numbers = sorted({int(line.split()[1]) for line in lines(dst)})
    assert numbers == list(range(5_000))
