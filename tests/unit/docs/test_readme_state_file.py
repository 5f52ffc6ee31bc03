"""The state file section of docs/running.md stays true: its sqlite-utils commands, run on a
file a worker owns, and the message a second worker prints."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from connect_lite import __version__
from connect_lite.config.properties import load_properties
from connect_lite.protocol.states import ConnectorStatus, State
from connect_lite.storage.base import StateFileInUseError, Stores
from connect_lite.storage.sqlite import open_sqlite_stores
from tests.unit.docs.doc_blocks import block

REPO = Path(__file__).resolve().parents[3]
STATE_FILE = "data/connect-lite.db"


def commands() -> list[str]:
    return block("state-file-inspect").text.strip().splitlines()


def table(output: str) -> list[list[str]]:
    """The rows of sqlite-utils' ``-t`` output, split on runs of spaces (header and rule cut)."""
    lines = output.strip().splitlines()
    assert set(lines[1].replace(" ", "")) == {"-"}, output
    return [re.split(r"\s{2,}", line.strip()) for line in lines[2:]]


@pytest.fixture
def repo_like(tmp_path: Path) -> Iterator[Stores]:
    """A directory laid out like the repository after a demo run: ``.venv`` and the state
    file at the path of standalone.properties, owned (open) as by a running worker."""
    (tmp_path / ".venv").symlink_to(REPO / ".venv")
    (tmp_path / "data").mkdir()
    stores = open_sqlite_stores(str(tmp_path / STATE_FILE))
    stores.configs.put_connector_config("local-file-source", {"connector.class": "A"})
    stores.configs.put_connector_config("local-file-sink", {"connector.class": "B"})
    stores.configs.put_task_configs("local-file-sink", [{"task": "0"}, {"task": "1"}])
    stores.offsets.put_many("local-file-source", {"p": ({"file": "in"}, {"position": 7})})
    stores.statuses.put_connector(ConnectorStatus("local-file-sink", State.RUNNING, "w"))
    try:
        yield stores
    finally:
        stores.close()


def test_the_commands_read_the_state_file_of_standalone_properties() -> None:
    assert load_properties(str(REPO / "standalone.properties"))["state.storage.file"] == STATE_FILE
    assert [c.split()[:3] for c in commands()] == [
        [".venv/bin/sqlite-utils", "tables", STATE_FILE],
        [".venv/bin/sqlite-utils", "rows", STATE_FILE],
    ]


def test_the_inspect_commands_work_on_a_file_a_worker_owns(
    repo_like: Stores, tmp_path: Path
) -> None:
    run = [
        subprocess.run(
            ["bash", "-ec", command], cwd=tmp_path, capture_output=True, text=True, timeout=60
        )
        for command in commands()
    ]
    for command, result in zip(commands(), run, strict=True):
        assert result.returncode == 0, (command, result.stderr)
    counts = {name: int(count) for name, count in table(run[0].stdout)}
    assert counts == {
        "migrations": 2,
        "connectors": 2,
        "sqlite_sequence": 1,
        "task_configs": 2,
        "source_offsets": 1,
        "connector_statuses": 1,
        "task_statuses": 0,
        "active_topics": 0,
    }
    migrations = table(run[1].stdout)
    assert [(row[0], row[-1]) for row in migrations] == [
        ("0001_initial", __version__),
        ("0002_migrations_app_version", __version__),
    ]
    # The owner was not disturbed by the reader.
    repo_like.configs.put_connector_config("after", {"connector.class": "C"})
    assert repo_like.configs.connector_names()[-1] == "after"


def test_the_in_use_message_is_the_one_the_worker_prints() -> None:
    error = StateFileInUseError("/home/me/connect-lite/data/connect-lite.db", 12345)
    assert block("state-file-in-use").text == f"ERROR {error}\n"
