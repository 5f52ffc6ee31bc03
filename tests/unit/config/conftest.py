"""Fixtures for the config tests: a fake plugin registry and a worker config."""

from __future__ import annotations

import pytest
from config_fakes import (
    HEADER,
    JSON,
    AddField,
    FakePlugins,
    FileSourceV1,
    FileSourceV2,
    IsTombstone,
    PickySink,
    PlainHeaderConverter,
    StrictConverter,
)

from connect_lite.config.worker import WorkerConfig
from connect_lite.plugins.types import PluginType


@pytest.fixture
def plugins() -> FakePlugins:
    return FakePlugins(
        [
            ("test.FileSource", FileSourceV1, PluginType.SOURCE, "1.0.0"),
            ("test.FileSource", FileSourceV2, PluginType.SOURCE, "2.0.0"),
            ("test.PickySink", PickySink, PluginType.SINK, "undefined"),
            (JSON, StrictConverter, PluginType.CONVERTER, "4.0.0"),
            ("test.StrictConverter", StrictConverter, PluginType.CONVERTER, "1.0"),
            (HEADER, PlainHeaderConverter, PluginType.HEADER_CONVERTER, "4.0.0"),
            ("test.AddField", AddField, PluginType.TRANSFORMATION, "1.0"),
            ("test.IsTombstone", IsTombstone, PluginType.PREDICATE, "1.0"),
        ]
    )


@pytest.fixture
def worker() -> WorkerConfig:
    return WorkerConfig({"bootstrap.servers": "127.0.0.1:9092"})
