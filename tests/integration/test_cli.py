"""The command line: help, version, bad files and worker configs, connector files, SIGTERM."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from connect_lite.testing import EmbeddedConnect, wait_for
from tests.integration.testkit import REPO

pytestmark = pytest.mark.integration


def run_app(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(REPO / "app.py"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


USAGE = (
    "usage: connect-lite [options] worker.properties [connector1.properties connector2.json ...]"
)


def test_usage_without_arguments(tmp_path: Path) -> None:
    result = run_app(cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        USAGE,
        "connect-lite: error: the following arguments are required: worker.properties",
    ]


def test_help_and_version_go_to_stdout_and_exit_0(tmp_path: Path) -> None:
    help_ = run_app("--help", cwd=tmp_path)
    assert (help_.returncode, help_.stderr) == (0, ""), help_.stderr
    assert help_.stdout.startswith(USAGE + "\n")
    for option in ("--version", "--log-level", "--log-config FILE", "--log-format"):
        assert option in help_.stdout
    version = run_app("--version", cwd=tmp_path)
    assert (version.returncode, version.stderr) == (0, ""), version.stderr
    lines = version.stdout.splitlines()
    assert [line.split(" ")[0] for line in lines] == [
        "connect-lite",
        "Spark",
        "confluent-kafka",
        "Python",
    ]
    assert re.fullmatch(r"confluent-kafka [\d.]+, librdkafka [\d.]+", lines[2])


def test_a_missing_file_is_one_line_and_exit_1(tmp_path: Path) -> None:
    missing = run_app("missing.properties", cwd=tmp_path)
    assert missing.returncode == 1
    assert missing.stderr.splitlines() == [
        "connect-lite: cannot read worker properties missing.properties: No such file or directory"
    ]
    props = tmp_path / "worker.properties"
    props.write_text("embedded.broker.enable=true\n")
    connector = run_app(str(props), "missing.json", cwd=tmp_path)
    assert connector.returncode == 1
    assert connector.stderr.splitlines() == [
        "connect-lite: cannot read connector file missing.json: No such file or directory"
    ]


def test_bad_worker_config_stops_with_one_line_per_problem(tmp_path: Path) -> None:
    props = tmp_path / "bad.properties"
    props.write_text(
        "bootstrap.servers=127.0.0.1:1\n"
        "offset.flush.interval.ms=soon\n"
        "embedded.broker.port=99999\n"
        "listeners=ftp://nowhere\n"
    )
    result = run_app(str(props), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    problems = [line for line in result.stderr.splitlines() if line.startswith("Invalid value")]
    assert len(problems) == 3, result.stderr
    assert any("offset.flush.interval.ms" in p for p in problems)
    assert any("embedded.broker.port" in p for p in problems)
    assert any("listeners" in p for p in problems)


def test_connector_files_and_sigterm_with_embedded_broker(
    new_worker: Callable[..., EmbeddedConnect], tmp_path: Path
) -> None:
    src, dst = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_text("".join(f"cli line {i}\n" for i in range(100)))
    source_props = tmp_path / "source.properties"
    source_props.write_text(
        "name=cli-source\n"
        "connector.class=org.apache.kafka.connect.file.FileStreamSourceConnector\n"
        f"file={src}\n"
        "topic=cli-topic\n"
        "topic.creation.default.replication.factor=1\n"
        "topic.creation.default.partitions=1\n"
    )
    sink_json = tmp_path / "sink.json"
    sink_json.write_text(
        json.dumps(
            {
                "name": "cli-sink",
                "config": {
                    "connector.class": "FileStreamSink",
                    "file": str(dst),
                    "topics": "cli-topic",
                },
            }
        )
    )
    worker = new_worker(
        start_broker=False,
        worker_properties={"embedded.broker.enable": "true"},
        connector_files=[source_props, sink_json],
    ).start()
    assert sorted(worker.http.get("/connectors").body) == ["cli-sink", "cli-source"]
    wait_for(lambda: dst.exists() and len(dst.read_text().splitlines()) == 100, 120)
    assert sorted(dst.read_text().splitlines()) == sorted(src.read_text().splitlines())
    broker_pids = _tansu_children(worker)
    assert broker_pids, "the embedded broker should run as a child process"
    log = worker.log_text()
    # Kafka's layout, with the context of the connector's and the tasks' own lines
    layout = r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] INFO \[%s\] %s \([\w.-]+:\d+\)$"
    for context, message in (
        ("cli-source|worker", "Starting file source connector reading from .*"),
        ("cli-source|task-0", "Source task started"),
        ("cli-sink|task-0", "Sink task started, subscribed to .*"),
    ):
        assert re.search(layout % (re.escape(context), message), log, re.M), (context, log)
    assert worker.terminate_worker() == 0
    for pid in broker_pids:
        wait_for(lambda pid=pid: not os.path.exists(f"/proc/{pid}"), 30, what=f"broker {pid} gone")
    assert "connect-lite stopped" in worker.log_text()
    # its clients closed first (the tasks', the topic creator's, then the data plane's
    # process), the broker exits on SIGTERM and is not killed
    assert "still up after SIGTERM" not in worker.log_text()


def test_a_bad_connector_file_fails_before_anything_starts(
    new_worker: Callable[..., EmbeddedConnect], tmp_path: Path
) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"name": "good", "connector.class": "FileStreamSink"}))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"connector.class": "FileStreamSink", "topics": "t"}))
    worker = new_worker(
        start_broker=False,
        worker_properties={"embedded.broker.enable": "true"},
        connector_files=[good, bad],
    )
    worker.start(wait_healthy=False)
    assert worker.wait_worker_exit(60) == 3
    log = worker.log_text()
    [line] = log.splitlines()
    assert re.fullmatch(
        rf"\[[\d :,-]+\] ERROR Invalid connector file {re.escape(str(bad))}: Connector "
        rf"configuration at '{re.escape(str(bad))}' is missing the mandatory 'name' "
        r"configuration \(connect_lite\.cli:\d+\)",
        line,
    )
    for started in ("Embedded broker listening", "Starting Spark session", "State file"):
        assert started not in log
    assert not worker.state_file.exists()


def test_log_format_json_from_the_worker_key(
    new_worker: Callable[..., EmbeddedConnect], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.properties"
    bad.write_text("connector.class=FileStreamSink\n")
    worker = new_worker(
        start_broker=False, worker_properties={"log.format": "json"}, connector_files=[bad]
    )
    worker.start(wait_healthy=False)
    assert worker.wait_worker_exit(60) == 3
    [line] = worker.log_text().splitlines()
    logged = json.loads(line)
    assert (logged["level"], logged["logger"]) == ("ERROR", "connect_lite.cli")
    assert logged["message"].startswith(f"Invalid connector file {bad}: ")


def _tansu_children(worker: EmbeddedConnect) -> list[int]:
    pid = worker.worker_pid
    assert pid is not None
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    pids = []
    for pid in children:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        if b"tansu" in cmdline:
            pids.append(int(pid))
    return pids
