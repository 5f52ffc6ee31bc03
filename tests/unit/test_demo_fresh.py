"""``scripts/run.sh --fresh``: the demo started afresh. The embedded broker keeps topics in
memory, the state file keeps the connectors and their offsets, so a demo run again resumes
after records that are gone; --fresh removes the demo's state and outputs, in data/ only."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from types import ModuleType

import pytest

from connect_lite.protocol.environment import package_home, python_path
from connect_lite.storage.base import StateFileInUseError
from connect_lite.storage.sqlite.lock import StateFileLock
from tests.file_modules import load_file
from tests.unit.docs.doc_blocks import REPO, block, run_shell

SCRIPTS = REPO / "scripts"


@pytest.fixture(scope="module")
def fresh() -> ModuleType:
    return load_file("_demo_start_fresh", SCRIPTS / "demo" / "start_fresh.py")


def demo_data(data: Path) -> dict[str, Path]:
    """A data/ directory as a demo leaves it, lake included, plus a file of the user's."""
    files = {
        name: data / name
        for name in (
            "connect-lite.db",
            "connect-lite.db-wal",
            "connect-lite.db-shm",
            "demo/input.txt",
            "demo/output.txt",
            "demo/lake/topics/connect-lite-demo/partition=0/a.parquet",
            "mine.txt",
        )
    }
    for path in files.values():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
    return files


def test_the_state_file_of_the_script_is_the_demos() -> None:
    assert "state.storage.file=data/connect-lite.db" in (REPO / "standalone.properties").read_text()


def test_fresh_removes_the_state_and_the_outputs_and_keeps_the_input(
    fresh: ModuleType, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    files = demo_data(data)
    removed = fresh.start_fresh(data)
    assert removed == [
        data / "connect-lite.db",
        data / "connect-lite.db-wal",
        data / "connect-lite.db-shm",
        data / "demo" / "output.txt",
        data / "demo" / "lake",
    ]
    left = sorted(str(p.relative_to(data)) for p in data.rglob("*") if p.is_file())
    assert left == ["connect-lite.db.lock", "demo/input.txt", "mine.txt"]
    assert files["demo/input.txt"].read_text() == "x\n"
    assert fresh.start_fresh(data) == []  # again: nothing left to remove


def test_fresh_removes_nothing_while_a_worker_owns_the_state_file(
    fresh: ModuleType, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    demo_data(data)
    owner = StateFileLock.acquire(str(data / "connect-lite.db"))  # as a running worker holds it
    try:
        with pytest.raises(StateFileInUseError) as refused:
            fresh.start_fresh(data)
    finally:
        owner.release()
    assert refused.value.pid == os.getpid()
    assert (data / "connect-lite.db").exists() and (data / "demo" / "output.txt").exists()


def test_a_link_is_removed_as_a_link_never_what_it_points_to(
    fresh: ModuleType, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "lake").mkdir(parents=True)
    (elsewhere / "lake" / "keep.parquet").write_text("x")
    (elsewhere / "output.txt").write_text("keep")
    data = tmp_path / "data"
    (data / "demo").mkdir(parents=True)
    (data / "demo" / "lake").symlink_to(elsewhere / "lake")
    (data / "demo" / "output.txt").symlink_to(elsewhere / "output.txt")
    assert fresh.start_fresh(data) == [data / "demo" / "output.txt", data / "demo" / "lake"]
    assert (elsewhere / "lake" / "keep.parquet").exists()
    assert (elsewhere / "output.txt").read_text() == "keep"


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of the checkout's run.sh and demo scripts, with its .venv, a set-up that does
    nothing, and an app.py that writes down its arguments instead of running a worker."""
    root = tmp_path / "checkout"
    shutil.copytree(SCRIPTS / "demo", root / "scripts" / "demo")
    shutil.copy2(SCRIPTS / "run.sh", root / "scripts" / "run.sh")
    (root / "scripts" / "setup.sh").write_text("#!/bin/sh\n")
    (root / "scripts" / "setup.sh").chmod(0o755)
    (root / ".venv").symlink_to(REPO / ".venv")
    (root / "app.py").write_text(
        "import sys\nopen('app-args.txt', 'w').write(' '.join(sys.argv[1:]))\n"
    )
    return root


def test_run_sh_fresh_starts_the_demo_afresh_and_passes_the_rest_on(checkout: Path) -> None:
    files = demo_data(checkout / "data")
    env = os.environ | {"PYTHONPATH": python_path(package_home(), os.environ.get("PYTHONPATH"))}
    command = block("demo-fresh").text.strip()
    assert command == "scripts/run.sh --fresh"
    done = run_shell(f"{command} scripts/demo/lake-sink.json --log-level DEBUG", checkout, env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        "Starting the demo afresh: removed data/connect-lite.db, data/connect-lite.db-wal, "
        "data/connect-lite.db-shm, data/demo/output.txt, data/demo/lake"
    )
    assert (checkout / "app-args.txt").read_text() == (
        "standalone.properties scripts/demo/file-source.json scripts/demo/file-sink.json "
        "scripts/demo/lake-sink.json --log-level DEBUG"
    )
    assert not files["connect-lite.db"].exists() and files["demo/input.txt"].exists()


def test_run_sh_without_fresh_keeps_the_state(checkout: Path) -> None:
    files = demo_data(checkout / "data")
    done = run_shell("scripts/run.sh", checkout)
    assert done.returncode == 0, done.stderr
    assert "afresh" not in done.stdout
    assert all(path.exists() for path in files.values())


def test_run_sh_fresh_refuses_while_the_demo_runs(checkout: Path) -> None:
    demo_data(checkout / "data")
    env = os.environ | {"PYTHONPATH": python_path(package_home(), os.environ.get("PYTHONPATH"))}
    owner = StateFileLock.acquire(str(checkout / "data" / "connect-lite.db"))
    try:
        done = run_shell("scripts/run.sh --fresh", checkout, env)
    finally:
        owner.release()
    assert done.returncode == 1
    assert "is in use by a running worker" in done.stderr
    assert "Stop it first" in done.stderr
    assert not (checkout / "app-args.txt").exists()  # no worker was started
    assert (checkout / "data" / "connect-lite.db").exists()
