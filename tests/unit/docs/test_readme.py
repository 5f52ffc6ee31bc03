"""The README stays short and true: it starts with the two commands, which exist, and CI runs
the test command and builds the docs site."""

from __future__ import annotations

import os
from pathlib import Path

from tests.unit.docs.doc_blocks import PAGES, block, blocks

REPO = Path(__file__).resolve().parents[3]
README = REPO / "README.md"
MAX_LINES = 300


def test_readme_starts_with_the_two_commands() -> None:
    first = blocks(README)[0]
    assert first.test_id == "two-commands"
    commands = [line.split("#")[0].strip() for line in first.text.splitlines()]
    assert commands == ["scripts/run.sh", "scripts/test.sh"]
    for command in commands:
        assert os.access(REPO / command, os.X_OK), command


def test_the_development_page_shows_the_same_two_commands() -> None:
    assert block("dev-commands").text == block("two-commands").text


def test_ci_runs_the_test_command_and_builds_the_site() -> None:
    ci = (REPO / ".ci" / "run").read_text()
    assert "scripts/test.sh" in ci
    assert ".venv/bin/mkdocs build --strict" in ci


def test_the_readme_is_short_and_links_every_page() -> None:
    assert len(README.read_text().splitlines()) <= MAX_LINES
    text = README.read_text()
    pages = [page for page in PAGES if page.parent.name == "docs" and page.name != "index.md"]
    unlinked = [page.name for page in pages if f"(docs/{page.name}" not in text]
    assert unlinked == []
