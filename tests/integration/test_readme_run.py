"""The README's first command on this checkout: worker, embedded broker and demo pipeline."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
from pathlib import Path

import pytest

from tests.integration.worker_process import REPO, Rest, wait_for

pytestmark = pytest.mark.integration


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def test_run_command_copies_the_demo_file_through_kafka(tmp_path: Path) -> None:
    assert _port_free(8083), "scripts/run.sh needs port 8083 (standalone.properties); free it"
    data = REPO / "data"
    parked = tmp_path / "data-before-test"
    if data.exists():  # keep a developer's demo state; the test starts from a fresh checkout's
        shutil.move(str(data), str(parked))
    log = tmp_path / "run.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(REPO / "scripts" / "run.sh")],
            cwd=tmp_path,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        source = data / "demo" / "input.txt"
        target = data / "demo" / "output.txt"

        def copied() -> bool:
            if proc.poll() is not None:
                raise AssertionError(f"run.sh exited {proc.returncode}: {log.read_text()[-3000:]}")
            # The demo source creates its topic with one partition: an exact, ordered copy.
            return target.exists() and target.read_text() == source.read_text()

        wait_for(copied, 180, what="the demo output file")
        assert len(source.read_text().splitlines()) == 1000
        status = Rest("http://127.0.0.1:8083").get("/connectors?expand=status").body
        assert {n: s["status"]["connector"]["state"] for n, s in status.items()} == {
            "local-file-source": "RUNNING",
            "local-file-sink": "RUNNING",
        }
        os.killpg(proc.pid, signal.SIGTERM)
        assert proc.wait(60) == 0, log.read_text()[-3000:]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        shutil.rmtree(data, ignore_errors=True)
        if parked.exists():
            shutil.move(str(parked), str(data))
