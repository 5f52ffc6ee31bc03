"""A connector project's test, outside the connect-lite checkout, on the installed wheel.

tests/integration/test_wheel_install.py copies this directory out of the checkout and runs this
file with the pytest of a virtualenv that has the connect-lite wheel and the acme-connect-demo
wheel installed. The ``connect`` fixture comes from the wheel's ``pytest11`` entry point (no
``pytest_plugins`` line); acme-connect-demo's connector from its ``connect_lite.plugins``
entry point; ``my_transforms`` is a module of this directory (``plugin_modules``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import connect_lite
from connect_lite.testing import EmbeddedConnect

HERE = Path(__file__).resolve().parent
ACME = "acme_connect_demo.source.AcmeSourceConnector"
STRINGS = {"value.converter": "org.apache.kafka.connect.storage.StringConverter"}

pytestmark = pytest.mark.connect_lite(
    plugin_modules=["my_transforms"], plugin_paths=[HERE / "plugins"]
)


def test_connect_lite_is_the_wheel_installed_in_this_virtualenv() -> None:
    assert Path(connect_lite.__file__).is_relative_to(Path(sys.prefix) / "lib")


def test_installed_plugins_and_plugin_modules_run(connect: EmbeddedConnect, tmp_path: Path) -> None:
    plugins = connect.client.plugins(connectors_only=False)
    listed = {(p["class"], p.get("version")) for p in plugins}  # no "version" for undefined
    assert {
        ("org.apache.kafka.connect.file.FileStreamSourceConnector", "1.0.0"),  # built in
        (ACME, "2.0.0"),  # plugin.path
        (ACME, "3.1.4"),  # entry point, its distribution's version
        ("my_transforms.UpperCaseValue", None),  # plugin_modules, no distribution: undefined
    } <= listed

    connect.create_topic("acme", partitions=1)
    acme = {"connector.class": "AcmeSource", "topic": "acme", "count": "3"}
    upper = {"transforms": "up", "transforms.up.type": "UpperCaseValue"}
    connect.client.create("acme", acme | upper | STRINGS)
    connect.wait_running("acme", tasks=1)
    records = connect.wait_topic_records("acme", 3)  # transformed in Spark's Python workers
    assert [r.value for r in records] == [b"ACME 0", b"ACME 1", b"ACME 2"]
    status = connect.client.status("acme")
    assert [status["connector"]["version"], status["tasks"][0]["version"]] == ["3.1.4"] * 2

    pinned = {"connector.class": ACME, "topic": "idle", "connector.plugin.version": "2.0.0"}
    connect.client.create("acme-2", pinned)
    connect.wait_running("acme-2", tasks=1)
    assert connect.client.status("acme-2")["connector"]["version"] == "2.0.0"

    source_file = tmp_path / "lines.txt"
    source_file.write_text("one\ntwo\n")
    connect.create_topic("lines", partitions=1)
    file_source = {"connector.class": "FileStreamSource", "file": str(source_file)}
    connect.client.create("lines", file_source | {"topic": "lines"} | STRINGS)
    assert [r.value for r in connect.wait_topic_records("lines", 2)] == [b"one", b"two"]
