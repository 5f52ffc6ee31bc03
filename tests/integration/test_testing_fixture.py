"""connect_lite.testing through its documented API: the pytest plugin's `connect` fixture."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from connect_lite.testing import ConnectRestError, EmbeddedConnect, WaitTimeout

pytest_plugins = ["connect_lite.testing.pytest_plugin"]

pytestmark = pytest.mark.integration

STRING = "org.apache.kafka.connect.storage.StringConverter"


def ps_tree() -> dict[int, tuple[int, str]]:
    """pid -> (ppid, command line) of every process, as ``ps`` shows them (no zombies)."""
    out = subprocess.run(
        ["ps", "-eo", "pid=,ppid=,stat=,args="], capture_output=True, text=True, check=True
    ).stdout
    table = {}
    for line in out.splitlines():
        pid, ppid, stat, *args = line.split(None, 3)
        if not stat.startswith("Z"):
            table[int(pid)] = (int(ppid), args[0] if args else "")
    return table


def tree_of(pid: int) -> dict[int, str]:
    """``pid`` and its live descendants, with their command lines."""
    table = ps_tree()
    found = {pid: table[pid][1]} if pid in table else {}
    grew = True
    while grew:
        grew = False
        for child, (ppid, args) in table.items():
            if ppid in found and child not in found:
                found[child] = args
                grew = True
    return found


def wait_for_jvm(worker_pid: int, timeout: float = 60) -> dict[int, str]:
    """The worker's process tree once Spark's JVM is part of it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        tree = tree_of(worker_pid)
        if any("java" in args.split(" ")[0] for args in tree.values()):
            return tree
        time.sleep(0.05)
    raise AssertionError(f"no JVM under worker {worker_pid}: {tree_of(worker_pid)}")


def still_running(pids: dict[int, str]) -> dict[int, str]:
    table = ps_tree()
    return {pid: args for pid, args in pids.items() if pid in table}


def file_source(path: Path, topic: str) -> dict[str, str]:
    return {
        "connector.class": "FileStreamSource",
        "file": str(path),
        "topic": topic,
        "value.converter": STRING,
    }


def file_sink(path: Path, topic: str) -> dict[str, str]:
    return {
        "connector.class": "FileStreamSink",
        "file": str(path),
        "topics": topic,
        "value.converter": STRING,
    }


def test_source_and_sink_state_survives_a_worker_restart(
    connect: EmbeddedConnect, tmp_path: Path
) -> None:
    source_in, sink_out = tmp_path / "in.txt", tmp_path / "out.txt"
    source_in.write_text("".join(f"line-{i}\n" for i in range(5)))
    connect.create_topic("lines", partitions=1)
    connect.client.create("source", file_source(source_in, "lines"))
    connect.client.create("sink", file_sink(sink_out, "lines"))
    connect.wait_running("source", tasks=1)
    connect.wait_running("sink", tasks=1)
    values = [m.value for m in connect.wait_topic_records("lines", 5)]
    assert values == [f"line-{i}".encode() for i in range(5)]
    sink_at_5 = [
        {"partition": {"kafka_topic": "lines", "kafka_partition": 0}, "offset": {"kafka_offset": 5}}
    ]
    connect.wait_offsets("sink", lambda offsets: offsets == sink_at_5)
    source_offsets = connect.wait_offsets("source", lambda offsets: len(offsets) == 1)
    connect.client.pause("sink")
    connect.wait_state("sink", "PAUSED")

    old_pid = connect.worker_pid
    connect.restart_worker()
    assert connect.worker_pid != old_pid

    assert sorted(connect.client.connectors()) == ["sink", "source"]
    assert connect.wait_state("sink", "PAUSED")["connector"]["state"] == "PAUSED"
    assert connect.client.offsets("source") == source_offsets
    connect.wait_running("source", tasks=1)
    with source_in.open("a") as more:
        more.write("line-5\nline-6\n")
    records = connect.wait_topic_records("lines", 7)
    assert [m.value for m in records] == [f"line-{i}".encode() for i in range(7)]
    assert len(connect.consume("lines", timeout=3)) == 7  # the source did not start over
    connect.client.resume("sink")
    connect.wait_running("sink", tasks=1)
    sink_at_7 = [{**sink_at_5[0], "offset": {"kafka_offset": 7}}]
    connect.wait_offsets("sink", lambda offsets: offsets == sink_at_7)
    assert sink_out.read_text().splitlines() == [f"line-{i}" for i in range(7)]


def test_errors_are_typed_and_waits_say_what_they_saw(
    connect: EmbeddedConnect, tmp_path: Path
) -> None:
    with pytest.raises(ConnectRestError) as missing:
        connect.client.status("nope")
    assert (missing.value.status, missing.value.error_code) == (404, 404)
    assert missing.value.message == "No status found for connector nope"
    with pytest.raises(ConnectRestError) as invalid:
        connect.client.create("bad", {"connector.class": "NoSuchConnector"})
    assert (invalid.value.status, invalid.value.error_code) == (400, 400)
    assert invalid.value.message.startswith(
        "Failed to find any class that implements Connector and which name matches "
        "NoSuchConnector, available connectors are: "
    )

    connect.client.create("stays-running", {**file_sink(tmp_path / "out.txt", "quiet")})
    connect.wait_running("stays-running", tasks=1)
    with pytest.raises(WaitTimeout) as paused:
        connect.wait_state("stays-running", "PAUSED", timeout=1)
    assert "connector 'stays-running' in state PAUSED" in str(paused.value)
    assert '"state": "RUNNING"' in str(paused.value)
    with pytest.raises(WaitTimeout) as task:
        connect.wait_task_state("stays-running", 7, "RUNNING", timeout=1)
    assert "ConnectRestError" in str(task.value) and "404" in str(task.value)

    def has_two_offsets(offsets: list[dict[str, object]]) -> bool:
        """two committed partitions"""
        return len(offsets) == 2

    with pytest.raises(WaitTimeout) as offsets:
        connect.wait_offsets("stays-running", has_two_offsets, timeout=1)
    assert "two committed partitions" in str(offsets.value)
    assert "last seen: []" in str(offsets.value)
    connect.produce("few", ["only-one"])
    with pytest.raises(WaitTimeout) as records:
        connect.wait_topic_records("few", 3, timeout=2)
    assert '"records_seen": 1' in str(records.value) and "only-one" in str(records.value)


def test_the_worker_process_is_killed_stopped_and_started_again_on_its_state(
    connect_factory: Callable[..., EmbeddedConnect], tmp_path: Path
) -> None:
    """What a test of the worker itself does through the fixture: kill -9 and SIGTERM with
    their exit codes, a start again on the same state file and port, the log, /metrics and
    plain HTTP answers."""
    connect = connect_factory(workdir=tmp_path / "w").start()
    url = connect.rest_url
    connect.client.create("sink", file_sink(tmp_path / "out.txt", "quiet"))
    connect.wait_running("sink", tasks=1)
    assert connect.kill_worker() == -signal.SIGKILL
    assert connect.worker_exit_code == -signal.SIGKILL

    connect.start_worker()
    assert connect.worker_exit_code is None
    assert connect.rest_url == url
    assert connect.client.connectors() == ["sink"]  # from the state file
    connect.wait_running("sink", tasks=1)
    missing = connect.http.get("/connectors/nope")
    assert (missing.status, missing.body["error_code"]) == (404, 404)
    status = connect.metrics().find("kafka_connect_connector_metrics_status", connector="sink")
    assert status == [({"connector": "sink", "status": "running"}, 1.0)]
    assert connect.terminate_worker() == 0  # a clean exit (it was SIGABRT: the watchdog)
    assert connect.log_text().count("connect-lite stopped") == 1  # the killed one did not


REUSE_TESTS = """
import json, os
from pathlib import Path

import pytest

pytest_plugins = ["connect_lite.testing.pytest_plugin"]
pytestmark = pytest.mark.connect_lite(reuse="module")
SINK = {
    "connector.class": "FileStreamSink",
    "file": str(Path(os.environ["REPORT_FILE"]).with_name("sink.txt")),  # allowed: a temp file
    "topics": "quiet",
    "value.converter": "org.apache.kafka.connect.storage.StringConverter",
}


def report(name, connect):
    entry = {"test": name, "pid": connect.worker_pid, "connectors": connect.client.connectors()}
    with open(os.environ["REPORT_FILE"], "a") as out:
        out.write(json.dumps(entry) + "\\n")


def test_first(connect):
    connect.client.create("left-behind", SINK)
    report("first", connect)


def test_second(connect):
    report("second", connect)
"""


@pytest.mark.timeout(300)
def test_module_reuse_shares_one_worker_and_cleans_it_between_tests(tmp_path: Path) -> None:
    """A pytest run of its own: two tests of one module, with ``reuse="module"``."""
    (tmp_path / "test_reuse.py").write_text(REUSE_TESTS)
    report = tmp_path / "report.jsonl"
    env = {**os.environ, "REPORT_FILE": str(report)}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_reuse.py"]
    inner = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    assert inner.returncode == 0, inner.stdout + inner.stderr
    first, second = (json.loads(line) for line in report.read_text().splitlines())
    assert (first["test"], first["connectors"]) == ("first", ["left-behind"])
    assert second["test"] == "second"
    assert second["pid"] == first["pid"]  # one worker for the module
    assert second["connectors"] == []  # the first test's connector was deleted after it


def test_exception_inside_the_context_leaves_no_process(tmp_path: Path) -> None:
    seen: dict[int, str] = {}
    with (
        pytest.raises(RuntimeError, match="test body failed"),
        EmbeddedConnect(workdir=tmp_path / "w") as embedded,
    ):
        assert embedded.worker_pid is not None and embedded.broker_pid is not None
        seen.update(wait_for_jvm(embedded.worker_pid))
        seen[embedded.broker_pid] = "tansu"
        raise RuntimeError("test body failed")
    assert still_running(seen) == {}
    assert any("java" in args for args in seen.values())


INNER_TEST = """
import json, os, time
from pathlib import Path

pytest_plugins = ["connect_lite.testing.pytest_plugin"]


def test_inner(connect, connect_broker):
    report = {"worker": connect.worker_pid, "broker": connect_broker.pid}
    Path(os.environ["PIDS_FILE"]).write_text(json.dumps(report))
    go = Path(os.environ["PIDS_FILE"] + ".go")
    deadline = time.monotonic() + 60
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    if os.environ["MODE"] == "fail":
        assert False, "the test body fails"
    time.sleep(120)  # until Ctrl-C
"""


@pytest.mark.parametrize("mode", ["fail", "interrupt"])
def test_no_process_left_after_a_failing_test_or_ctrl_c(tmp_path: Path, mode: str) -> None:
    (tmp_path / "test_inner.py").write_text(textwrap.dedent(INNER_TEST))
    pids_file = tmp_path / "pids.json"
    env = {**os.environ, "PIDS_FILE": str(pids_file), "MODE": mode}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_inner.py"]
    inner = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not pids_file.exists() and inner.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        report = json.loads(pids_file.read_text())
        seen = wait_for_jvm(report["worker"])
        seen[report["broker"]] = "tansu"
        Path(f"{pids_file}.go").touch()
        if mode == "interrupt":
            inner.send_signal(signal.SIGINT)
        out, _ = inner.communicate(timeout=60)
    finally:
        if inner.poll() is None:
            inner.kill()
    assert inner.returncode == (1 if mode == "fail" else 2), out
    assert still_running(seen) == {}
