"""Log output: Kafka's text layout and level names, JSON lines, dictConfig files, redaction."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from connect_lite.config.resolution import Redactor
from connect_lite.logs.context import ContextFilter, Verbatim, logging_context
from connect_lite.logs.loggers import TRACE, install_redaction
from connect_lite.logs.setup import (
    HANDLER_NAME,
    LogConfigError,
    configure_logging,
    python_level,
)

log = logging.getLogger("connect_lite.test.log_setup")
SECRET = "s3cret-Passw0rd"

KAFKA_LINE = re.compile(
    r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] (?P<level>[A-Z]+) (?P<rest>.*) "
    r"\((?P<logger>[\w.]+):(?P<line>\d+)\)$"
)


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    """configure_logging changes the root logger of this process: put it back."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        if handler not in handlers:
            root.removeHandler(handler)
            handler.close()
    root.setLevel(level)


def stderr_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return capsys.readouterr().err.splitlines()


def test_text_lines_have_kafkas_layout_level_names_and_logger_line_tail(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure_logging("trace")
    log.log(TRACE, "finest")
    log.debug("fine")
    log.warning("careful")
    log.critical("gone")
    with logging_context("my-connector", 0):
        logging.getLogger("my.plugin").info("from the plugin")
    with logging_context("my-connector"):
        log.error("from the connector")
    lines = stderr_lines(capsys)
    parsed = [KAFKA_LINE.match(line) for line in lines]
    assert all(parsed), lines
    assert [(m["level"], m["rest"]) for m in parsed if m] == [
        ("TRACE", "finest"),
        ("DEBUG", "fine"),
        ("WARN", "careful"),
        ("FATAL", "gone"),
        ("INFO", "[my-connector|task-0] from the plugin"),
        ("ERROR", "[my-connector|worker] from the connector"),
    ]
    first = parsed[0]
    assert first is not None and first["logger"] == "connect_lite.test.log_setup"
    assert int(first["line"]) > 0


def test_the_default_level_is_info_and_a_level_is_any_case_of_log4js_names(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure_logging()
    log.debug("hidden")
    log.info("shown")
    lines = stderr_lines(capsys)
    assert len(lines) == 1 and re.search(
        r"\] INFO shown \(connect_lite.test.log_setup:\d+\)$", lines[0]
    )
    assert python_level("warn") == logging.WARNING
    assert python_level("Fatal") == logging.CRITICAL
    with pytest.raises(LogConfigError, match="Unknown log level 'WARNING'"):
        python_level("WARNING")


def test_configuring_again_replaces_the_handler_it_installed() -> None:
    configure_logging()
    configure_logging("ERROR", "json")
    mine = [h for h in logging.getLogger().handlers if h.get_name() == HANDLER_NAME]
    assert len(mine) == 1
    assert logging.getLogger().level == logging.ERROR


def test_json_lines_hold_one_object_each_with_context_and_exception(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure_logging("INFO", "json")
    log.warning('plain "quoted"\nand a second line')
    with logging_context("my-connector", 2):
        try:
            raise ValueError("bad value")
        except ValueError:
            logging.getLogger("my.plugin").exception("task %s failed", "x")
    lines = stderr_lines(capsys)
    assert len(lines) == 2, lines
    first, second = (json.loads(line) for line in lines)
    assert first["level"] == "WARN"
    assert first["logger"] == "connect_lite.test.log_setup"
    assert first["line"] > 0
    assert first["message"] == 'plain "quoted"\nand a second line'
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d", first["timestamp"])
    assert "connector" not in first and "exception" not in first
    assert second["level"] == "ERROR"
    assert second["message"] == "task x failed"
    assert (second["connector"], second["task"], second["context"]) == (
        "my-connector",
        2,
        "my-connector|task-2",
    )
    assert second["exception"].startswith("Traceback (most recent call last):")
    assert second["exception"].endswith("ValueError: bad value")


def test_json_lines_and_their_tracebacks_conceal_secrets(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """In the worker's order: logging set up by the command line, redaction added at start."""
    configure_logging("INFO", "json")
    redactor = Redactor()
    redactor.add({SECRET: "${env:APP_X}"})
    remove = install_redaction(redactor)
    try:
        log.warning("connecting with %s", SECRET)
        try:
            raise RuntimeError(f"auth failed for {SECRET}")
        except RuntimeError:
            log.exception("task failed")
    finally:
        remove()
    err = capsys.readouterr().err
    assert SECRET not in err
    warning, failure = (json.loads(line) for line in err.splitlines())
    assert warning["message"] == "connecting with ${env:APP_X}"
    assert failure["exception"].endswith("RuntimeError: auth failed for ${env:APP_X}")


def test_a_dict_config_file_gets_the_format_and_context_where_it_sets_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "logging.json"
    config.write_text(
        json.dumps(
            {
                "handlers": {
                    "err": {"class": "logging.StreamHandler", "stream": "ext://sys.stderr"}
                },
                "root": {"handlers": ["err"], "level": "WARNING"},
                "loggers": {"my.plugin": {"level": "DEBUG"}},
            }
        )
    )
    configure_logging(None, "json", str(config))
    handlers = logging.getLogger().handlers
    assert any(isinstance(f, ContextFilter) for h in handlers for f in h.filters)
    with logging_context("c", 0):
        logging.getLogger("my.plugin").debug("kept")
        log.info("below the file's root level")
    lines = [json.loads(line) for line in stderr_lines(capsys)]
    assert [(x["level"], x["message"], x["context"]) for x in lines] == [
        ("DEBUG", "kept", "c|task-0")
    ]
    assert not log.disabled  # a logger that existed before the file stays enabled
    configure_logging("DEBUG", "text", str(config))
    assert logging.getLogger().level == logging.DEBUG  # the flag wins over the file


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, r"cannot read log config file .*missing\.json: No such file or directory$"),
        ("{not json", r"log config file .* is not valid JSON: "),
        ("[1]", r"must hold a JSON object"),
        ('{"handlers": {"h": {"class": "no.such.Handler"}}}', r"cannot be applied: "),
    ],
)
def test_a_bad_log_config_file_is_one_line(
    tmp_path: Path, content: str | None, message: str
) -> None:
    path = tmp_path / "missing.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(LogConfigError) as raised:
        configure_logging(None, "text", str(path))
    assert re.search(message, str(raised.value))
    assert "\n" not in str(raised.value)


def test_user_supplied_strings_cannot_forge_a_line_of_their_own(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A config key, name or error text with control characters is one escaped line; the
    code's own format and a traceback keep their lines."""
    configure_logging("INFO")
    forged = "k\n[2026-11-27 12:00:00,000] ERROR Login failed for user admin\r\x1b[2J"
    log.warning("Unknown key %s", forged)
    log.warning("Failed: %s", ValueError(forged))
    with logging_context("bad\nname", 0):
        log.info("started")
    try:
        raise ValueError("inside a traceback")
    except ValueError:
        log.exception("with %s", "a trace")
    lines = stderr_lines(capsys)
    assert not any(line.startswith("[2026-11-27 12:00:00,000]") for line in lines), lines
    assert "\x1b" not in "".join(lines) and "\r" not in "".join(lines)
    assert lines[0].endswith(
        "Unknown key k\\n[2026-11-27 12:00:00,000] ERROR Login failed for user admin\\r\\x1b[2J "
        "(connect_lite.test.log_setup:" + lines[0].rsplit(":", 1)[1]
    )
    assert "Failed: k\\n[2026" in lines[1]
    assert "[bad\\nname|task-0] started" in lines[2]
    assert lines[3].endswith(")") and "with a trace" in lines[3]
    assert lines[4] == "Traceback (most recent call last):"


def test_verbatim_text_of_the_worker_keeps_its_lines(capsys: pytest.CaptureFixture[str]) -> None:
    """A start-up failure's advice is the worker's own text: its line breaks are meant."""
    configure_logging("INFO")
    log.error("Stopping after startup failure: %s", Verbatim("no java\nInstall it"))
    lines = stderr_lines(capsys)
    assert lines[0].endswith("Stopping after startup failure: no java")
    assert lines[1].startswith("Install it (connect_lite.test.log_setup:")
