"""The README stays true: its commands exist and its config table matches the declaration."""

from __future__ import annotations

import os
import re
from pathlib import Path

from connect_lite.config.worker import worker_config_markdown

REPO = Path(__file__).resolve().parents[3]
README = (REPO / "README.md").read_text()


def test_readme_starts_with_the_two_commands() -> None:
    first_block = re.search(r"```\n(.*?)```", README, re.S)
    assert first_block is not None
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines()]
    assert commands == ["scripts/run.sh", "scripts/test.sh"]
    for command in commands:
        assert os.access(REPO / command, os.X_OK), command


def test_ci_runs_the_test_command() -> None:
    ci = (REPO / ".ci" / "run").read_text()
    assert "scripts/test.sh" in ci


def test_worker_config_table_is_generated_from_the_declaration() -> None:
    section = re.search(
        r"<!-- worker-config:begin.*?-->\n(.*?)<!-- worker-config:end -->", README, re.S
    )
    assert section is not None
    assert section.group(1).strip() == worker_config_markdown().strip()
