"""The bundled demo connector is installed at two versions, each counting in its own format."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from connect_lite.plugins.registry import Plugins
from connect_lite.plugins.types import PluginType

BUNDLED = str(Path(__file__).resolve().parents[3] / "plugins")


class _Reader:
    def __init__(self, offset: dict[str, Any] | None) -> None:
        self._offset = offset

    def offset(self, partition: dict[str, Any]) -> dict[str, Any] | None:
        return self._offset


class _Context:
    def __init__(self, offset: dict[str, Any] | None) -> None:
        self.reader = _Reader(offset)

    def offset_storage_reader(self) -> _Reader:
        return self.reader


def _first_value(plugins: Plugins, version: str, offset: dict[str, Any] | None) -> str:
    desc = plugins.find("CounterSource", [PluginType.SOURCE], version)
    connector = plugins.new_instance(desc)
    connector.start({"topic": "t", "interval.ms": "0"})
    (config,) = connector.task_configs(4)
    task = connector.task_class()()
    task.context = _Context(offset)
    task.start(config)
    records = task.poll()
    assert records is not None and task.version() == desc.version
    return str(records[0].value)


def test_demo_counter_ships_two_versions_that_resume_from_the_offset() -> None:
    plugins = Plugins([BUNDLED], [])
    assert plugins.versions("CounterSourceConnector", [PluginType.SOURCE]) == ["1.0.0", "2.0.0"]
    assert _first_value(plugins, "1.0.0", None) == "count 0"
    assert _first_value(plugins, "2.0.0", {"next": 7}) == "count 7 (v2)"
    assert _first_value(plugins, "[1.0,2.0)", {"next": 8}) == "count 8"


def test_the_builtin_counter_is_1_0_0_and_plugins_adds_2_0_0() -> None:
    plugins = Plugins([BUNDLED])
    assert plugins.versions("CounterSource", [PluginType.SOURCE]) == ["1.0.0", "2.0.0"]
    assert plugins.find("CounterSource", [PluginType.SOURCE], "1.0.0").location is None
    latest = plugins.find("CounterSource", [PluginType.SOURCE])
    assert latest.location is not None and latest.location.endswith("demo-counter-2.0.0")
    assert _first_value(plugins, "1.0.0", {"next": 3}) == "count 3"
    assert _first_value(Plugins([]), "latest", None) == "count 0"
