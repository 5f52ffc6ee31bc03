"""The commands of docs/spark-clusters.md, run as written: ``scripts/spark-cluster.sh start``
starts a master and two workers on 127.0.0.1 and prints the master URL the page names, and
``stop`` ends them. (The cluster tests run workers on such a cluster with the page's
properties: tests/integration/cluster/.)"""

from __future__ import annotations

import json
import os
import shutil
import socket
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.testkit import REPO
from tests.unit.docs.doc_blocks import block, run_shell

pytestmark = pytest.mark.integration

CLUSTER_DIR = REPO / "data" / "spark-cluster"


def port_free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


@pytest.fixture
def parked(tmp_path: Path) -> Iterator[None]:
    """A developer's data/spark-cluster/ is moved aside and put back afterwards."""
    for port in (7077, 8080):
        assert port_free(port), f"scripts/spark-cluster.sh needs port {port}; free it"
    aside = tmp_path / "spark-cluster-before-test"
    if CLUSTER_DIR.exists():
        shutil.move(str(CLUSTER_DIR), str(aside))
    try:
        yield
    finally:
        pids = CLUSTER_DIR / "pids"
        if pids.exists():  # the test failed before stop: leave no cluster behind
            run_shell("scripts/spark-cluster.sh stop", REPO)
        shutil.rmtree(CLUSTER_DIR, ignore_errors=True)
        if aside.exists():
            shutil.move(str(aside), str(CLUSTER_DIR))


def test_the_cluster_script_starts_and_stops_a_cluster(parked: None) -> None:
    start, stop = block("spark-cluster").text.strip().splitlines()
    url = start.split("# prints the master URL: ")[1].strip()

    started = run_shell(start, REPO, timeout=240)
    assert started.returncode == 0, started.stderr[-3000:]
    assert started.stdout.splitlines()[0] == url
    with urllib.request.urlopen("http://127.0.0.1:8080/json/", timeout=10) as answer:
        master = json.load(answer)
    assert master["status"] == "ALIVE"
    assert len([w for w in master["workers"] if w["state"] == "ALIVE"]) == 2
    pids = [int(p) for p in json.loads((CLUSTER_DIR / "pids").read_text())["pids"].values()]

    stopped = run_shell(stop, REPO, timeout=120)
    assert stopped.returncode == 0, stopped.stderr[-3000:]
    assert stopped.stdout.strip() == f"Stopped the Spark cluster at {url}"
    assert [pid for pid in pids if _alive(pid)] == []


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
