"""FileStreamSourceConnector and FileStreamSourceTask, driven directly."""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from connect_lite.api import ConfigError, ConnectError, Partition, Schema, Type
from connect_lite.testing import wait_for

TOPIC = "lines"


def config_for(path: Path | None, **extra: str) -> dict[str, str]:
    config = {"name": "src", "connector.class": "FileStreamSource", "topic": TOPIC, **extra}
    if path is not None:
        config["file"] = str(path)
    return config


def errors_of(source_module: Any, config: dict[str, str]) -> dict[str, list[str]]:
    values = source_module.FileStreamSourceConnector().config().validate(config)
    return {name: cv.errors for name, cv in values.items() if cv.errors}


# -- connector -------------------------------------------------------------------------


def test_config_declares_kafka_keys(source_module: Any) -> None:
    keys = source_module.FileStreamSourceConnector().config().keys
    assert list(keys) == ["file", "topic", "batch.size"]
    assert keys["file"].type is Type.STRING and keys["file"].default is None
    assert keys["topic"].required
    assert keys["batch.size"].type is Type.INT and keys["batch.size"].default == 2000


def test_valid_config_has_no_errors(source_module: Any, tmp_path: Path) -> None:
    assert errors_of(source_module, config_for(tmp_path / "in.txt", **{"batch.size": "10"})) == {}
    assert errors_of(source_module, config_for(None)) == {}  # no file: stdin


@pytest.mark.parametrize(
    ("changes", "key", "message"),
    [
        ({"topic": None}, "topic", 'Missing required configuration "topic" which has no default'),
        ({"topic": ""}, "topic", "Invalid value  for configuration topic: String must be non-"),
        (
            {"topic": "a,b"},
            "topic",
            "'topic' in FileStreamSourceConnector configuration requires definition of a single",
        ),
        (
            {"batch.size": "many"},
            "batch.size",
            "Invalid value many for configuration batch.size: Not a number of type INT",
        ),
    ],
)
def test_config_validation_messages(
    source_module: Any, changes: dict[str, str | None], key: str, message: str
) -> None:
    config = config_for(Path("in.txt"))
    for name, value in changes.items():
        if value is None:
            config.pop(name)
        else:
            config[name] = value
    errors = errors_of(source_module, config)
    assert list(errors) == [key]
    assert errors[key][0].startswith(message)


def test_start_rejects_an_invalid_config(source_module: Any) -> None:
    with pytest.raises(ConfigError, match="single topic"):
        source_module.FileStreamSourceConnector().start(config_for(None, topic="a,b"))


def test_one_task_config_whatever_max_tasks(source_module: Any, tmp_path: Path) -> None:
    connector = source_module.FileStreamSourceConnector()
    config = config_for(tmp_path / "in.txt", **{"tasks.max": "4"})
    connector.start(config)
    assert connector.task_configs(4) == [config]
    assert connector.task_configs(1) == [config]
    assert connector.task_class() is source_module.FileStreamSourceTask


def test_version_matches_the_plugin_location(source_module: Any) -> None:
    assert source_module.FileStreamSourceConnector().version() == "1.0.0"
    assert source_module.FileStreamSourceTask().version() == "1.0.0"
    java = "org.apache.kafka.connect.file.FileStreamSource"
    assert source_module.FileStreamSourceConnector.__connect_class_name__ == java + "Connector"
    assert source_module.FileStreamSourceTask.__connect_class_name__ == java + "Task"


@pytest.mark.parametrize(
    ("offsets", "message"),
    [
        ({Partition(filename="f"): {}}, "Offset objects should either be null or contain the key"),
        ({Partition(filename="f"): {"position": "10"}}, "expected to be a Long value"),
        ({Partition(filename="f"): {"position": 1.5}}, "expected to be a Long value"),
        ({Partition(filename="f"): {"position": True}}, "expected to be a Long value"),
        ({Partition(filename="f"): {"position": -1}}, "should be a non-negative value"),
        ({Partition(other="f"): {"position": 3}}, "Partition objects should contain the key"),
    ],
)
def test_alter_offsets_rejects_bad_offsets(
    source_module: Any, offsets: dict[Partition, Any], message: str
) -> None:
    connector = source_module.FileStreamSourceConnector()
    with pytest.raises(ConnectError, match=message):
        connector.alter_offsets(config_for(Path("f")), offsets)


def test_alter_offsets_accepts_valid_offsets_and_tombstones(source_module: Any) -> None:
    connector = source_module.FileStreamSourceConnector()
    offsets = {
        Partition(filename="f"): {"position": 0},
        Partition(filename="old"): {"position": 12345},
        Partition(anything="goes"): None,
    }
    assert connector.alter_offsets(config_for(Path("f")), offsets) is True


def test_alter_offsets_refuses_stdin(source_module: Any) -> None:
    with pytest.raises(ConnectError, match="stdin is used for input and offsets are not tracked"):
        source_module.FileStreamSourceConnector().alter_offsets(
            config_for(None), {Partition(filename="f"): {"position": 1}}
        )


# -- task ------------------------------------------------------------------------------


def test_reads_lines_with_byte_positions(make_source_task: Any, tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes("a\nbb\r\nhé\nlast\n".encode())
    records = make_source_task(config_for(path)).poll()
    assert [r.value for r in records] == ["a", "bb", "hé", "last"]
    assert [r.source_offset for r in records] == [
        {"position": 2},
        {"position": 6},
        {"position": 10},
        {"position": 15},
    ]
    first = records[0]
    assert first.source_partition == {"filename": str(path)}
    assert (first.topic, first.key, first.key_schema) == (TOPIC, None, None)
    assert first.value_schema == Schema.STRING_SCHEMA
    assert first.timestamp is not None and abs(first.timestamp - time.time() * 1000) < 60_000


def test_batch_size_limits_each_poll_without_gaps(
    make_source_task: Any, tmp_path: Path, poll_until: Any
) -> None:
    path = tmp_path / "in.txt"
    lines = [f"line-{i}" for i in range(25_000)]
    path.write_text("".join(f"{line}\n" for line in lines))
    task = make_source_task(config_for(path, **{"batch.size": "2000"}))
    first = task.poll()
    assert len(first) == 2000
    records = first + poll_until(task, lambda got: len(got) >= len(lines) - 2000)
    assert [r.value for r in records] == lines
    assert records[-1].source_offset == {"position": path.stat().st_size}


def test_resumes_from_stored_position(
    make_source_task: Any, offsets: Any, tmp_path: Path, poll_until: Any
) -> None:
    path = tmp_path / "in.txt"
    lines = [f"row {i}" for i in range(100)]
    path.write_text("".join(f"{line}\n" for line in lines))
    config = config_for(path, **{"batch.size": "30"})
    first_run = make_source_task(config).poll()
    assert len(first_run) == 30
    last = first_run[-1]
    offsets.put(last.source_partition, last.source_offset)

    resumed = make_source_task(config)
    rest = poll_until(resumed, lambda got: len(got) >= 70)
    assert offsets.reads[-1] == {"filename": str(path)}
    assert [r.value for r in first_run + rest] == lines  # no duplicate, no gap


def test_stored_position_of_the_wrong_type_fails(
    make_source_task: Any, offsets: Any, tmp_path: Path
) -> None:
    path = tmp_path / "in.txt"
    path.write_text("x\n")
    offsets.put({"filename": str(path)}, {"position": "2"})
    with pytest.raises(ConnectError, match="Offset position is the incorrect type"):
        make_source_task(config_for(path)).poll()


def test_partial_last_line_waits_for_its_newline(
    make_source_task: Any, tmp_path: Path, poll_until: Any
) -> None:
    path = tmp_path / "in.txt"
    path.write_text("one\ntw")
    task = make_source_task(config_for(path))
    assert [r.value for r in task.poll()] == ["one"]
    assert task.poll() == []  # "tw" has no newline yet
    with path.open("a") as f:
        f.write("o\r")
    assert task.poll() == []  # a trailing "\r" may still become "\r\n"
    with path.open("a") as f:
        f.write("\nthree\n")
    records = poll_until(task, lambda got: len(got) >= 2)
    assert [r.value for r in records] == ["two", "three"]
    assert [r.source_offset["position"] for r in records] == [9, 15]


def test_file_that_appears_later_is_read(
    make_source_task: Any, tmp_path: Path, poll_until: Any
) -> None:
    path = tmp_path / "later.txt"
    task = make_source_task(config_for(path))
    assert task.poll() == []
    path.write_text("finally\n")
    records = poll_until(task, lambda got: len(got) >= 1)
    assert [r.value for r in records] == ["finally"]


def test_a_missing_file_is_reported_once_then_its_arrival(
    make_source_task: Any,
    source_module: Any,
    monkeypatch: Any,
    caplog: Any,
    tmp_path: Path,
    poll_until: Any,
) -> None:
    """Kafka's task warns at each look for the file (once a second); ours looks every 100 ms,
    and a worker waiting for a file logged 138 lines in 14 s. Now: one WARN, then quiet."""
    monkeypatch.setattr(source_module, "IDLE_WAIT_SECONDS", 0.0)
    path = tmp_path / "later.txt"
    task = make_source_task(config_for(path))
    with caplog.at_level(logging.DEBUG, logger=source_module.__name__):
        for _ in range(50):
            assert task.poll() == []
        path.write_text("finally\n")
        records = poll_until(task, lambda got: len(got) >= 1)
    assert [r.value for r in records] == ["finally"]
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        (
            "WARNING",
            f"Couldn't find file {path} for FileStreamSourceTask, waiting for it to be created",
        ),
        ("INFO", f"File {path} was created; reading it from byte 0"),
    ]


@pytest.mark.parametrize("exists", [True, False])
def test_stop_interrupts_a_waiting_poll(
    make_source_task: Any,
    source_module: Any,
    offsets: Any,
    monkeypatch: Any,
    caplog: Any,
    tmp_path: Path,
    exists: bool,
) -> None:
    monkeypatch.setattr(source_module, "IDLE_WAIT_SECONDS", 3600.0)  # only stop() ends it
    path = tmp_path / "idle.txt"
    if exists:
        path.write_text("")
    task = make_source_task(config_for(path))
    result: list[Any] = []
    poller = threading.Thread(target=lambda: result.append(task.poll()))
    poller.start()
    # The poll has opened the file (or found it missing) and is about to wait for data.
    if exists:
        wait_for(lambda: offsets.reads, 10, 0.01)
    else:
        wait_for(lambda: "Couldn't find file" in caplog.text, 10, 0.01)
    assert poller.is_alive()  # still waiting: nothing to read
    task.stop()
    poller.join(30)  # the hang guard: without the interrupt the poll waits an hour
    assert not poller.is_alive()
    assert result == [[]]
    assert task.poll() == []  # a stopped task never reopens the file


def test_reads_stdin_without_offsets(
    make_source_task: Any, monkeypatch: Any, poll_until: Any
) -> None:
    read_fd, write_fd = os.pipe()
    with os.fdopen(read_fd, "r") as fake_stdin:
        monkeypatch.setattr(sys, "stdin", fake_stdin)
        task = make_source_task(config_for(None))
        os.write(write_fd, b"from\nstdin\n")
        records = poll_until(task, lambda got: len(got) >= 2)
        os.close(write_fd)
    assert [r.value for r in records] == ["from", "stdin"]
    assert records[0].source_partition is None and records[0].source_offset is None
