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
from connect_lite.pipeline.session import DAEMON_MODULE_KEY, QUIET_DAEMON_MODULE, effective_conf
from connect_lite.protocol.environment import package_home, python_path
from connect_lite.testing import wait_for


def test_a_local_master_runs_the_quiet_daemon_and_a_users_choice_wins() -> None:
    assert effective_conf({"spark.master": "local[2]"})[DAEMON_MODULE_KEY] == QUIET_DAEMON_MODULE
    assert python_daemon.__name__ == QUIET_DAEMON_MODULE
    # A cluster's executors cannot import connect_lite before it is shipped: PySpark's daemon.
    assert DAEMON_MODULE_KEY not in effective_conf({"spark.master": "spark://127.0.0.1:7077"})
    mine = {"spark.master": "local[2]", DAEMON_MODULE_KEY: "pyspark.daemon"}
    assert effective_conf(mine)[DAEMON_MODULE_KEY] == "pyspark.daemon"


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
    """The daemon as Spark starts it on a local master (Unix sockets, reused workers, a failed
    flush kills the worker): a connection that the JVM closes before sending a task, which is
    how it retires an idle worker. PySpark's own daemon shows the traceback, so the test sees
    what it guards against."""
    env = {
        **os.environ,
        "PYTHONPATH": python_path(package_home(), os.environ.get("PYTHONPATH")),
        "PYTHON_UNIX_DOMAIN_ENABLED": "true",
        "PYTHON_WORKER_FACTORY_SOCK_DIR": str(tmp_path),
        "SPARK_REUSE_WORKER": "1",
        "PYTHON_DAEMON_KILL_WORKER_ON_FLUSH_FAILURE": "true",
    }
    daemon = subprocess.Popen(
        [sys.executable, "-m", module, "pyspark.worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        assert daemon.stdout is not None and daemon.stdin is not None
        path = daemon.stdout.read(_read_int(daemon.stdout)).decode()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as jvm:
            jvm.connect(path)
            pid = _read_int(jvm.makefile("rb"))
        # Closed with no task sent. The daemon ignores SIGCHLD, so the worker is reaped at exit.
        wait_for(lambda: not Path(f"/proc/{pid}").exists(), 60, what="the worker's exit")
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
