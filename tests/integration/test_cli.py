"""The command line: worker config errors, connector files, SIGTERM with the embedded broker."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.worker_process import REPO, WorkerProcess, free_port, wait_for

pytestmark = pytest.mark.integration


def run_app(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(REPO / "app.py"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_usage_without_arguments(tmp_path: Path) -> None:
    result = run_app(cwd=tmp_path)
    assert result.returncode == 1
    assert "Usage: python app.py worker.properties" in result.stderr


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


def test_connector_files_and_sigterm_with_embedded_broker(tmp_path: Path) -> None:
    src, dst = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_text("".join(f"cli line {i}\n" for i in range(100)))
    source_props = tmp_path / "source.properties"
    source_props.write_text(
        "name=cli-source\n"
        "connector.class=org.apache.kafka.connect.file.FileStreamSourceConnector\n"
        f"file={src}\n"
        "topic=cli-topic\n"
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
    worker = WorkerProcess(
        tmp_path,
        None,
        extra={"embedded.broker.enable": "true"},
        connector_files=[str(source_props), str(sink_json)],
    ).start()
    try:
        assert sorted(worker.rest.get("/connectors").body) == ["cli-sink", "cli-source"]
        wait_for(lambda: dst.exists() and len(dst.read_text().splitlines()) == 100, 120)
        assert sorted(dst.read_text().splitlines()) == sorted(src.read_text().splitlines())
        broker_pids = _tansu_children(worker)
        assert broker_pids, "the embedded broker should run as a child process"
        assert worker.terminate() == 0
        for pid in broker_pids:
            wait_for(
                lambda pid=pid: not os.path.exists(f"/proc/{pid}"), 30, what=f"broker {pid} gone"
            )
        assert "connect-lite stopped" in worker.log()
    finally:
        worker.stop()


def test_connector_file_without_name_fails_startup(bootstrap_servers: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"connector.class": "FileStreamSink", "topics": "t"}))
    worker = WorkerProcess(
        tmp_path, bootstrap_servers, connector_files=[str(bad)], port=free_port()
    )
    worker.start(wait_healthy=False)
    assert worker.proc is not None
    assert worker.proc.wait(120) == 3
    expected = (
        f"ERROR Failed to create connector from {bad}: Connector configuration at '{bad}' "
        "is missing the mandatory 'name' configuration (connect_lite)"
    )
    assert [line for line in worker.log().splitlines() if line.endswith(expected)], worker.log()


def _tansu_children(worker: WorkerProcess) -> list[int]:
    assert worker.proc is not None
    children = Path(f"/proc/{worker.proc.pid}/task/{worker.proc.pid}/children").read_text().split()
    pids = []
    for pid in children:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        if b"tansu" in cmdline:
            pids.append(int(pid))
    return pids
