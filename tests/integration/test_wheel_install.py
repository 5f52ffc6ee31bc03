"""`pip install` of the built wheel gives a working tool, used outside the checkout (issue 16)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import urllib.request
import zipfile
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import pytest

from connect_lite.testing import FAST_DEFAULTS, free_port, wait_for

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
INSTALLED = Path(__file__).resolve().parent / "installed"
WHEEL_SOURCES = ("pyproject.toml", "README.md", "LICENSE", "connect_lite")
_NOT_INHERITED = ("PYTHONPATH", "PYTHONHOME", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")
PIP = (sys.executable, "-m", "pip", "--quiet", "--no-input")
"""This environment's pip (its commands below never ask the network: ``--no-index``)."""
INNER_TEST = "check_embedded.py"
STRING_CONVERTER = "org.apache.kafka.connect.storage.StringConverter"


@dataclass(frozen=True)
class FreshVenv:
    """A virtualenv outside the checkout with the connect-lite wheel installed."""

    root: Path
    wheel: Path

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    @property
    def site_packages(self) -> Path:
        return Path(self.run_python("import sysconfig; print(sysconfig.get_paths()['purelib'])"))

    def command(self, name: str) -> Path:
        return self.root / "bin" / name

    def env(self) -> dict[str, str]:
        """This process's environment without what would import the checkout's code."""
        return {k: v for k, v in os.environ.items() if k not in _NOT_INHERITED}

    def run_python(self, code: str) -> str:
        return subprocess.run(
            [str(self.python), "-c", code],
            cwd=self.root,
            env=self.env(),
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout.strip()


def _build_wheel(sources: Path, names: tuple[str, ...], out: Path) -> Path:
    """Build a wheel from a copy of ``names`` in ``sources``: nothing is written beside them."""
    tree = out / f"src-{len(list(out.glob('src-*')))}"
    tree.mkdir(parents=True)
    for name in names:
        source = sources / name
        if source.is_dir():
            ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
            shutil.copytree(source, tree / name, ignore=ignore)
        else:
            shutil.copy2(source, tree / name)
    before = set(out.glob("*.whl"))
    subprocess.run(
        [
            *PIP,
            "wheel",
            "--no-index",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(out),
            str(tree),
        ],
        check=True,
        timeout=300,
    )
    (wheel,) = set(out.glob("*.whl")) - before
    return wheel


def _pip_install(python: Path, wheel: Path) -> None:
    """Install a wheel into another interpreter's environment with this environment's pip."""
    subprocess.run(
        [*PIP, "--python", str(python), "install", "--no-index", "--no-deps", str(wheel)],
        check=True,
        timeout=300,
    )


@pytest.fixture(scope="session")
def fresh_venv(tmp_path_factory: pytest.TempPathFactory) -> FreshVenv:
    """The connect-lite wheel, built once, installed in a new virtualenv outside the checkout.

    Built and installed as a user would get it, fast, and without the network:

    1. The wheel is built (``pip wheel --no-deps --no-build-isolation --no-index``) from a copy
       of what it is made of (pyproject.toml, README.md, LICENSE, connect_lite/), so the build
       writes nothing into the checkout. The test environment's setuptools builds it
       (scripts/setup.sh installs it from constraints.txt; the dev extra requires it).
    2. ``python -m venv --without-pip`` makes the virtualenv; this environment's pip installs
       the wheel into it (``pip --python``), which writes the ``connect-lite`` command. The
       acme-connect-demo wheel (tests/integration/installed/, an entry point in
       ``connect_lite.plugins``) is built and installed the same way.
    3. Its dependencies (PySpark, confluent-kafka, ...) are not downloaded again: a ``.pth``
       file, written after the installs (so pip never sees the checkout's connect-lite as
       installed there), appends this environment's site-packages to its ``sys.path``. These
       are the versions of constraints.txt, so a clean CI machine gets the same result.
       Python adds a path named in a ``.pth`` file without running the ``.pth`` files inside
       it, so the checkout's editable install (a ``.pth`` hook in this environment) is not
       active there, and the fresh site-packages comes first: ``connect_lite`` is the wheel's.
       The tests check that (``connect_lite.__file__``) and never pass ``PYTHONPATH`` on.
    """
    base = tmp_path_factory.mktemp("wheel-install")
    dist = base / "dist"
    dist.mkdir()
    wheel = _build_wheel(REPO, WHEEL_SOURCES, dist)
    acme = INSTALLED / "acme-connect-demo"
    acme_wheel = _build_wheel(acme, ("pyproject.toml", "acme_connect_demo"), dist)
    root = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    venv = FreshVenv(root, wheel)
    _pip_install(venv.python, wheel)
    _pip_install(venv.python, acme_wheel)
    ours = dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib"))
    (venv.site_packages / "test-environment.pth").write_text("".join(f"{p}\n" for p in ours))
    return venv


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A working directory outside the checkout."""
    assert not tmp_path.is_relative_to(REPO)
    return tmp_path


def test_the_wheel_ships_the_builtin_connectors_license_and_type_marker(
    fresh_venv: FreshVenv,
) -> None:
    with zipfile.ZipFile(fresh_venv.wheel) as wheel:
        names = set(wheel.namelist())
        info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        metadata = wheel.read(f"{info}/METADATA").decode()
        entry_points = wheel.read(f"{info}/entry_points.txt").decode()
    assert {
        "connect_lite/__main__.py",
        "connect_lite/py.typed",
        "connect_lite/connectors/counter.py",
        "connect_lite/connectors/filestream/source.py",
        "connect_lite/connectors/filestream/sink.py",
        "connect_lite/rest/ui_static/index.html",  # the status page, GET /ui
        "connect_lite/rest/ui_static/app.js",
        "connect_lite/rest/ui_static/sparklines.js",
        "connect_lite/rest/ui_static/style.css",
        f"{info}/licenses/LICENSE",
    } <= names
    assert not any(name.startswith(("plugins/", "tests/")) for name in names)
    assert "License-Expression: Apache-2.0" in metadata
    assert "Requires-Dist: pyspark<5,>=4.0" in metadata  # a range, not a pin
    assert "connect-lite = connect_lite.cli:main" in entry_points


def test_the_installed_package_is_the_wheels_copy(fresh_venv: FreshVenv, outside: Path) -> None:
    code = "import connect_lite, json, sys; print(json.dumps([connect_lite.__file__, sys.prefix]))"
    found = subprocess.run(
        [str(fresh_venv.python), "-c", code],
        cwd=outside,
        env=fresh_venv.env(),
        capture_output=True,
        text=True,
        check=True,
    )
    module_file, prefix = json.loads(found.stdout)
    assert Path(prefix) == fresh_venv.root
    assert Path(module_file).is_relative_to(fresh_venv.site_packages)

    def command(option: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(fresh_venv.command("connect-lite")), option],
            cwd=outside,
            env=fresh_venv.env(),
            capture_output=True,
            text=True,
            timeout=60,
        )

    usage = command("--help")
    # The command is the CLI: its usage, on stdout, names the worker properties file.
    assert usage.returncode == 0 and "worker.properties" in usage.stdout
    assert usage.stdout.startswith("usage: connect-lite")
    version = command("--version")
    assert version.returncode == 0, version.stderr
    for name in ("connect-lite", "Spark", "confluent-kafka", "librdkafka", "Python"):
        assert name in version.stdout, version.stdout


def _write_worker_properties(workdir: Path, bootstrap_servers: str) -> tuple[Path, int]:
    port = free_port()
    props = {
        **FAST_DEFAULTS,
        "bootstrap.servers": bootstrap_servers,
        "listeners": f"http://127.0.0.1:{port}",
        "state.storage.file": "connect-lite.db",
    }  # no plugin.path
    path = workdir / "worker.properties"
    path.write_text("".join(f"{key}={value}\n" for key, value in props.items()))
    return path, port


@pytest.fixture
def started(fresh_venv: FreshVenv) -> Iterator[list[subprocess.Popen[bytes]]]:
    """Worker processes a test starts; each is stopped with SIGTERM (then killed) at the end."""
    processes: list[subprocess.Popen[bytes]] = []
    yield processes
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # whatever it left behind


def _start(
    fresh_venv: FreshVenv, args: list[str], workdir: Path, started: list[subprocess.Popen[bytes]]
) -> subprocess.Popen[bytes]:
    log = (workdir / "worker.log").open("wb")
    process = subprocess.Popen(
        args,
        cwd=workdir,
        env=fresh_venv.env(),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: Spark's JVM goes with it
    )
    started.append(process)
    return process


def _get(port: int, path: str) -> list[dict[str, str]]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
        return json.loads(response.read())


def test_the_command_runs_a_filestream_pipeline_without_a_plugin_path(
    fresh_venv: FreshVenv,
    bootstrap_servers: str,
    outside: Path,
    started: list[subprocess.Popen[bytes]],
) -> None:
    properties, port = _write_worker_properties(outside, bootstrap_servers)
    topic = f"wheel-{port}"
    source_file, sink_file = outside / "in.txt", outside / "out.txt"
    source_file.write_text("".join(f"line {n}\n" for n in range(100)))
    common = {"value.converter": STRING_CONVERTER, "key.converter": STRING_CONVERTER}
    files = {
        "source.json": {
            "name": "file-source",
            "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
            "file": str(source_file),
            "topic": topic,
            "topic.creation.default.replication.factor": "1",
            "topic.creation.default.partitions": "1",
            **common,
        },
        "sink.json": {
            "name": "file-sink",
            "connector.class": "FileStreamSink",
            "file": str(sink_file),
            "topics": topic,
            **common,
        },
    }
    for name, config in files.items():
        (outside / name).write_text(json.dumps(config))
    command = [str(fresh_venv.command("connect-lite")), str(properties), *files]
    process = _start(fresh_venv, command, outside, started)

    def copied() -> bool:
        assert process.poll() is None, (outside / "worker.log").read_text()[-3000:]
        return sink_file.exists() and sink_file.read_text() == source_file.read_text()

    wait_for(copied, timeout=120, what="the sink file to equal the source file")
    plugins = {(p["class"], p["type"], p["version"]) for p in _get(port, "/connector-plugins")}
    assert ("org.apache.kafka.connect.file.FileStreamSourceConnector", "source", "1.0.0") in plugins
    process.send_signal(signal.SIGTERM)
    assert process.wait(60) == 0


def test_python_m_connect_lite_starts_a_worker_that_finds_entry_point_plugins(
    fresh_venv: FreshVenv,
    bootstrap_servers: str,
    outside: Path,
    started: list[subprocess.Popen[bytes]],
) -> None:
    properties, port = _write_worker_properties(outside, bootstrap_servers)
    command = [str(fresh_venv.python), "-m", "connect_lite", str(properties)]
    process = _start(fresh_venv, command, outside, started)

    def listed() -> list[dict[str, str]]:
        assert process.poll() is None, (outside / "worker.log").read_text()[-3000:]
        return _get(port, "/connector-plugins")

    plugins = wait_for(listed, timeout=120, what="GET /connector-plugins")
    versions = {(p["class"], p["version"]) for p in plugins}
    assert ("acme_connect_demo.source.AcmeSourceConnector", "3.1.4") in versions
    assert ("org.apache.kafka.connect.file.FileStreamSinkConnector", "1.0.0") in versions
    process.send_signal(signal.SIGTERM)
    assert process.wait(60) == 0


def test_embedded_connect_in_a_project_outside_the_checkout(
    fresh_venv: FreshVenv, outside: Path
) -> None:
    project = outside / "my-connector"
    shutil.copytree(INSTALLED / "project", project)
    result = subprocess.run(
        [
            str(fresh_venv.python),
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "check_embedded.py",
        ],
        cwd=project,
        env=fresh_venv.env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert "2 passed" in result.stdout
