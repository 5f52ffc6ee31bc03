"""Integration fixtures: real worker processes (real Spark, SQLite and broker), started through
connect_lite.testing: one shared by a module (``worker``), or any a test makes (``new_worker``)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, sync_playwright

from connect_lite.testing import EmbeddedConnect, KafkaHelpers, spark_cluster
from connect_lite.testing.mariadb import MariaDbServer
from connect_lite.testing.postgres import PostgresServer
from tests.integration.testkit import worker_options

HERE = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under tests/integration carries the ``integration`` marker.

    The modules say so themselves (``pytestmark``), except test_readme_example.py: its text
    is the README's example, which must not need a marker a user's project lacks.
    """
    for item in items:
        if HERE in item.path.resolve().parents and item.get_closest_marker("integration") is None:
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="module")
def worker(
    bootstrap_servers: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[EmbeddedConnect]:
    """One worker shared by a test module (Spark starts once per process), on the session
    broker, with the testkit's options (``worker_options``)."""
    workdir: Path = tmp_path_factory.mktemp("worker")
    options = worker_options(workdir=workdir)
    with EmbeddedConnect(bootstrap_servers=bootstrap_servers, **options) as started:
        yield started


@pytest.fixture
def new_worker(
    connect_factory: Callable[..., EmbeddedConnect], tmp_path: Path
) -> Callable[..., EmbeddedConnect]:
    """``new_worker(**kwargs)``: an EmbeddedConnect, not started, as ``connect_factory`` makes
    it, with the testkit's options (``worker_options``) and the test's ``tmp_path`` as its
    default workdir; closed after the test."""

    def make(**kwargs: Any) -> EmbeddedConnect:
        kwargs.setdefault("workdir", tmp_path)
        return connect_factory(**worker_options(**kwargs))

    return make


@pytest.fixture(scope="session")
def spark_standalone(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[spark_cluster.SparkCluster]:
    """One Spark standalone cluster per test session, from the pyspark wheel: a master and two
    1-core workers on 127.0.0.1, killed with the test process however it ends."""
    directory = tmp_path_factory.mktemp("spark-cluster")
    cluster = spark_cluster.start(directory, workers=2, die_with_parent=True)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """One PostgreSQL 15 server per test session (Debian's binaries, initdb as an unprivileged
    user, pg_ctl on a free port on 127.0.0.1), stopped and removed at the end."""
    server = PostgresServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def mariadb() -> Iterator[MariaDbServer]:
    """One MariaDB server per test session (Debian's binaries, mariadbd as an unprivileged
    user on a free port on 127.0.0.1), stopped and removed at the end."""
    server = MariaDbServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def kafka(bootstrap_servers: str) -> KafkaHelpers:
    """Topics, produce and consume on the session's broker."""
    return KafkaHelpers(bootstrap_servers)


def chromium_path() -> str:
    """The headless Chromium the browser tests drive: $CONNECT_LITE_CHROMIUM, else Debian's
    ``chromium`` on PATH (``scripts/test.sh`` installs it)."""
    found = os.environ.get("CONNECT_LITE_CHROMIUM") or shutil.which("chromium")
    if not found:
        pytest.fail("No Chromium: run scripts/test.sh (it installs Debian's chromium package)")
    return found


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the whole session, driven by Playwright."""
    with sync_playwright() as playwright:
        # --no-sandbox: Chromium's sandbox refuses to run as root, which CI is.
        launched = playwright.chromium.launch(
            executable_path=chromium_path(), args=["--no-sandbox"]
        )
        try:
            yield launched
        finally:
            launched.close()
