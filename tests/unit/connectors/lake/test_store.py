"""LocalStore: the file operations of a file:// store."""

from __future__ import annotations

from pathlib import Path

from connect_lite.connectors.lake.store import LocalStore, open_store


def test_paths_and_urls(tmp_path: Path) -> None:
    store = LocalStore(f"file://{tmp_path}/")
    assert store.root == str(tmp_path)
    assert store.url("a/b") == f"file://{tmp_path}/a/b"
    assert store.local("a/b") == str(tmp_path / "a" / "b")
    assert LocalStore("file:///data/my lake%20x").root == "/data/my lake%20x"  # as Spark
    assert isinstance(open_store(f"file://{tmp_path}", None), LocalStore)
    assert open_store("s3a://bucket/lake", None) is None  # needs a Spark session


def test_write_atomically_read_and_list(tmp_path: Path) -> None:
    store = LocalStore(f"file://{tmp_path}")
    store.write_atomically("x/y/journal.json", b"{}")
    assert store.read("x/y/journal.json") == b"{}"
    assert sorted(p.name for p in (tmp_path / "x" / "y").iterdir()) == ["journal.json"]
    (tmp_path / "x" / "y" / ".hidden").write_text("h")
    (tmp_path / "x" / ".hidden-dir").mkdir()
    (tmp_path / "x" / ".hidden-dir" / "f").write_text("h")
    (tmp_path / "x" / "z").write_text("z")
    assert store.list_dir("x") == [(".hidden-dir", True), ("y", True), ("z", False)]
    assert store.list_files("x") == ["x/y/journal.json", "x/z"]
    assert store.list_dir("missing") == [] and store.list_files("missing") == []


def test_rename_creates_directories_and_reports_a_missing_source(tmp_path: Path) -> None:
    store = LocalStore(f"file://{tmp_path}")
    (tmp_path / "src").write_text("data")
    assert store.rename("src", "a/b/c/dst")
    assert (tmp_path / "a" / "b" / "c" / "dst").read_text() == "data"
    assert not store.exists("src") and store.exists("a/b/c/dst")
    assert store.rename("src", "a/other") is False


def test_delete_trees_files_and_nothing(tmp_path: Path) -> None:
    store = LocalStore(f"file://{tmp_path}")
    (tmp_path / "t" / "u").mkdir(parents=True)
    (tmp_path / "t" / "u" / "f").write_text("f")
    (tmp_path / "g").write_text("g")
    store.delete("t")
    store.delete("g")
    store.delete("never")
    assert list(tmp_path.iterdir()) == []
