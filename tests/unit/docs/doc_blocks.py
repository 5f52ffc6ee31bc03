"""The fenced code blocks of README.md and docs/*.md, and the ``<!-- test: ID -->`` lines that
name them for the tests that run or check them."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
PAGES = (REPO / "README.md", *sorted((REPO / "docs").glob("*.md")))
"""Every page of the manual, and the README."""

SHELL = frozenset({"shell", "sh", "bash", "console"})
"""The languages of blocks that hold commands."""

_FENCE = re.compile(r"^( *)(```+|~~~+)\s*([\w+-]*)")
_TEST = re.compile(r"^ *<!-- test: ([\w-]+) -->\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced code block: where it is, its language, its text (dedented to its fence) and
    the ID of the ``<!-- test: ID -->`` line right before its fence, if there is one."""

    page: Path
    line: int
    language: str
    text: str
    test_id: str | None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"

    @property
    def is_shell(self) -> bool:
        return self.language in SHELL


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of ``page``, in order."""
    found: list[Block] = []
    lines = page.read_text().splitlines()
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        _, fence, language = opening.groups()
        marker = _TEST.match(lines[i - 1]) if i > 0 else None
        body: list[str] = []
        j = i + 1
        while j < len(lines) and lines[j].strip() != fence:
            body.append(lines[j])
            j += 1
        text = textwrap.dedent("\n".join(body) + "\n") if body else ""
        found.append(Block(page, i + 1, language, text, marker.group(1) if marker else None))
        i = j + 1
    return found


def all_blocks() -> list[Block]:
    return [block for page in PAGES for block in blocks(page)]


def block(test_id: str) -> Block:
    """The one block named ``test_id``."""
    named = [b for b in all_blocks() if b.test_id == test_id]
    assert len(named) == 1, f"{len(named)} blocks named {test_id!r}: {[b.where for b in named]}"
    return named[0]


def markers(page: Path) -> list[tuple[int, str]]:
    """Every ``<!-- test: ID -->`` line of ``page``: its line number and ID."""
    lines = page.read_text().splitlines()
    return [(n + 1, m.group(1)) for n, line in enumerate(lines) if (m := _TEST.match(line))]


def run_shell(
    text: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run a block's commands as one bash script that stops at the first failing command, in
    ``env`` (the whole environment; default: this process's).

    The script runs in a process group of its own, killed when the script ends, so that
    nothing it started in the background outlives it (a worker left running when a command
    failed). Its output goes to files, so a background child that keeps them open does not
    hold this call up."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(
            ["bash", "-e", "-o", "pipefail", "-c", text],
            cwd=cwd,
            env=os.environ if env is None else env,
            stdout=out,
            stderr=err,
            text=True,
            start_new_session=True,
        )
        try:
            process.wait(timeout)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(process.args, process.returncode, out.read(), err.read())
