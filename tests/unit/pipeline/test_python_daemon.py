"""Spark's Python daemon on a local master: a worker that Spark retires by closing its socket
ends quietly, where PySpark's own daemon prints a BrokenPipeError traceback."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from connect_lite.pipeline import python_daemon
from connect_lite.pipeline.session_start import (
    DAEMON_MODULE_KEY,
    QUIET_DAEMON_MODULE,
    effective_conf,
)
from connect_lite.protocol.environment import package_home, python_path
from connect_lite.testing import wait_for


def test_a_local_master_runs_the_quiet_daemon_and_a_users_choice_wins() -> None:
    assert effective_conf({"spark.master": "local[2]"})[DAEMON_MODULE_KEY] == QUIET_DAEMON_MODULE
    assert python_daemon.__name__ == QUIET_DAEMON_MODULE
    # A cluster's executors cannot import connect_lite before it is shipped: PySpark's daemon.
    assert DAEMON_MODULE_KEY not in effective_conf({"spark.master": "spark://127.0.0.1:7077"})
    mine = {"spark.master": "local[2]", DAEMON_MODULE_KEY: "pyspark.daemon"}
    assert effective_conf(mine)[DAEMON_MODULE_KEY] == "pyspark.daemon"


@pytest.fixture(autouse=True)
def _signals_untouched(monkeypatch: pytest.MonkeyPatch) -> None:
    """worker() runs in a forked worker process; here, it leaves this process's signals be."""
    monkeypatch.setattr(python_daemon, "_worker_signals", lambda: None)


def test_a_connection_closed_before_a_task_ends_the_worker_without_pysparks_code(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    called: list[bool] = []
    monkeypatch.setattr(python_daemon, "_pyspark_worker", lambda sock, auth: called.append(auth))
    ours, jvm = socket.socketpair()
    with ours, jvm:
        jvm.close()
        assert python_daemon.worker(ours, True) == 1
    assert called == []


def test_a_task_is_left_whole_for_pysparks_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[bytes] = []

    def pyspark_worker(sock: socket.socket, authenticated: bool) -> int:
        read.append(sock.recv(100))
        return 0

    monkeypatch.setattr(python_daemon, "_pyspark_worker", pyspark_worker)
    ours, jvm = socket.socketpair()
    with ours, jvm:
        jvm.sendall(b"task")
        assert python_daemon.worker(ours, True) == 0
    assert read == [b"task"]


def _start_daemon(module: str, socket_dir: Path) -> subprocess.Popen[bytes]:
    """The daemon as Spark starts it on a local master: Unix sockets, reused workers, and a
    failed flush that kills the worker."""
    env = {
        **os.environ,
        "PYTHONPATH": python_path(package_home(), os.environ.get("PYTHONPATH")),
        "PYTHON_UNIX_DOMAIN_ENABLED": "true",
        "PYTHON_WORKER_FACTORY_SOCK_DIR": str(socket_dir),
        "SPARK_REUSE_WORKER": "1",
        "PYTHON_DAEMON_KILL_WORKER_ON_FLUSH_FAILURE": "true",
    }
    return subprocess.Popen(
        [sys.executable, "-m", module, "pyspark.worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )


def _connect(daemon: subprocess.Popen[bytes]) -> tuple[socket.socket, int]:
    """A connection as the JVM makes one for a task, and the pid of the worker it got."""
    assert daemon.stdout is not None
    path = daemon.stdout.read(_read_int(daemon.stdout)).decode()
    jvm = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    jvm.connect(path)
    return jvm, _read_int(jvm.makefile("rb"))


def _gone(pid: int) -> bool:
    """The daemon ignores SIGCHLD, so its workers are reaped as they exit."""
    return not Path(f"/proc/{pid}").exists()


def _read_int(stream: object) -> int:
    data = stream.read(4)  # type: ignore[attr-defined]
    assert len(data) == 4, data
    return int(struct.unpack("!i", data)[0])


@pytest.mark.parametrize(
    ("module", "noisy"), [("pyspark.daemon", True), (QUIET_DAEMON_MODULE, False)]
)
def test_a_worker_retired_while_idle_prints_nothing(
    tmp_path: Path, module: str, noisy: bool
) -> None:
    """A connection that the JVM closes before sending a task, which is how it retires an idle
    worker. PySpark's own daemon shows the traceback, so the test sees what it guards against."""
    daemon = _start_daemon(module, tmp_path)
    try:
        jvm, pid = _connect(daemon)
        jvm.close()  # no task sent
        wait_for(lambda: _gone(pid), 60, what="the worker's exit")
        _, stderr = daemon.communicate(timeout=60)  # closes its stdin: how Spark stops it
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    text = stderr.decode()
    if noisy:
        assert "BrokenPipeError" in text and "Traceback" in text, text
    else:
        assert text == ""


def test_a_worker_waiting_for_its_first_task_ends_with_the_daemon(tmp_path: Path) -> None:
    """When the daemon stops it sends its workers SIGHUP, which it ignores itself: a worker
    forked from it waits for its first task with PySpark's worker's handlers, not the daemon's."""
    daemon = _start_daemon(QUIET_DAEMON_MODULE, tmp_path)
    try:
        jvm, pid = _connect(daemon)
        with jvm:  # still open: only the signal can end the worker
            daemon.communicate(timeout=60)
            wait_for(lambda: _gone(pid), 30, what="the worker's end with its daemon")
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
