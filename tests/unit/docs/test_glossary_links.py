"""Each page links a term of the glossary where it first uses it, so no term comes before its
meaning; and every term the check knows has an entry in the glossary."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.unit.docs.doc_blocks import PAGES, REPO

GLOSSARY = REPO / "docs" / "glossary.md"

TERMS = {
    "herder": r"herders?",
    "data-plane": r"data[- ]plane",
    "control-plane": r"control plane",
    "worker-process": r"worker process(?:es)?",
    "target-state": r"target states?",
    "task": r"(?<!Spark\s)tasks?",  # a Spark task is Spark's unit of work, not a Connect task
    "connector": r"connectors?",
    "state-file": r"state files?",
    "embedded-broker": r"embedded brokers?",
    "config-provider": r"config providers?",
    "dead-letter-queue": r"dead letter queues?",
    "spark-native-sink": r"Spark-native sinks?",
    **{f"kip-{n}": f"KIP-{n}" for n in (158, 297, 298, 421, 558, 610, 821, 875, 891)},
}
"""Glossary anchor: the term's forms in prose (matched whole, in any case)."""

EXEMPT = {
    GLOSSARY: "it is the glossary",
    REPO / "docs" / "architecture.md": "kept as written until the code move updates it",
}

_FENCED = re.compile(r"^( *)(```+|~~~+).*?^\1\2[ \t]*$", re.S | re.M)
_HIDDEN = [
    re.compile(r"<!--.*?-->", re.S),  # comments
    re.compile(r"^#{1,6} .*$", re.M),  # headings: a link cannot go in a title
    re.compile(r"`[^`\n]+`"),  # code spans
    re.compile(r"!\[[^\]]*\]\([^)]*\)"),  # images
]
_LINK = re.compile(r"\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]+)\)")


def prose(text: str) -> str:
    """The page's text with code, comments, headings and images blanked out (same length, so
    positions stay)."""
    for pattern in (_FENCED, *_HIDDEN):
        text = pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    return text


def glossary_anchors() -> set[str]:
    headings = re.findall(r"^#{2,6} (.+)$", GLOSSARY.read_text(), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def first_uses(page: Path) -> dict[str, tuple[int, str | None]]:
    """For each term the page uses: the line of its first use, and the target of the link
    around it (None if it is not in a link)."""
    text = prose(page.read_text())
    links = [(m.start(1), m.end(1), m.group(2)) for m in _LINK.finditer(text)]
    found: dict[str, tuple[int, str | None]] = {}
    for anchor, forms in TERMS.items():
        words = forms.replace(" ", r"\s+")  # a term may wrap to the next line
        match = re.search(rf"(?<![\w.-])(?:{words})(?![\w-])", text, re.I)
        if match is None:
            continue
        target = next((t for s, e, t in links if s <= match.start() < e), None)
        found[anchor] = (text.count("\n", 0, match.start()) + 1, target)
    return found


def test_every_term_has_a_glossary_entry() -> None:
    assert set(TERMS) - glossary_anchors() == set()


@pytest.mark.parametrize("page", [p for p in PAGES if p not in EXEMPT], ids=lambda p: p.name)
def test_a_term_is_linked_to_the_glossary_where_the_page_first_uses_it(page: Path) -> None:
    glossary = "glossary.md" if page.parent.name == "docs" else "docs/glossary.md"
    unlinked = [
        f"{page.name}:{line}: {anchor} (link: {target})"
        for anchor, (line, target) in first_uses(page).items()
        if target != f"{glossary}#{anchor}"
    ]
    assert unlinked == []


def test_the_check_finds_unlinked_terms(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# The herder\n\n`herder` in code. The [herder](glossary.md#herder) decides, and the\n"
        "herder again. A task runs; [tasks](glossary.md#task) later. The [target\n"
        "state](glossary.md#target-state) wraps.\n"
    )
    assert first_uses(page) == {
        "herder": (3, "glossary.md#herder"),
        "task": (4, None),
        "target-state": (4, "glossary.md#target-state"),
    }
