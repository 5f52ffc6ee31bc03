"""The example of the testing page (docs/testing.md) is exactly the test file CI runs."""

from __future__ import annotations

import re
from pathlib import Path

from tests.unit.docs.doc_blocks import block

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "tests" / "integration" / "test_readme_example.py"


def test_the_testing_example_is_the_tested_file() -> None:
    shown = block("testing-example")
    assert shown.page.name == "testing.md"
    assert shown.language == "python"
    assert shown.text == EXAMPLE.read_text()


def test_the_testing_example_uses_only_the_public_testing_api() -> None:
    imports = re.findall(r"^(?:from|import) (\S+)", EXAMPLE.read_text(), re.M)
    assert [name for name in imports if name.startswith("connect_lite")] == ["connect_lite.testing"]
