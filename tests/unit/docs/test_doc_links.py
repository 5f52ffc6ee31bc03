"""The README and docs/ link only to files that ship with them, and to headings that exist;
the paths docs/architecture.md names exist. (``mkdocs build --strict`` checks the site's links
too, generated pages included; this checks them as GitHub shows the files.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.M)


def prose(path: Path) -> str:
    """The Markdown outside fenced code blocks."""
    return _FENCE.sub("", path.read_text())


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    return {slug(h) for h in _HEADING.findall(prose(path))}


def relative_links(path: Path) -> list[str]:
    return [
        target
        for target in _LINK.findall(prose(path))
        if not re.match(r"^[a-z][a-z0-9+.-]*:", target)  # http:, https:, mailto:
    ]


def test_there_are_docs_to_check() -> None:
    names = {path.name for path in DOCS}
    assert {"README.md", "compatibility.md", "architecture.md", "glossary.md"} <= names
    assert len(DOCS) >= 20


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: path.name)
def test_every_relative_link_points_to_a_shipped_file_and_heading(doc: Path) -> None:
    links = relative_links(doc)
    assert links, f"{doc.name}: no relative links found: a page of the manual links others"
    for link in links:
        file_part, _, anchor = link.partition("#")
        target = (doc.parent / file_part).resolve() if file_part else doc
        assert target.exists(), f"{doc.name}: {link} points to a missing file"
        assert REPO in target.parents or target == REPO, f"{doc.name}: {link} leaves the repo"
        assert "shared" not in target.relative_to(REPO).parts, f"{doc.name}: {link}"
        if anchor and target.suffix == ".md":
            assert anchor in anchors(target), f"{doc.name}: {link}: no such heading"


def test_the_readme_names_no_file_outside_the_repository() -> None:
    # "../shared/DESIGN.md" in a link or in code alike; ".../stop" is an ellipsis
    assert re.findall(r"(?<!\.)\.\./\w[\w./-]*", (REPO / "README.md").read_text()) == []


def test_every_path_the_architecture_page_names_exists() -> None:
    text = (REPO / "docs" / "architecture.md").read_text()
    roots = ("connect_lite/", "tests/", "scripts/", "plugins/", "docs/", ".ci/")
    paths = [p for p in re.findall(r"`([\w./-]+)`", text) if p.startswith(roots)]
    assert len(paths) > 20
    missing = [p for p in paths if not (REPO / p).exists()]
    assert missing == []
