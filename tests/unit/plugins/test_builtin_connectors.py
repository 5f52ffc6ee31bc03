"""FileStream and the demo counter are built in, and a copy of them in plugin.path is no clash.

FileStream is named as Kafka names it; its Python names (laid out like a plugin location) are
aliases."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from connect_lite.connectors.filestream.source import FileStreamSourceTask
from connect_lite.plugins.isolation import module_class_name, public_class_name
from connect_lite.plugins.registry import Plugins
from connect_lite.plugins.types import PluginType as T

BUILTIN_PACKAGE = Path(__file__).resolve().parents[3] / "connect_lite" / "connectors" / "filestream"
CONNECTORS = [T.SOURCE, T.SINK]
FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"


def _copy_filestream(root: Path, location: str, version: str) -> Path:
    """A plugin location holding a copy of the built-in FileStream package at ``version``."""
    target = root / location / "filestream"
    shutil.copytree(BUILTIN_PACKAGE, target, ignore=shutil.ignore_patterns("__pycache__"))
    (target / "version.py").write_text(f'VERSION = "{version}"\n')
    return root / location


@pytest.mark.parametrize(
    ("name", "class_name"),
    [
        ("FileStreamSource", FILE_SOURCE),
        ("FileStreamSourceConnector", FILE_SOURCE),
        (FILE_SOURCE, FILE_SOURCE),
        ("filestream.source.FileStreamSourceConnector", FILE_SOURCE),
        ("FileStreamSink", FILE_SINK),
        (FILE_SINK, FILE_SINK),
        ("filestream.sink.FileStreamSinkConnector", FILE_SINK),
        ("CounterSource", "counter.CounterSourceConnector"),
    ],
)
def test_builtin_connectors_answer_without_a_plugin_path(name: str, class_name: str) -> None:
    desc = Plugins([]).find(name, CONNECTORS)
    assert (desc.class_name, desc.version, desc.location) == (class_name, "1.0.0", None)


def test_builtin_classes_are_named_like_a_plugin_location_or_as_kafka() -> None:
    assert FileStreamSourceTask.__module__ == "connect_lite.connectors.filestream.source"
    assert module_class_name(FileStreamSourceTask) == "filestream.source.FileStreamSourceTask"
    kafka = "org.apache.kafka.connect.file.FileStreamSourceTask"
    assert public_class_name(FileStreamSourceTask) == kafka

    class Subclass(FileStreamSourceTask):  # a declared name is not inherited
        pass

    assert public_class_name(Subclass) == module_class_name(Subclass)
    assert public_class_name(Subclass).endswith(".Subclass")


def test_a_copy_at_the_builtin_version_is_ignored_and_names_still_resolve(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    location = _copy_filestream(tmp_path, "file-1.0.0", "1.0.0")
    with caplog.at_level(logging.INFO, logger="connect_lite.plugins.registry"):
        plugins = Plugins([str(tmp_path)])
    python = "filestream.source.FileStreamSourceConnector"
    for name in ("FileStreamSource", "FileStreamSourceConnector", FILE_SOURCE, python):
        desc = plugins.find(name, CONNECTORS)
        assert (desc.class_name, desc.version, desc.location) == (FILE_SOURCE, "1.0.0", None)
    assert plugins.versions("FileStreamSource", CONNECTORS) == ["1.0.0"]
    listed = [d for d in plugins.all() if "FileStream" in d.class_name]
    assert [(d.class_name, d.location) for d in listed] == [
        (FILE_SINK, None),
        (FILE_SOURCE, None),
    ]
    messages = [r.getMessage() for r in caplog.records if "installed twice" in r.getMessage()]
    assert messages == [
        f"Plugin {FILE_SINK} 1.0.0 is installed twice; using the copy "
        f"in module connect_lite.connectors.filestream.sink, ignoring the one in {location}",
        f"Plugin {FILE_SOURCE} 1.0.0 is installed twice; using the "
        f"copy in module connect_lite.connectors.filestream.source, ignoring the one in {location}",
    ]


def test_a_copy_at_another_version_is_the_same_plugin_at_two_versions(tmp_path: Path) -> None:
    location = _copy_filestream(tmp_path, "file-2.0.0", "2.0.0")
    plugins = Plugins([str(tmp_path)])
    python = "filestream.sink.FileStreamSinkConnector"
    for name in (FILE_SINK, python):
        assert plugins.versions(name, CONNECTORS) == ["1.0.0", "2.0.0"]
        assert plugins.find(name, CONNECTORS).location == str(location)
    assert plugins.find("FileStreamSink", CONNECTORS, "1.0.0").location is None
    assert plugins.aliases()[python] == FILE_SINK
    sinks = [(d.class_name, d.version) for d in plugins.all([T.SINK]) if d.class_name == FILE_SINK]
    assert sinks == [(FILE_SINK, "1.0.0"), (FILE_SINK, "2.0.0")]
