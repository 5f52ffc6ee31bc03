"""The install example of docs/getting-started.md (Installed as a package) and the README's,
run as written: the wheel built in a checkout, a virtualenv in a new home, a file-to-topic
pipeline on an embedded broker, and ``connect-lite consume`` printing what reached the topic.

The checkout is a copy of what the wheel is made of, beside a link to this checkout's
``.venv``, so the build writes nothing here. Three things keep the test off the network and on
a free port: ``~`` is a temporary home; pip runs with ``PIP_NO_INDEX`` and ``PIP_NO_DEPS``, and
the new virtualenv gets the dependencies (the versions of constraints.txt) from this
environment through a ``.pth`` file written after the install, as test_wheel_install.py does;
and the broker's port 19092 is a free one. The first pipeline's block ends with ``kill %1``;
the test adds ``wait %1`` to it, for the worker's exit code.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from connect_lite.testing import free_port
from tests.integration.testkit import REPO
from tests.unit.docs.doc_blocks import block, run_shell

pytestmark = pytest.mark.integration

WHEEL_SOURCES = ("pyproject.toml", "README.md", "LICENSE", "connect_lite")
_NOT_INHERITED = ("PYTHONPATH", "PYTHONHOME", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")


def commands(test_id: str) -> list[str]:
    """A block's command lines, comments cut."""
    lines = (line.split("#")[0].strip() for line in block(test_id).text.splitlines())
    return [line for line in lines if line]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """What the wheel is made of, and this checkout's ``.venv`` (its setuptools builds it)."""
    path = tmp_path / "connect-lite"
    path.mkdir()
    for name in WHEEL_SOURCES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, path / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, path / name)
    (path / ".venv").symlink_to(REPO / ".venv")
    return path


def environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _NOT_INHERITED}
    bin_dir = Path(sys.executable).parent  # python3 is this environment's interpreter
    return env | {
        "HOME": str(home),
        "PATH": f"{bin_dir}{os.pathsep}{env['PATH']}",
        "PIP_NO_INDEX": "1",
        "PIP_NO_DEPS": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }


def venv_python(venv: Path, env: dict[str, str], code: str) -> str:
    """What the new virtualenv's Python prints running ``code``."""
    done = subprocess.run(
        [venv / "bin" / "python", "-c", code],
        cwd=venv,  # not the checkout: its connect_lite would come first
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_the_readme_installs_as_the_getting_started_page_does() -> None:
    assert commands("readme-install") == commands("install-wheel")


def test_the_installed_package_runs_the_first_pipeline_and_shows_the_topic(
    home: Path, checkout: Path
) -> None:
    env = environment(home)
    installed = run_shell(block("install-wheel").text, checkout, env, timeout=600)
    assert installed.returncode == 0, installed.stderr[-3000:]
    wheel = commands("install-wheel")[-1].split()[-1]
    assert (checkout / wheel).is_file()
    venv = home / ".venvs" / "connect-lite"
    site_packages = Path(
        venv_python(venv, env, "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    )
    ours = dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib"))
    (site_packages / "test-environment.pth").write_text("".join(f"{p}\n" for p in ours))
    assert Path(
        venv_python(venv, env, "import connect_lite; print(connect_lite.__file__)")
    ).is_relative_to(site_packages)

    pipeline = block("first-pipeline").text
    assert pipeline.strip().splitlines()[-1] == "kill %1"
    port = free_port()
    ran = run_shell(
        pipeline.replace(":19092", f":{port}").replace("=19092", f"={port}") + "wait %1\n",
        home,
        env,
        timeout=300,
    )

    workdir = home / "lines-demo"
    log = (workdir / "worker.log").read_text() if (workdir / "worker.log").exists() else ""
    assert ran.returncode == 0, (ran.stdout, ran.stderr, log[-3000:])
    assert ran.stdout == "hello\nworld\n"
    assert "Processed a total of 2 messages" in ran.stderr
    assert f"Embedded broker listening at 127.0.0.1:{port}" in log
