"""The plugin registry: scanning, listing order, aliases, versions and lookup errors."""

from __future__ import annotations

import logging
import textwrap
from pathlib import Path

import pytest

from connect_lite.api import (
    ConfigError,
    Converter,
    HeaderConverter,
    NotFoundError,
    SinkConnector,
    SourceConnector,
)
from connect_lite.plugins.registry import Plugins
from connect_lite.plugins.types import PluginType as T

PLUGINS = str(Path(__file__).resolve().parents[2] / "plugins")
ALL = list(T)

_CONVERTER = """
from connect_lite.api import Converter, SchemaAndValue

class {name}(Converter):
    {body}

    def from_connect_data(self, topic, schema, value):
        return b""

    def to_connect_data(self, topic, value):
        return SchemaAndValue(None, None)
"""


def _converter(name: str, body: str = "pass") -> str:
    return textwrap.dedent(_CONVERTER).format(name=name, body=body)


def _location(root: Path, name: str, files: dict[str, str]) -> None:
    for path, text in files.items():
        target = root / name / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


@pytest.fixture(scope="module")
def plugins() -> Plugins:
    return Plugins([PLUGINS])


def test_listing_order_is_kafkas(plugins: Plugins) -> None:
    listed = [(d.type, d.class_name, d.version) for d in plugins.all()]
    assert listed == sorted(listed, key=lambda x: (ALL.index(x[0]), x[1], x[2]))
    assert [t for t, _, _ in listed][:2] == [T.SINK, T.SINK]
    versions = [v for t, c, v in listed if c == "acme_versioned.VersionedSourceConnector"]
    assert versions == ["1.0.0", "2.0.0", "3.0.0"]
    assert {d.type for d in plugins.all([T.SOURCE, T.SINK])} == {T.SOURCE, T.SINK}


def test_versions_sort_by_pep440_with_unparseable_first(tmp_path: Path) -> None:
    for version in ("1.10.0", "garbage", "1.9.0"):
        body = f"def version(self):\n        return {version!r}"
        _location(tmp_path, f"v{version}", {"conv.py": _converter("VConverter", body)})
    plugins = Plugins([str(tmp_path)], builtin_modules=[])
    assert [d.version for d in plugins.all()] == ["garbage", "1.9.0", "1.10.0"]
    assert plugins.versions("VConverter", [T.CONVERTER]) == ["garbage", "1.9.0", "1.10.0"]
    assert plugins.find("V", [T.CONVERTER]).version == "1.10.0"


def test_a_converter_that_is_also_a_header_converter_is_listed_twice(plugins: Plugins) -> None:
    json_types = [d.type for d in plugins.all() if d.class_name.endswith(".JsonConverter")]
    assert json_types == [T.CONVERTER, T.HEADER_CONVERTER]
    simple = plugins.find("SimpleHeaderConverter", [T.HEADER_CONVERTER])
    assert simple.type is T.HEADER_CONVERTER
    with pytest.raises(NotFoundError):
        plugins.find("SimpleHeaderConverter", [T.CONVERTER])


def test_builtins_are_named_in_java_and_answer_to_their_python_names(plugins: Plugins) -> None:
    java = "org.apache.kafka.connect.json.JsonConverter"
    python = "connect_lite.converters.json.JsonConverter"
    for name in (java, python, "JsonConverter", "Json"):
        desc = plugins.find(name, [T.CONVERTER])
        assert (desc.class_name, desc.ref.location) == (java, None)
    assert plugins.aliases()[python] == java
    string = "org.apache.kafka.connect.storage.StringConverter"
    assert plugins.find(string, [T.HEADER_CONVERTER]).class_name == string
    insert = "org.apache.kafka.connect.transforms.InsertField$Value"
    for name in (insert, "InsertField$Value", "InsertFieldValue"):
        assert plugins.find(name, [T.TRANSFORMATION]).class_name == insert
    assert plugins.find("org.apache.kafka.connect.storage.SimpleHeaderConverter", ALL)
    assert (
        plugins.find("ByteArray", [T.CONVERTER]).version == __import__("connect_lite").__version__
    )


def test_colliding_aliases_are_not_registered(tmp_path: Path) -> None:
    java = "org.apache.kafka.connect.json.JsonConverter"
    _location(
        tmp_path,
        "loc",
        {
            "first.py": _converter("DupConverter"),
            "second.py": _converter("DupConverter"),
            "claims.py": _converter("ClaimConverter", f"__connect_aliases__ = ({java!r},)"),
        },
    )
    plugins = Plugins([str(tmp_path)])
    aliases = plugins.aliases()
    assert "DupConverter" not in aliases and "Dup" not in aliases
    assert java not in aliases  # the built-in's class name: ClaimConverter cannot take it
    assert plugins.find(java, [T.CONVERTER]).ref.module == "connect_lite.converters.json"
    assert aliases["Claim"] == "claims.ClaimConverter"
    assert plugins.find("first.DupConverter", [T.CONVERTER]).class_name == "first.DupConverter"
    with pytest.raises(NotFoundError):
        plugins.find("Dup", [T.CONVERTER])


def test_several_versions_of_one_class_do_not_collide(plugins: Plugins) -> None:
    assert plugins.aliases()["VersionedSource"] == "acme_versioned.VersionedSourceConnector"
    assert "Versioned" not in plugins.aliases()  # converter, transformation and predicate


def test_find_picks_latest_or_the_exact_version(plugins: Plugins) -> None:
    for requirement, expected in ((None, "3.0.0"), ("latest", "3.0.0"), ("1.0.0", "1.0.0")):
        desc = plugins.find("VersionedSource", [T.SOURCE], requirement)
        assert desc.version == expected
        assert plugins.new_instance(desc).version() == expected
    assert plugins.find("VersionedConverter", [T.CONVERTER], "[1.0.0]").version == "1.0.0"
    assert plugins.find("VersionedConverter", [T.CONVERTER], "1.0").version == "1.0.0"


def test_find_errors_are_worded_as_kafka(plugins: Plugins) -> None:
    with pytest.raises(NotFoundError) as unknown:
        plugins.find("Nope", [T.SOURCE, T.SINK])
    assert str(unknown.value).startswith(
        "Failed to find any class that implements Connector and which name matches Nope, "
        "available connectors are: PluginDesc{klass=class acme_versioned.VersionedSinkConnector"
    )
    with pytest.raises(NotFoundError, match="implements Converter and which name matches X,"):
        plugins.find("X", [T.CONVERTER])
    with pytest.raises(NotFoundError):
        plugins.find("VersionedSourceConnector", [T.SINK])
    assert plugins.find("VersionedSource", [T.SOURCE], "[1.0,2.0)").version == "1.0.0"
    with pytest.raises(ConfigError, match=r"^Unbounded range: \[1.0,2.0$"):
        plugins.find("VersionedSource", [T.SOURCE], "[1.0,2.0")
    with pytest.raises(ConfigError) as version:
        plugins.find("VersionedSource", [T.SOURCE], "9.0.0")
    assert str(version.value) == (
        "Plugin acme_versioned.VersionedSourceConnector not found that matches the version "
        "range [9.0.0], available versions: [1.0.0, 2.0.0, 3.0.0]"
    )


def test_what_counts_as_a_plugin_and_its_version(tmp_path: Path) -> None:
    files = {
        "kinds.py": _converter("NoVersionConverter")
        + _converter("NullConverter", "def version(self):\n        return None")
        + _converter("BoomConverter", "def version(self):\n        raise RuntimeError('x')")
        + _converter("_HiddenConverter")
        + textwrap.dedent(
            """
            from connect_lite.api import Converter, SourceTask

            class AbstractConverter(Converter):
                pass

            class NotAPluginTask(SourceTask):
                pass
            """
        ),
    }
    _location(tmp_path, "loc", files)
    found = {d.class_name: d.version for d in Plugins([str(tmp_path)], []).all()}
    assert found == {
        "kinds.NoVersionConverter": "undefined",
        "kinds.NullConverter": "null",
        "kinds.BoomConverter": "undefined",
    }


def test_a_broken_location_is_logged_and_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _location(tmp_path, "broken", {"bad.py": "raise RuntimeError('plugin is broken')\n"})
    _location(tmp_path, "good", {"ok.py": _converter("OkConverter")})
    with caplog.at_level(logging.WARNING):
        plugins = Plugins([str(tmp_path)], [])
    assert [d.class_name for d in plugins.all()] == ["ok.OkConverter"]
    assert any(str(tmp_path / "broken") in r.getMessage() for r in caplog.records)


def test_java_archives_on_the_plugin_path_are_skipped_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    jar = tmp_path / "connect-file-4.1.0.jar"
    jar.write_bytes(b"PK")
    absent_jar = tmp_path / "libs" / "connect-file-4.1.0.jar"  # Kafka's stock plugin.path
    entry = tmp_path / "plugins"
    _location(entry, "good", {"ok.py": _converter("OkConverter")})
    (entry / "kafka-connect-jdbc-10.8.0.jar").write_bytes(b"PK")
    kafka_layout = entry / "kafka-connect-s3"  # Kafka's layout: a directory of jars
    kafka_layout.mkdir()
    (kafka_layout / "kafka-connect-s3-10.5.0.jar").write_bytes(b"PK")
    missing = tmp_path / "missing"
    with caplog.at_level(logging.WARNING, logger="connect_lite.plugins.registry"):
        plugins = Plugins([str(jar), str(absent_jar), str(entry), str(missing)], [])
    assert [d.class_name for d in plugins.all()] == ["ok.OkConverter"]
    python_only = (
        "connect-lite runs Python plugins only (one directory of Python modules per plugin); "
        "Kafka's converters and transformations are built in under their Kafka class names"
    )
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("WARNING", f"plugin.path entry {jar} is a Java archive; skipping it: {python_only}"),
        (
            "WARNING",
            f"plugin.path entry {absent_jar} is a Java archive; skipping it: {python_only}",
        ),
        (
            "WARNING",
            f"plugin.path entry {entry} holds Java archives (kafka-connect-jdbc-10.8.0.jar); "
            f"skipping them: {python_only}",
        ),
        (
            "WARNING",
            f"Plugin location {kafka_layout} holds only Java archives "
            f"(kafka-connect-s3-10.5.0.jar); skipping it: {python_only}",
        ),
        ("WARNING", f"plugin.path entry {missing} is not a directory; skipping it"),
    ]


def test_type_helpers(plugins: Plugins) -> None:
    source = plugins.find("VersionedSource", [T.SOURCE]).cls
    sink = plugins.find("VersionedSink", [T.SINK]).cls
    assert plugins.connector_type(source) == "source"
    assert plugins.connector_type(sink) == "sink"
    assert plugins.connector_type(int) == "unknown"
    json_cls = plugins.find("Json", [T.CONVERTER]).cls
    assert Plugins.plugin_type_of(json_cls) == [T.CONVERTER, T.HEADER_CONVERTER]
    assert Plugins.plugin_type_of(SourceConnector) == []  # abstract
    assert issubclass(sink, SinkConnector) and issubclass(json_cls, Converter | HeaderConverter)
