"""Plugins of installed distributions (entry points ``connect_lite.plugins``) and plugin.modules."""

from __future__ import annotations

import logging
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from connect_lite.plugins import distributions
from connect_lite.plugins.distributions import entry_point_plugins, module_version, version_of
from connect_lite.plugins.registry import Plugins
from connect_lite.plugins.types import PluginType as T

CONNECTORS = [T.SOURCE, T.SINK]

_SOURCE = """
from connect_lite.api import SourceConnector, SourceTask


class EpTask(SourceTask):
    def start(self, config):
        pass

    def poll(self):
        return None

    def stop(self):
        pass


class EpSourceConnector(SourceConnector):
    {version}

    def start(self, config):
        pass

    def task_class(self):
        return EpTask

    def task_configs(self, max_tasks):
        return [{{}}]

    def stop(self):
        pass
"""

_CONVERTER = """
from connect_lite.api import Converter, SchemaAndValue


class EpConverter(Converter):
    def version(self):
        return "0.0.7"

    def from_connect_data(self, topic, schema, value):
        return b""

    def to_connect_data(self, topic, value):
        return SchemaAndValue(None, None)
"""


def _source(version: str | None = None) -> str:
    body = "pass" if version is None else f"def version(self):\n        return {version!r}"
    return textwrap.dedent(_SOURCE).format(version=body)


def _write(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def _distribution(root: Path, name: str, version: str, entry_points: str, top: str) -> None:
    """A ``*.dist-info`` as pip leaves it: metadata, entry points and the top-level package."""
    info = root / f"{name.replace('-', '_')}-{version}.dist-info"
    _write(
        root,
        {
            f"{info.name}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
            f"{info.name}/entry_points.txt": textwrap.dedent(entry_points),
            f"{info.name}/top_level.txt": f"{top}\n",
        },
    )


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory on sys.path, like site-packages; its modules are forgotten afterwards."""
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    distributions._distributions_by_package.cache_clear()  # read once per process otherwise
    before = set(sys.modules)
    yield root
    distributions._distributions_by_package.cache_clear()
    for name in set(sys.modules) - before:
        if name.split(".", 1)[0] in {"acme_ep", "acme_one", "plain_plugins", "rough_pkg"}:
            del sys.modules[name]


@pytest.fixture
def acme(site: Path) -> Path:
    """Distribution acme-ep-connect 3.1.4: a package whose entry point names it."""
    _write(
        site,
        {
            "acme_ep/__init__.py": "",
            "acme_ep/source.py": _source(),
            "acme_ep/formats/__init__.py": "",
            "acme_ep/formats/conv.py": _CONVERTER,
        },
    )
    entry_points = """
        [connect_lite.plugins]
        acme = acme_ep
    """
    _distribution(site, "acme-ep-connect", "3.1.4", entry_points, "acme_ep")
    return site


def test_an_entry_point_package_is_scanned_with_its_submodules(acme: Path) -> None:
    assert [(e.name, e.module, e.distribution, e.version) for e in entry_point_plugins()] == [
        ("acme", "acme_ep", "acme-ep-connect", "3.1.4")
    ]
    plugins = Plugins([])
    source = plugins.find("EpSource", CONNECTORS)
    assert (source.class_name, source.version, source.location) == (
        "acme_ep.source.EpSourceConnector",
        "3.1.4",  # no version() of its own: the distribution's
        None,
    )
    assert (source.ref.module, source.ref.load()) == ("acme_ep.source", source.cls)
    converter = plugins.find("acme_ep.formats.conv.EpConverter", [T.CONVERTER])
    assert converter.version == "0.0.7"  # its own version() wins
    assert plugins.find("FileStreamSource", CONNECTORS).version == "1.0.0"  # built-ins stay


def test_an_entry_point_may_name_one_class(site: Path) -> None:
    _write(site, {"acme_one.py": _source() + _CONVERTER})
    entry_points = "[connect_lite.plugins]\none = acme_one:EpConverter\n"
    _distribution(site, "acme-one", "2.5", entry_points, "acme_one")
    plugins = Plugins([], [])
    assert [(d.class_name, d.type, d.version) for d in plugins.all()] == [
        ("acme_one.EpConverter", T.CONVERTER, "0.0.7")
    ]


def test_a_broken_entry_point_is_logged_and_skipped(
    acme: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _write(acme, {"acme_bad.py": "raise RuntimeError('broken plugin')\n"})
    entry_points = """
        [connect_lite.plugins]
        bad = acme_bad
        missing = acme_ep:NoSuchThing
    """
    _distribution(acme, "acme-bad", "1.0", entry_points, "acme_bad")
    with caplog.at_level(logging.WARNING, logger="connect_lite.plugins.registry"):
        plugins = Plugins([], [])
    assert plugins.find("EpSource", CONNECTORS).version == "3.1.4"
    warnings = sorted(r.getMessage() for r in caplog.records)
    assert warnings == [
        "Failed to import entry point bad = acme_bad of acme-bad 1.0; skipping it",
        "Failed to load entry point missing = acme_ep:NoSuchThing of acme-bad 1.0; skipping it",
    ]
    sys.modules.pop("acme_bad", None)


def test_kip_891_across_an_entry_point_and_plugin_path(acme: Path, tmp_path: Path) -> None:
    location = tmp_path / "path" / "acme-2.0.0"
    _write(location, {"acme_ep/__init__.py": "", "acme_ep/source.py": _source("2.0.0")})
    plugins = Plugins([str(location.parent)])
    assert plugins.versions("EpSourceConnector", CONNECTORS) == ["2.0.0", "3.1.4"]
    assert plugins.find("EpSource", CONNECTORS).location is None  # latest: the distribution's
    pinned = plugins.find("EpSource", CONNECTORS, "2.0.0")
    assert (pinned.location, pinned.class_name) == (
        str(location),
        "acme_ep.source.EpSourceConnector",
    )
    assert plugins.new_instance(pinned).version() == "2.0.0"
    assert plugins.find("acme_ep.source.EpSourceConnector", CONNECTORS, "[3.0,)").version == "3.1.4"


def test_plugin_modules_are_scanned_and_versioned_by_their_distribution(acme: Path) -> None:
    _write(acme, {"plain_plugins/__init__.py": "", "plain_plugins/src.py": _source()})
    plugins = Plugins([], [], ["plain_plugins", "acme_ep.source"], entry_points=False)
    found = {d.class_name: d.version for d in plugins.all(CONNECTORS)}
    assert found == {
        "plain_plugins.src.EpSourceConnector": "undefined",  # on sys.path only: no distribution
        "acme_ep.source.EpSourceConnector": "3.1.4",
    }
    assert module_version("acme_ep.source") == "3.1.4"
    assert module_version("plain_plugins") is None


def test_a_missing_plugin_module_is_logged_and_skipped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="connect_lite.plugins.registry"):
        plugins = Plugins([], plugin_modules=["no_such_module_here"])
    assert plugins.find("FileStreamSink", CONNECTORS)
    assert [r.getMessage() for r in caplog.records] == [
        "Failed to import plugin.modules entry no_such_module_here; skipping it"
    ]


def test_a_running_plugin_without_version_reports_its_distributions(acme: Path) -> None:
    desc = Plugins([]).find("EpSource", CONNECTORS)
    connector = desc.cls()
    task = connector.task_class()()
    assert (version_of(connector), version_of(task)) == ("3.1.4", "3.1.4")
    converter = Plugins([]).find("EpConverter", [T.CONVERTER]).cls()
    assert version_of(converter) == "0.0.7"


def test_a_broken_package_a_main_module_and_a_failing_submodule_never_stop_the_scan(
    acme: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _write(
        acme,
        {
            "rough_pkg/__init__.py": "",
            "rough_pkg/__main__.py": "raise SystemExit('the package CLI ran')\n",
            "rough_pkg/broken.py": "raise RuntimeError('half-installed')\n",
            "rough_pkg/exits.py": "import sys\nsys.exit(3)\n",
            "rough_pkg/source.py": _source("9.9.9").replace("Ep", "Rough"),
        },
    )
    rough = """
        [connect_lite.plugins]
        rough = rough_pkg
    """
    _distribution(acme, "rough-connect", "9.9.9", rough, "rough_pkg")
    # Metadata that importlib cannot parse, in a group that is not even ours.
    _distribution(acme, "mangled", "1.0", "[console_scripts]\nno equals sign here\n", "mangled")
    with caplog.at_level(logging.WARNING):
        plugins = Plugins([], builtin_modules=[])
    assert plugins.find("RoughSource", CONNECTORS).version == "9.9.9"
    assert plugins.find("EpSource", CONNECTORS).version == "3.1.4"
    assert "the package CLI ran" not in caplog.text
    assert "Failed to import plugin module rough_pkg.broken; skipping it" in caplog.text
    assert "Failed to import plugin module rough_pkg.exits; skipping it" in caplog.text
    assert "Skipping the entry points of installed package mangled" in caplog.text
