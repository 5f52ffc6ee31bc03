"""The README's testing example is exactly the test file CI runs."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def test_readme_example_is_the_tested_file() -> None:
    readme = (REPO / "README.md").read_text()
    block = re.search(
        r"<!-- readme-example:begin (\S+) -->\n```python\n(.*?)```\n<!-- readme-example:end -->",
        readme,
        re.S,
    )
    assert block is not None, "README has no readme-example block"
    path, shown = block.group(1), block.group(2)
    assert path == "tests/integration/test_readme_example.py"
    assert shown == (REPO / path).read_text()


def test_readme_example_uses_only_the_public_testing_api() -> None:
    source = (REPO / "tests/integration/test_readme_example.py").read_text()
    imports = re.findall(r"^(?:from|import) (\S+)", source, re.M)
    assert [name for name in imports if name.startswith("connect_lite")] == ["connect_lite.testing"]
