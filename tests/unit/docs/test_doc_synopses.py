"""The docs' usage synopses (a command with its options in brackets, not one to run as is)
name only options the commands accept: the command line's, and the benchmark scripts'."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from connect_lite import cli
from tests.unit.docs.doc_blocks import REPO, block


def commands(test_id: str) -> list[str]:
    """A block's commands, continuation lines (indented) joined to theirs."""
    joined: list[str] = []
    for line in block(test_id).text.splitlines():
        if line.startswith((" ", "\t")) and joined:
            joined[-1] += " " + line.strip()
        elif line.strip():
            joined.append(line.strip())
    return joined


def options(command: str) -> list[str]:
    return re.findall(r"(?<![\w-])--[a-z][\w-]*", command)


def test_the_command_line_synopsis_is_the_usage_of_each_form() -> None:
    worker, consume = commands("cli-synopsis")
    assert worker == cli.USAGE
    assert consume.split()[:2] == [cli.PROG, cli.CONSUME]
    consume_help = cli.build_consume_parser().format_help()
    assert options(consume)
    assert [o for o in options(consume) if o not in consume_help] == []


@pytest.mark.parametrize(
    "test_id", ["bench-pipeline", "bench-latency", "bench-cdc", "bench-edge", "soak-synopsis"]
)
def test_every_option_of_a_benchmark_synopsis_is_one_its_script_takes(test_id: str) -> None:
    for command in commands(test_id):
        script = re.search(r"scripts/\w+\.py", command)
        assert script is not None, command
        helped = subprocess.run(
            [sys.executable, script.group(0), "--help"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert helped.returncode == 0, helped.stderr
        assert options(command)
        assert [o for o in options(command) if o not in helped.stdout] == [], command
