"""Fixtures for the FileStream connector tests: the built-in modules and a fake task context."""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

import pytest

from connect_lite.api import OffsetStorageReader, SourceTaskContext
from connect_lite.api.records import canonical_json

_PACKAGE = "connect_lite.connectors.filestream"


def load_plugin_module(name: str) -> ModuleType:
    """The built-in ``filestream.<name>`` module."""
    return importlib.import_module(f"{_PACKAGE}.{name}")


class MemoryOffsetReader(OffsetStorageReader):
    """Committed source offsets held in a dict keyed by the partition's canonical JSON."""

    def __init__(self) -> None:
        self.stored: dict[str, dict[str, Any]] = {}
        self.reads: list[dict[str, Any]] = []

    def put(self, partition: Mapping[str, Any], offset: Mapping[str, Any]) -> None:
        self.stored[canonical_json(dict(partition))] = dict(offset)

    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        self.reads.append(dict(partition))
        return self.stored.get(canonical_json(dict(partition)))


class FakeSourceTaskContext(SourceTaskContext):
    def __init__(self, reader: MemoryOffsetReader, config: dict[str, str]) -> None:
        self.reader = reader
        self.config = config

    def offset_storage_reader(self) -> OffsetStorageReader:
        return self.reader

    def configs(self) -> dict[str, str]:
        return self.config


@pytest.fixture(scope="session")
def source_module() -> ModuleType:
    return load_plugin_module("source")


@pytest.fixture(scope="session")
def sink_module() -> ModuleType:
    return load_plugin_module("sink")


@pytest.fixture(scope="session")
def lines_module() -> ModuleType:
    return load_plugin_module("lines")


@pytest.fixture
def offsets() -> MemoryOffsetReader:
    return MemoryOffsetReader()


@pytest.fixture
def make_source_task(source_module: ModuleType, offsets: MemoryOffsetReader) -> Any:
    """Build and start a source task; every task made is stopped at teardown."""
    tasks: list[Any] = []

    def make(config: dict[str, str]) -> Any:
        task = source_module.FileStreamSourceTask()
        task.context = FakeSourceTaskContext(offsets, config)
        task.start(config)
        tasks.append(task)
        return task

    yield make
    for task in tasks:
        task.stop()


def _poll_until(task: Any, done: Callable[[list[Any]], bool], timeout: float = 10.0) -> list[Any]:
    """Poll repeatedly, collecting records, until ``done(records)`` or the deadline."""
    deadline = time.monotonic() + timeout
    records: list[Any] = []
    while not done(records):
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met in {timeout}s; got {len(records)} records")
        records.extend(task.poll() or [])
    return records


@pytest.fixture
def poll_until() -> Callable[..., list[Any]]:
    return _poll_until
