"""Integration fixtures: a real worker process (real Spark, SQLite and broker) per module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.worker_process import WorkerProcess


@pytest.fixture(scope="module")
def worker(
    bootstrap_servers: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[WorkerProcess]:
    """One worker process shared by a test module (Spark starts once per process)."""
    workdir: Path = tmp_path_factory.mktemp("worker")
    process = WorkerProcess(workdir, bootstrap_servers).start()
    try:
        yield process
    finally:
        process.stop()
