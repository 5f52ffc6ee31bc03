"""The short chaos soak of docs/soak.md, run as written: three minutes of faults under load,
every record counted (scripts/soak.py exits 0 only when its books are clean)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.testkit import REPO
from tests.unit.docs.doc_blocks import block

pytestmark = pytest.mark.integration


@pytest.mark.timeout(1500)
def test_the_short_soak_loses_nothing_and_recovers_from_every_fault(tmp_path: Path) -> None:
    command = shlex.split(block("soak-ci").text.strip())
    assert command[0] == ".venv/bin/python" and command[1] == "scripts/soak.py"
    report = tmp_path / "soak.json"
    ran = subprocess.run(
        [sys.executable, *command[1:], "--json", str(report)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=1400,
    )
    output = ran.stdout[-6000:] + ran.stderr[-3000:]
    assert ran.returncode == 0, output  # the summary names the seed and the fault sequence
    result = json.loads(report.read_text())
    assert result["ok"] and result["seed"] == 7
    assert len(result["faults"]) >= 6, output
    assert all(f["recovered_s"] is not None for f in result["faults"]), output
    for name, books in result["sinks"].items():
        assert books["lost"] == 0 and books["sent"] > 0, (name, books)
    assert result["leftover_processes"] == 0
