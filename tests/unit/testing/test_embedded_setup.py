"""What EmbeddedConnect hands its worker process, checked without starting one."""

from __future__ import annotations

import os
import sysconfig
from pathlib import Path
from typing import Any

import pytest

import connect_lite.connectors.counter as counter_module
from connect_lite.config.properties import load_properties
from connect_lite.testing import BUNDLED_PLUGINS, FAST_DEFAULTS, EmbeddedConnect
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


def test_given_listeners_name_the_rest_url_and_a_given_workdir_is_known_before_the_start(
    tmp_path: Path,
) -> None:
    listeners = "https://127.0.0.1:8443,http://0.0.0.0:8083"
    connect = EmbeddedConnect(
        bootstrap_servers="127.0.0.1:9",
        workdir=tmp_path,
        worker_properties={"listeners": listeners, "state.storage.file": str(tmp_path / "s.db")},
    )
    assert connect.state_file == tmp_path / "s.db"
    assert connect.log_file == tmp_path / "worker.log"
    connect._prepare_workdir()
    assert connect.rest_url == "http://127.0.0.1:8083"
    assert load_properties(str(connect.properties_file))["listeners"] == listeners


def test_without_a_broker_of_its_own_no_bootstrap_servers_is_written(tmp_path: Path) -> None:
    own_broker = {"embedded.broker.enable": "true"}
    connect = EmbeddedConnect(start_broker=False, worker_properties=own_broker, workdir=tmp_path)
    connect._prepare_workdir()
    props = load_properties(str(connect.properties_file))
    assert "bootstrap.servers" not in props and props["embedded.broker.enable"] == "true"
    assert props["listeners"].startswith("http://127.0.0.1:")
    assert connect.rest_url == props["listeners"]
    with pytest.raises(RuntimeError, match="knows no broker"):
        connect.bootstrap_servers  # noqa: B018


def test_connector_files_and_env_go_to_the_worker_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import connect_lite.testing.embedded as embedded

    started: list[tuple[Any, ...]] = []
    monkeypatch.setattr(embedded, "spawn_worker", lambda *args: started.append(args) or "proc")
    connect = EmbeddedConnect(
        bootstrap_servers="127.0.0.1:9",
        workdir=tmp_path,
        connector_files=[tmp_path / "a.json", "b.properties"],
        env={"ONLY": "this"},
    )
    connect.start(wait_healthy=False)
    connect._proc = None  # no process was started: nothing to stop
    connect.close()
    [(props, workdir, log, files, env)] = started
    assert (props, workdir, log) == (connect.properties_file, tmp_path, connect.log_file)
    assert (files, env) == ([str(tmp_path / "a.json"), "b.properties"], {"ONLY": "this"})


def test_fast_defaults_can_be_left_out(tmp_path: Path) -> None:
    fast = EmbeddedConnect(bootstrap_servers="127.0.0.1:9", workdir=tmp_path / "fast")
    plain = EmbeddedConnect(
        bootstrap_servers="127.0.0.1:9", workdir=tmp_path / "plain", fast_defaults=False
    )
    for connect in (fast, plain):
        connect._prepare_workdir()
    fast_props = load_properties(str(fast.properties_file))
    plain_props = load_properties(str(plain.properties_file))
    assert FAST_DEFAULTS.items() <= fast_props.items()
    assert not FAST_DEFAULTS.keys() & plain_props.keys()
    assert plain_props["bootstrap.servers"] == "127.0.0.1:9"
