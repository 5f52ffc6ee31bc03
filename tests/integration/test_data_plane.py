"""The data-plane process: tasks and Spark run in a child of the worker, at a lower priority;
its death fails its tasks (a restart brings them back), and it dies with the worker."""

from __future__ import annotations

import contextlib
import os
import signal
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from connect_lite.testing import EmbeddedConnect, wait_for
from connect_lite.testing.processes import descendants
from tests.integration.testkit import lines

pytestmark = pytest.mark.integration

CHILD = "connect_lite.dataplane.main"


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def data_plane_pid(worker: EmbeddedConnect) -> int:
    assert worker.worker_pid is not None
    found = [p for p in descendants(worker.worker_pid) if CHILD in cmdline(p)]
    assert len(found) == 1, f"data-plane processes: {found}"
    return found[0]


def thread_niceness(pid: int) -> set[int]:
    """The niceness of every thread of a process (Linux keeps one per thread)."""
    found = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            stat = (task / "stat").read_text()
            found.add(int(stat.rsplit(")", 1)[1].split()[16]))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def file_pipeline(worker: EmbeddedConnect, name: str, src: Path, dst: Path) -> tuple[str, str]:
    topic = f"{name}-{uuid.uuid4().hex[:8]}"
    source = {"connector.class": "FileStreamSource", "file": str(src), "topic": topic}
    sink = {"connector.class": "FileStreamSink", "file": str(dst), "topics": topic}
    assert worker.http.put(f"/connectors/{name}-in/config", source).status == 201
    assert worker.http.put(f"/connectors/{name}-out/config", sink).status == 201
    return f"{name}-in", f"{name}-out"


def test_tasks_and_spark_run_in_a_child_at_the_data_plane_niceness(
    worker: EmbeddedConnect, tmp_path: Path
) -> None:
    src, dst = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_text("one\ntwo\n")
    file_pipeline(worker, "nice", src, dst)
    wait_for(lambda: sorted(lines(dst)) == ["one", "two"], 120, what="both lines in the sink file")
    assert worker.worker_pid is not None
    child = data_plane_pid(worker)
    own = os.getpriority(os.PRIO_PROCESS, worker.worker_pid)
    assert thread_niceness(child) == {own + 10}  # data.plane.niceness's default, every thread
    jvms = [p for p in descendants(child) if "SparkSubmit" in cmdline(p)]
    assert jvms, "Spark's JVM is not a child of the data plane"
    assert all(thread_niceness(p) == {own + 10} for p in jvms)
    assert thread_niceness(worker.worker_pid) == {own}
    assert not [
        p for p in descendants(worker.worker_pid) - descendants(child) if "java" in cmdline(p)
    ]


def test_the_log_lines_of_tasks_come_out_of_the_worker_with_their_context(
    worker: EmbeddedConnect, tmp_path: Path
) -> None:
    src, dst = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_text("x\n")
    source, _ = file_pipeline(worker, "logs", src, dst)
    wait_for(
        lambda: (
            f"INFO [{source}|task-0] Source task started (connect_lite.task.{source}:"
            in worker.log_text()
        ),
        60,
        what="the task's start line, with its context, in the worker's log",
    )


def test_admin_loggers_list_and_change_the_data_planes_loggers(
    worker: EmbeddedConnect, tmp_path: Path
) -> None:
    src, dst = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_text("x\n")
    source, _ = file_pipeline(worker, "levels", src, dst)
    task_logger = f"connect_lite.task.{source}"
    wait_for(lambda: task_logger in worker.http.get("/admin/loggers").body, 60)
    changed = worker.http.put(f"/admin/loggers/{task_logger}", {"level": "DEBUG"})
    assert changed.status == 200 and task_logger in changed.body
    assert worker.http.get(f"/admin/loggers/{task_logger}").body["level"] == "DEBUG"
    with src.open("a") as out:
        out.write("y\n")
    wait_for(
        lambda: f"DEBUG [{source}|task-0]" in worker.log_text(),
        60,
        what="a DEBUG line of the task once its logger is at DEBUG",
    )
    assert worker.http.put(f"/admin/loggers/{task_logger}", {"level": "INFO"}).status == 200


def test_expected_library_noise_stays_out_of_the_log(
    worker: EmbeddedConnect, tmp_path: Path
) -> None:
    """py4j logs each connection to Spark's JVM it closes at INFO: a few lines every time a
    task stops. It is at WARN unless set otherwise, and /admin/loggers shows it. Spark's
    driver warns that each task's scheduler pool "has not been configured": made on first
    use by design, so that logger is at ERROR."""
    src, dst = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_text("quiet\n")
    source, sink = file_pipeline(worker, "quiet", src, dst)
    wait_for(lambda: lines(dst) == ["quiet"], 120, what="the line in the sink file")
    for name in (source, sink):
        assert worker.http.delete(f"/connectors/{name}").status == 204
    assert worker.http.get("/admin/loggers/py4j").body["level"] == "WARN"
    assert "Task stopped" in worker.log_text()
    assert "(py4j." not in worker.log_text()
    assert "which has not been configured" not in worker.log_text()


def test_a_dead_data_plane_fails_its_tasks_and_a_restart_runs_them_again(
    worker: EmbeddedConnect, tmp_path: Path
) -> None:
    src, dst = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_text("".join(f"line {n}\n" for n in range(100)))
    source, sink = file_pipeline(worker, "dead", src, dst)
    wait_for(lambda: len(lines(dst)) == 100, 120, what="the first 100 lines in the sink")
    os.kill(data_plane_pid(worker), signal.SIGKILL)

    def failed(name: str) -> bool:
        tasks = worker.client.status(name)["tasks"]
        return bool(tasks) and all(
            t["state"] == "FAILED" and "data-plane process exited unexpectedly" in t["trace"]
            for t in tasks
        )

    wait_for(lambda: failed(source) and failed(sink), 30, what="both tasks FAILED")
    health = worker.http.get("/health")
    assert health.status == 503 and "data-plane process exited" in health.body["message"]
    assert worker.http.get("/connectors").status == 200  # the control plane goes on

    with src.open("a") as out:
        out.write("".join(f"line {n}\n" for n in range(100, 150)))
    for name in (source, sink):
        assert worker.http.post(f"/connectors/{name}/restart?includeTasks=true").status == 202
    worker.wait_running(source, tasks=1)
    worker.wait_running(sink, tasks=1)
    expected = [f"line {n}" for n in range(150)]
    wait_for(lambda: set(lines(dst)) >= set(expected), 120, what="every line after the restart")
    assert worker.http.get("/health").status == 200


def test_the_data_plane_dies_with_the_worker(new_worker: Callable[..., EmbeddedConnect]) -> None:
    worker = new_worker().start()
    child = data_plane_pid(worker)
    tree = descendants(child)
    worker.kill_worker()  # kill -9: no orderly stop
    wait_for(lambda: not alive(child), 30, what="the data-plane process gone")
    wait_for(lambda: not any(alive(p) for p in tree), 30, what="Spark's processes gone")
