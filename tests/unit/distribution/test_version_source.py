"""One version: pyproject.toml's is the package's."""

from __future__ import annotations

import tomllib
from pathlib import Path

import connect_lite

PYPROJECT = Path(__file__).resolve().parents[3] / "pyproject.toml"


def test_the_package_reports_the_version_pyproject_declares() -> None:
    declared = tomllib.loads(PYPROJECT.read_text())["project"]["version"]
    assert connect_lite.__version__ == declared
