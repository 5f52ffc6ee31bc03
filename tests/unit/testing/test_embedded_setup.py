"""What EmbeddedConnect hands its worker process, checked without starting one."""

from __future__ import annotations

import os
import sysconfig
from pathlib import Path

import pytest

import connect_lite.connectors.counter as counter_module
from connect_lite.config.properties import load_properties
from connect_lite.testing import BUNDLED_PLUGINS, EmbeddedConnect
from connect_lite.testing.processes import _python_path

REPO = Path(__file__).resolve().parents[3]


def test_plugin_modules_become_the_plugin_modules_property(tmp_path: Path) -> None:
    connect = EmbeddedConnect(
        bootstrap_servers="127.0.0.1:9",
        plugin_modules=["acme_connect.sources", counter_module],
        workdir=tmp_path,
    )
    connect._prepare_workdir()
    props = load_properties(str(connect.properties_file))
    assert props["plugin.modules"] == "acme_connect.sources,connect_lite.connectors.counter"
    assert props["plugin.path"] == str(REPO / "plugins")  # a checkout: its demo plugins


def test_without_plugin_modules_the_property_is_not_written(tmp_path: Path) -> None:
    connect = EmbeddedConnect(
        bootstrap_servers="127.0.0.1:9", include_bundled_plugins=False, workdir=tmp_path
    )
    connect._prepare_workdir()
    props = load_properties(str(connect.properties_file))
    assert "plugin.modules" not in props and props["plugin.path"] == ""


def test_the_worker_gets_what_this_process_added_to_sys_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    entries = _python_path().split(os.pathsep)
    assert entries[0] == str(REPO)  # where connect_lite is imported from, first
    assert str(tmp_path) in entries
    assert sysconfig.get_paths()["stdlib"] not in entries  # a fresh interpreter has those


def test_bundled_plugins_are_the_checkouts_plugins_directory() -> None:
    assert BUNDLED_PLUGINS == REPO / "plugins"
