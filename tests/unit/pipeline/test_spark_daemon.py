"""Spark's Python daemon for local masters: what it imports before it forks, and when it is
used (connect_lite/pipeline/daemon/connect_lite_spark_daemon.py, session.effective_conf)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from connect_lite.pipeline import session
from connect_lite.pipeline.session import DAEMON_MODULE, DAEMON_MODULE_DIR, effective_conf


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in /proc")
def test_the_daemon_module_starts_no_thread_before_the_fork() -> None:
    """A process with threads must not fork: importing the daemon module (what Spark does
    with ``python -m``, minus running the manager) leaves one OS thread, and no pyarrow or
    pandas, which start threads when imported."""
    code = textwrap.dedent(
        f"""
        import os, sys
        sys.path.insert(0, {str(DAEMON_MODULE_DIR)!r})
        import {DAEMON_MODULE}
        print(len(os.listdir("/proc/self/task")), "pyspark.worker" in sys.modules,
              "pyarrow" in sys.modules, "pandas" in sys.modules)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.split() == ["1", "True", "False", "False"]


def test_a_local_master_forks_workers_from_connect_lites_daemon() -> None:
    conf = effective_conf({"spark.master": "local[2]"})
    assert conf["spark.python.daemon.module"] == DAEMON_MODULE
    assert str(DAEMON_MODULE_DIR) in conf["spark.executorEnv.PYTHONPATH"].split(os.pathsep)


def test_the_users_daemon_module_wins() -> None:
    conf = effective_conf({"spark.master": "local[2]", "spark.python.daemon.module": "mine"})
    assert conf["spark.python.daemon.module"] == "mine"
    assert str(DAEMON_MODULE_DIR) not in conf["spark.executorEnv.PYTHONPATH"].split(os.pathsep)


def test_a_cluster_keeps_pysparks_daemon() -> None:
    """Executors elsewhere have no such directory on their path."""
    conf = effective_conf({"spark.master": "spark://h:7077"})
    assert "spark.python.daemon.module" not in conf


def test_without_the_file_pysparks_daemon_is_used(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(session, "DAEMON_MODULE_FILE", tmp_path / "missing.py")
    conf = effective_conf({"spark.master": "local[2]"})
    assert "spark.python.daemon.module" not in conf
    assert str(DAEMON_MODULE_DIR) not in conf["spark.executorEnv.PYTHONPATH"].split(os.pathsep)
