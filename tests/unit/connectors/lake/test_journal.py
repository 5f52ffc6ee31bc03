"""Journals: written atomically, rolled forward idempotently, found for every task."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from connect_lite.connectors.lake import journal
from connect_lite.connectors.lake.journal import Journal
from connect_lite.connectors.lake.layout import Layout
from connect_lite.connectors.lake.store import LocalStore

LAYOUT = Layout("topics", "lake", 0)
TEMP = "_connect-lite/lake/task-0/tmp/r1"


def round_on_disk(tmp_path: Path, names: list[str]) -> Journal:
    """Temp files of a round, and its journal (not yet written)."""
    renames = []
    for i, name in enumerate(names):
        temp = tmp_path / TEMP / str(i) / "part-0"
        temp.parent.mkdir(parents=True)
        temp.write_text(name)
        renames.append((f"{TEMP}/{i}/part-0", f"topics/t/{name}"))
    return Journal(LAYOUT.journal("r1"), tuple(renames), TEMP)


def visible(tmp_path: Path) -> dict[str, str]:
    root = tmp_path / "topics"
    return {str(p.relative_to(root)): p.read_text() for p in root.rglob("*") if p.is_file()}


def test_round_trip_and_version() -> None:
    j = Journal("p", (("a", "b"),), "tmp")
    assert Journal.from_bytes("p", j.to_bytes()) == j
    with pytest.raises(ValueError, match="unknown version 9"):
        Journal.from_bytes("p", b'{"version": 9, "renames": [], "temp_dir": "x"}')


def test_roll_forward_publishes_everything_and_cleans_up(tmp_path: Path) -> None:
    store = LocalStore(f"file://{tmp_path}")
    j = round_on_disk(tmp_path, ["a=1/t+0+0+1.parquet", "a=2/t+0+2+2.parquet"])
    journal.write(store, j)
    assert journal.find(store, LAYOUT) == [j]
    journal.roll_forward(store, j)
    assert visible(tmp_path) == {
        "t/a=1/t+0+0+1.parquet": "a=1/t+0+0+1.parquet",
        "t/a=2/t+0+2+2.parquet": "a=2/t+0+2+2.parquet",
    }
    assert not store.exists(j.path) and not store.exists(TEMP)
    journal.roll_forward(store, j)  # again (another task had it too): nothing changes
    assert len(visible(tmp_path)) == 2


def test_roll_forward_after_a_crash_between_renames(tmp_path: Path) -> None:
    store = LocalStore(f"file://{tmp_path}")
    j = round_on_disk(tmp_path, ["x/t+0+0+0.json", "y/t+0+1+1.json", "z/t+0+2+2.json"])
    journal.write(store, j)
    store.rename(*j.renames[0])  # the crashed task got this far
    journal.roll_forward(store, journal.find(store, LAYOUT)[0])
    assert sorted(visible(tmp_path)) == ["t/x/t+0+0+0.json", "t/y/t+0+1+1.json", "t/z/t+0+2+2.json"]


def test_a_file_published_by_another_copy_is_kept(tmp_path: Path) -> None:
    store = LocalStore(f"file://{tmp_path}")
    j = round_on_disk(tmp_path, ["t+0+0+0.csv"])
    (tmp_path / "topics" / "t").mkdir(parents=True)
    (tmp_path / "topics" / "t" / "t+0+0+0.csv").write_text("first")
    journal.roll_forward(store, j)
    assert visible(tmp_path) == {"t/t+0+0+0.csv": "first"}
    assert not store.exists(TEMP)


def test_a_lost_file_is_reported(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = LocalStore(f"file://{tmp_path}")
    j = Journal(LAYOUT.journal("r2"), (("gone/temp", "topics/t/t+0+0+0.orc"),), "gone")
    with caplog.at_level(logging.WARNING):
        journal.roll_forward(store, j)
    assert "neither gone/temp nor topics/t/t+0+0+0.orc exists" in caplog.text


def test_find_reads_every_task_and_skips_unfinished_writes(tmp_path: Path) -> None:
    store = LocalStore(f"file://{tmp_path}")
    mine = Journal(LAYOUT.journal("a"), (("s", "t"),), "tmp-a")
    theirs = Journal(Layout("topics", "lake", 3).journal("b"), (("s2", "t2"),), "tmp-b")
    other_connector = Journal(Layout("topics", "other", 0).journal("c"), (), "tmp-c")
    for j in (mine, theirs, other_connector):
        journal.write(store, j)
    (tmp_path / "_connect-lite" / "lake" / "task-0" / "journal-d.json.tmp").write_text("{")
    (tmp_path / "_connect-lite" / "lake" / "notes").mkdir()
    assert journal.find(store, LAYOUT) == [mine, theirs]
