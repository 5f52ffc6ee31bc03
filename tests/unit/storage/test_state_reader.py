"""A read-only opener of the state file, beside the worker that owns it."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from connect_lite.api.errors import ConnectError
from connect_lite.protocol.states import ConnectorStatus, State
from connect_lite.storage.base import (
    StateFileDamagedError,
    StateFileError,
    StateFileTooNewError,
    Stores,
)
from connect_lite.storage.sqlite import open_sqlite_reader, open_sqlite_stores


@pytest.fixture
def owner(tmp_path: Path) -> Iterator[Stores]:
    stores = open_sqlite_stores(str(tmp_path / "state.db"))
    yield stores
    stores.close()


def offsets(position: int) -> dict[str, tuple[dict[str, str], dict[str, int]]]:
    return {"f": ({"filename": "f"}, {"position": position})}


def test_a_reader_sees_what_the_owner_commits_while_it_holds_the_file(
    owner: Stores, tmp_path: Path
):
    owner.offsets.put_many("src", offsets(10))
    reader = open_sqlite_reader(str(tmp_path / "state.db"))
    try:
        assert reader.offsets.all("src") == [({"filename": "f"}, {"position": 10})]
        owner.offsets.put_many("src", offsets(20))
        owner.statuses.put_connector(ConnectorStatus("src", State.RUNNING, "w1"))
        assert reader.offsets.all("src") == [({"filename": "f"}, {"position": 20})]
        status = reader.statuses.get_connector("src")
        assert status is not None and status.state is State.RUNNING
    finally:
        reader.close()
    owner.offsets.put_many("src", offsets(30))  # the owner goes on after the reader closed
    assert owner.offsets.all("src") == [({"filename": "f"}, {"position": 30})]


def test_a_write_through_a_reader_is_refused_and_changes_nothing(owner: Stores, tmp_path: Path):
    owner.offsets.put_many("src", offsets(10))
    reader = open_sqlite_reader(str(tmp_path / "state.db"))
    try:
        with pytest.raises(ConnectError, match="readonly"):
            reader.offsets.put_many("src", offsets(99))
        assert owner.offsets.all("src") == [({"filename": "f"}, {"position": 10})]
    finally:
        reader.close()


def test_no_file_is_refused_and_none_is_made(tmp_path: Path):
    path = tmp_path / "missing.db"
    with pytest.raises(StateFileError, match="does not exist"):
        open_sqlite_reader(str(path))
    assert not path.exists()


def test_a_directory_is_refused(tmp_path: Path):
    with pytest.raises(StateFileError, match="is not a file"):
        open_sqlite_reader(str(tmp_path))


def test_a_file_that_is_not_sqlite_is_refused_unchanged(tmp_path: Path):
    path = tmp_path / "notes.db"
    path.write_bytes(b"not a database at all\n" * 100)
    before = path.read_bytes()
    with pytest.raises(StateFileDamagedError):
        open_sqlite_reader(str(path))
    assert path.read_bytes() == before


def test_a_file_no_worker_of_this_version_opened_is_refused(tmp_path: Path):
    path = tmp_path / "plain.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE other (x INTEGER)")
    conn.close()
    with pytest.raises(StateFileError, match="lacks the migrations 0001_initial"):
        open_sqlite_reader(str(path))


def test_a_file_not_in_wal_mode_is_refused_unchanged(owner: Stores, tmp_path: Path):
    owner.close()
    path = tmp_path / "state.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    before = path.read_bytes()
    with pytest.raises(StateFileError, match="delete journal mode, not WAL"):
        open_sqlite_reader(str(path))
    assert path.read_bytes() == before


def test_a_file_of_a_newer_version_is_refused(owner: Stores, tmp_path: Path):
    path = tmp_path / "state.db"
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(
            "INSERT INTO migrations (name, applied_at, app_version) VALUES ('9999_new', 0, '99')"
        )
    conn.close()
    with pytest.raises(StateFileTooNewError):
        open_sqlite_reader(str(path))


def test_reading_changes_no_byte_of_the_file(owner: Stores, tmp_path: Path):
    owner.offsets.put_many("src", offsets(10))
    owner.close()  # checkpointed: the data is all in the file itself
    path = tmp_path / "state.db"
    before = path.read_bytes()
    reader = open_sqlite_reader(str(path))
    try:
        assert reader.offsets.all("src") == [({"filename": "f"}, {"position": 10})]
        assert reader.configs.connector_names() == []
    finally:
        reader.close()
    assert path.read_bytes() == before


def test_a_path_with_spaces_and_a_question_mark_opens(tmp_path: Path):
    path = tmp_path / "a dir?x=1" / "state #1.db"
    path.parent.mkdir()
    stores = open_sqlite_stores(str(path))
    stores.offsets.put_many("src", offsets(5))
    reader = open_sqlite_reader(str(path))
    try:
        assert reader.offsets.all("src") == [({"filename": "f"}, {"position": 5})]
    finally:
        reader.close()
        stores.close()
