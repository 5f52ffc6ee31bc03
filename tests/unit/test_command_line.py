"""The command line's paths that end before a worker starts: help, version, usage, files."""

from __future__ import annotations

import importlib.metadata
import json
import logging
import platform
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from connect_lite import __version__, cli
from connect_lite.api.errors import ConnectError
from connect_lite.config.properties import ConnectorFile

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def restore_process_state() -> Iterator[None]:
    """main sets up logging and signal handlers for the process: put them back."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    signals = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    yield
    for handler in list(root.handlers):
        if handler not in handlers:
            root.removeHandler(handler)
            handler.close()
    root.setLevel(level)
    for signum, handler in signals.items():
        signal.signal(signum, handler)


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """start_worker's calls; it fails as a worker that cannot start would (exit 2)."""
    calls: list[tuple[Any, ...]] = []

    def start_worker(props: Any, connectors: Any) -> None:
        calls.append((props, connectors))
        raise ConnectError("not in a unit test")

    monkeypatch.setattr("connect_lite.worker_main.start_worker", start_worker)
    return calls


@pytest.fixture
def worker_props(tmp_path: Path) -> Path:
    path = tmp_path / "worker.properties"
    path.write_text("bootstrap.servers=localhost:9092\n")
    return path


def test_help_goes_to_stdout_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--help"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(
        "usage: connect-lite [options] worker.properties "
        "[connector1.properties connector2.json ...]\n"
    )
    for option in ("--version", "--log-level", "--log-config FILE", "--log-format"):
        assert option in out
    assert "exit codes:" in out
    assert err == ""


def test_version_names_connect_lite_spark_kafka_clients_and_python(
    capsys: pytest.CaptureFixture[str], started: list[Any]
) -> None:
    assert cli.main(["--version"]) == 0
    lines = capsys.readouterr().out.splitlines()
    import confluent_kafka

    assert lines == [
        f"connect-lite {__version__}",
        f"Spark (pyspark) {importlib.metadata.version('pyspark')}",
        f"confluent-kafka {confluent_kafka.__version__}, "
        f"librdkafka {confluent_kafka.libversion()[0]}",
        f"Python {platform.python_version()} ({platform.python_implementation()})",
    ]
    assert started == []


def test_version_starts_nothing_and_does_not_import_pyspark() -> None:
    code = (
        "import sys; from connect_lite.cli import main; code = main(['--version']); "
        "assert 'pyspark' not in sys.modules, 'pyspark imported'; sys.exit(code)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("connect-lite ")


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        ([], "the following arguments are required: worker.properties"),
        (["--bogus", "w.properties"], "unrecognized arguments: --bogus"),
        (["--log-level", "verbose", "w.properties"], "argument --log-level: invalid choice"),
        (["--log-format", "xml", "w.properties"], "argument --log-format: invalid choice"),
    ],
)
def test_a_bad_command_line_prints_usage_and_one_error_and_exits_1(
    capsys: pytest.CaptureFixture[str], started: list[Any], argv: list[str], error: str
) -> None:
    assert cli.main(argv) == cli.EXIT_USAGE
    out, err = capsys.readouterr()
    assert out == ""
    usage, message = err.splitlines()
    assert usage.startswith("usage: connect-lite [options]")
    assert message.startswith(f"connect-lite: error: {error}")
    assert started == []


def test_log_level_and_format_take_any_case(
    worker_props: Path, started: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["--log-level", "warn", "--log-format", "JSON", str(worker_props)]) == 2
    assert logging.getLogger().level == logging.WARNING
    [line] = capsys.readouterr().err.splitlines()
    assert json.loads(line)["message"] == "Stopping after startup failure: not in a unit test"


def _one_line_exit_1(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    assert cli.main(argv) == cli.EXIT_USAGE
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [f"connect-lite: {message}"]


def test_a_missing_or_unreadable_worker_properties_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], started: list[Any]
) -> None:
    missing = tmp_path / "missing.properties"
    _one_line_exit_1(
        capsys,
        [str(missing)],
        f"cannot read worker properties {missing}: No such file or directory",
    )
    _one_line_exit_1(
        capsys, [str(tmp_path)], f"cannot read worker properties {tmp_path}: Is a directory"
    )
    # --version after the file name is still --version, not a second file name
    assert cli.main([str(missing), "--version"]) == 0
    assert started == []


def test_a_missing_connector_or_log_config_file_is_one_line_and_nothing_starts(
    worker_props: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    started: list[Any],
) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"name": "good", "connector.class": "FileStreamSink"}))
    missing = tmp_path / "missing.json"
    _one_line_exit_1(
        capsys,
        [str(worker_props), str(good), str(missing)],
        f"cannot read connector file {missing}: No such file or directory",
    )
    _one_line_exit_1(
        capsys,
        ["--log-config", str(missing), str(worker_props), str(good)],
        f"cannot read log config file {missing}: No such file or directory",
    )
    assert started == []


def test_every_connector_file_is_parsed_before_the_worker_starts(
    worker_props: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    started: list[Any],
) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"name": "good", "connector.class": "FileStreamSink"}))
    nameless = tmp_path / "nameless.properties"
    nameless.write_text("connector.class=FileStreamSink\n")
    argv = [str(worker_props), str(good), str(nameless)]
    assert cli.main(argv) == cli.EXIT_CONNECTOR_FILE_FAILED
    [line] = capsys.readouterr().err.splitlines()
    assert line.endswith(
        f"ERROR Invalid connector file {nameless}: Connector configuration at '{nameless}' is "
        "missing the mandatory 'name' configuration (connect_lite.cli:" + line.rsplit(":", 1)[1]
    )
    assert started == []


def test_two_files_for_one_connector_fail_before_the_worker_starts(
    worker_props: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], started: list[Any]
) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b.properties"
    first.write_text(json.dumps({"name": "same"}))
    second.write_text("name=same\n")
    assert cli.main([str(worker_props), str(first), str(second)]) == 3
    assert f"connector 'same' is also defined in {first}" in capsys.readouterr().err
    assert started == []


def test_the_worker_gets_its_properties_and_the_parsed_connectors(
    worker_props: Path, tmp_path: Path, started: list[Any]
) -> None:
    request = tmp_path / "sink.json"
    request.write_text(
        json.dumps({"name": "s", "config": {"topics": "t"}, "initial_state": "paused"})
    )
    flat = tmp_path / "source.properties"
    flat.write_text("name=p\ntopic=t\n")
    # options may come between the files, as scripts/run.sh passes its own after them
    argv = [str(worker_props), str(request), "--log-level", "info", str(flat)]
    assert cli.main(argv) == cli.EXIT_STARTUP_FAILED
    assert started == [
        (
            {"bootstrap.servers": "localhost:9092"},
            [
                ConnectorFile(str(request), "s", {"topics": "t", "name": "s"}, "PAUSED"),
                ConnectorFile(str(flat), "p", {"name": "p", "topic": "t"}, None),
            ],
        )
    ]


@pytest.mark.parametrize(
    ("flag", "key", "expected"),
    [
        ([], None, "text"),
        ([], "JSON", "json"),
        ([], "xml", "text"),  # the worker's config validation reports it (exit 2)
        (["--log-format", "text"], "json", "text"),
    ],
)
def test_the_log_format_is_the_flag_else_the_worker_key_else_text(
    worker_props: Path,
    started: list[Any],
    monkeypatch: pytest.MonkeyPatch,
    flag: list[str],
    key: str | None,
    expected: str,
) -> None:
    if key is not None:
        worker_props.write_text(f"log.format={key}\n")
    chosen: list[str] = []
    monkeypatch.setattr(cli, "configure_logging", lambda _level, fmt, _file: chosen.append(fmt))
    assert cli.main([*flag, str(worker_props)]) == cli.EXIT_STARTUP_FAILED
    assert chosen == [expected]


def test_an_unexpected_start_failure_is_one_line_and_exit_2(
    worker_props: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def start_worker(props: Any, connectors: Any) -> None:
        raise PermissionError(13, "Permission denied", "/proc/nope/x.db")

    monkeypatch.setattr("connect_lite.worker_main.start_worker", start_worker)
    assert cli.main([str(worker_props)]) == cli.EXIT_STARTUP_FAILED
    err = capsys.readouterr().err
    assert (
        "ERROR Stopping after startup failure: PermissionError: [Errno 13] Permission denied" in err
    )
    assert "Traceback" not in err


def test_a_signal_during_the_start_interrupts_it_and_a_second_one_only_asks_to_stop(
    worker_props: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cleaned: list[str] = []

    def start_worker(props: Any, connectors: Any) -> None:
        try:
            signal.raise_signal(signal.SIGTERM)  # arrives while the worker starts
        except BaseException:
            signal.raise_signal(signal.SIGINT)  # a second one, during the clean-up
            cleaned.append("stopped what had started")
            raise

    monkeypatch.setattr("connect_lite.worker_main.start_worker", start_worker)
    assert cli.main([str(worker_props)]) == 0
    assert cleaned == ["stopped what had started"]
    assert "Start-up interrupted by SIGTERM; stopped what had started" in capsys.readouterr().err
