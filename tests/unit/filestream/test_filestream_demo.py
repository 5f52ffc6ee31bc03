"""The demo configs and input script, and a source-to-sink round trip without a broker."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from connect_lite.api import SinkRecord
from tests.file_modules import load_file

DEMO_DIR = Path(__file__).resolve().parents[3] / "scripts" / "demo"


@pytest.fixture(scope="module")
def make_input() -> ModuleType:
    return load_file("_demo_make_input", DEMO_DIR / "make_input.py")


def load_request(name: str) -> dict[str, Any]:
    request = json.loads((DEMO_DIR / name).read_text())
    assert set(request) == {"name", "config"}
    assert all(isinstance(v, str) for v in request["config"].values())
    return request


def test_demo_connectors_copy_input_through_the_demo_topic() -> None:
    source = load_request("file-source.json")["config"]
    sink = load_request("file-sink.json")["config"]
    assert source["connector.class"] == "org.apache.kafka.connect.file.FileStreamSourceConnector"
    assert sink["connector.class"] == "org.apache.kafka.connect.file.FileStreamSinkConnector"
    assert source["topic"] == sink["topics"] == "connect-lite-demo"
    assert (source["file"], sink["file"]) == ("data/demo/input.txt", "data/demo/output.txt")


def test_demo_configs_are_valid(source_module: ModuleType, sink_module: ModuleType) -> None:
    for module, name in [(source_module, "Source"), (sink_module, "Sink")]:
        config = load_request(f"file-{name.lower()}.json")["config"]
        connector = getattr(module, f"FileStream{name}Connector")()
        values = connector.config().validate(config)
        assert [cv.errors for cv in values.values() if cv.errors] == []


def test_make_input_writes_numbered_lines_once(make_input: ModuleType, tmp_path: Path) -> None:
    output = tmp_path / "demo" / "input.txt"
    assert make_input.main(["25", "--output", str(output)]) == 0
    lines = output.read_text().splitlines()
    assert len(lines) == 25 and len(set(lines)) == 25
    assert make_input.make_input(output, 5) is False  # exists: left alone
    assert len(output.read_text().splitlines()) == 25
    assert make_input.make_input(output, 5, force=True) is True
    assert len(output.read_text().splitlines()) == 5


def test_default_is_1000_lines_under_data_demo(make_input: ModuleType) -> None:
    assert make_input.DEFAULT_LINES == 1000
    assert make_input.DEFAULT_OUTPUT.parts[-3:] == ("data", "demo", "input.txt")


def test_source_to_sink_round_trip(
    make_input: ModuleType,
    make_source_task: Any,
    sink_module: ModuleType,
    poll_until: Any,
    tmp_path: Path,
) -> None:
    source_path, sink_path = tmp_path / "input.txt", tmp_path / "output.txt"
    make_input.make_input(source_path, 5000)
    source = make_source_task({"file": str(source_path), "topic": "connect-lite-demo"})
    records = poll_until(source, lambda got: len(got) >= 5000)
    sink = sink_module.FileStreamSinkTask()
    sink.start({"file": str(sink_path)})
    sink.put([SinkRecord(r.topic, 0, i, r.key, r.value) for i, r in enumerate(records)])
    sink.flush({})
    sink.stop()
    assert sink_path.read_bytes() == source_path.read_bytes()


def test_builtin_connectors_import_only_the_public_api() -> None:
    package = DEMO_DIR.parents[1] / "connect_lite" / "connectors"
    imports = {
        line.split()[1]
        for source in package.glob("**/*.py")
        for line in source.read_text().splitlines()
        if line.startswith(("import connect_lite", "from connect_lite"))
    }
    assert "connect_lite.api" in imports
    assert {i for i in imports if i.split(".")[:2] != ["connect_lite", "api"]} == set()
