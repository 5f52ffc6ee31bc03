"""The README's first command on this checkout: worker, embedded broker and demo pipeline;
and the same command with the optional lake pipeline, read back as the README shows."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.integration.worker_process import REPO, Rest, wait_for

pytestmark = pytest.mark.integration

DATA = REPO / "data"
SOURCE = DATA / "demo" / "input.txt"


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


@contextmanager
def demo(tmp_path: Path, *args: str) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    """``scripts/run.sh [args]`` from a fresh checkout's state: a developer's ``data/`` is
    parked and put back afterwards. Yields the process and its log."""
    assert _port_free(8083), "scripts/run.sh needs port 8083 (standalone.properties); free it"
    parked = tmp_path / "data-before-test"
    if DATA.exists():
        shutil.move(str(DATA), str(parked))
    log = tmp_path / "run.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(REPO / "scripts" / "run.sh"), *args],
            cwd=tmp_path,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield proc, log
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        shutil.rmtree(DATA, ignore_errors=True)
        if parked.exists():
            shutil.move(str(parked), str(DATA))


def alive(proc: subprocess.Popen[bytes], log: Path) -> None:
    if proc.poll() is not None:
        raise AssertionError(f"run.sh exited {proc.returncode}: {log.read_text()[-3000:]}")


def stop(proc: subprocess.Popen[bytes], log: Path) -> None:
    os.killpg(proc.pid, signal.SIGTERM)
    assert proc.wait(60) == 0, log.read_text()[-3000:]


def test_run_command_copies_the_demo_file_through_kafka(tmp_path: Path) -> None:
    with demo(tmp_path) as (proc, log):
        target = DATA / "demo" / "output.txt"

        def copied() -> bool:
            alive(proc, log)
            # The demo source creates its topic with one partition: an exact, ordered copy.
            return target.exists() and target.read_text() == SOURCE.read_text()

        wait_for(copied, 180, what="the demo output file")
        assert len(SOURCE.read_text().splitlines()) == 1000
        status = Rest("http://127.0.0.1:8083").get("/connectors?expand=status").body
        assert {n: s["status"]["connector"]["state"] for n, s in status.items()} == {
            "local-file-source": "RUNNING",
            "local-file-sink": "RUNNING",
        }
        stop(proc, log)


def readme_spark_read() -> str:
    """The README's command that reads the demo's lake back with Spark."""
    text = (REPO / "README.md").read_text()
    found = re.search(r"^\.venv/bin/python -c '(from pyspark[^\n]*)'$", text, re.MULTILINE)
    assert found is not None, "the README shows no spark.read of the demo lake"
    return found.group(1)


def test_the_optional_lake_pipeline_writes_parquet_that_spark_reads(tmp_path: Path) -> None:
    with demo(tmp_path, "scripts/demo/lake-sink.json") as (proc, log):
        topic_dir = DATA / "demo" / "lake" / "topics" / "connect-lite-demo" / "partition=0"

        def files() -> list[Path]:
            alive(proc, log)
            return sorted(topic_dir.glob("*.parquet")) if topic_dir.exists() else []

        # flush.size=500 and 1,000 demo lines: two complete files, by the offsets they hold
        found = wait_for(lambda: len(files()) == 2 and files(), 180, what="two Parquet files")
        assert [p.name for p in found] == [
            "connect-lite-demo+0+0000000000+0000000499.parquet",
            "connect-lite-demo+0+0000000500+0000000999.parquet",
        ]
        read = subprocess.run(
            [str(REPO / ".venv" / "bin" / "python"), "-c", readme_spark_read()],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert read.returncode == 0, read.stderr[-3000:]
        first = sorted(SOURCE.read_text().splitlines())[:3]
        assert all(line in read.stdout for line in first), read.stdout
        assert "|partition|" in read.stdout.replace(" ", "")  # the directories' column
        stop(proc, log)
