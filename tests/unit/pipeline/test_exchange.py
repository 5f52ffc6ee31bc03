"""ChunkExchange and the Python workers' side of it: chunks and results through files."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from connect_lite.pipeline import exchange
from connect_lite.pipeline.exchange import DIR_PREFIX, REF_PREFIX, ChunkExchange


def test_a_chunk_and_its_result_go_through_files_removed_with_the_job(tmp_path: Path):
    ex = ChunkExchange(str(tmp_path))
    job = ex.put([b"\x80chunk-0", b"\x80chunk-1"])
    assert job.directory is not None and ex.sent == 2
    root = ex.directory
    assert root is not None and stat.S_IMODE(os.stat(root).st_mode) == 0o700
    paths = [exchange.referenced(row) for row in job.rows]
    assert all(row.startswith(REF_PREFIX) for row in job.rows)
    assert [Path(p).read_bytes() for p in paths if p] == [b"\x80chunk-0", b"\x80chunk-1"]

    # In a Python worker: read the chunk (it stays, for a task run again), write the result.
    assert paths[0] is not None
    assert exchange.read(paths[0]) == b"\x80chunk-0"
    assert exchange.read(paths[0]) == b"\x80chunk-0"
    result = exchange.put_result(paths[0], b"\x80result-0")
    assert exchange.put_result(paths[0], b"\x80result-0, again") == result  # a task run again

    # On the driver: the result, read and removed; then the job's files all go.
    assert ex.resolve(result) == b"\x80result-0, again"
    assert not Path(paths[0] + ".out").exists()
    job.discard()
    assert not Path(job.directory).exists()
    assert os.listdir(root) == [".lock"]
    ex.close()
    assert ex.directory is None and not any(tmp_path.iterdir())


def test_an_inline_payload_is_passed_through(tmp_path: Path):
    payload = b"\x80\x05inline pickle"
    assert exchange.referenced(payload) is None
    assert ChunkExchange(str(tmp_path)).resolve(payload) is payload


def test_a_result_outside_the_exchange_is_refused(tmp_path: Path):
    ex = ChunkExchange(str(tmp_path / "a"))
    (tmp_path / "a").mkdir()
    ex.root()
    elsewhere = tmp_path / "secret"
    elsewhere.write_bytes(b"not a chunk")
    with pytest.raises(ValueError, match="outside"):
        ex.resolve(REF_PREFIX + os.fsencode(str(elsewhere)))
    assert elsewhere.exists()


def test_chunks_travel_inline_when_no_directory_can_be_made(tmp_path: Path):
    ex = ChunkExchange(str(tmp_path / "missing"))  # mkdtemp fails: no such directory
    job = ex.put([b"\x80a", b"\x80b"])
    assert job.rows == [b"\x80a", b"\x80b"] and job.directory is None
    assert ex.sent == 0
    job.discard()


def test_a_chunk_that_cannot_be_written_travels_inline_and_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    ex = ChunkExchange(str(tmp_path))
    write = exchange._write
    monkeypatch.setattr(
        exchange, "_write", lambda path, data: not path.endswith(f"{os.sep}1") and write(path, data)
    )
    job = ex.put([b"\x80a", b"\x80b", b"\x80c"])
    assert job.rows[1] == b"\x80b" and ex.sent == 2
    assert job.directory is not None and sorted(os.listdir(job.directory)) == ["0", "2"]


def test_a_partly_written_file_is_removed(tmp_path: Path):
    target = tmp_path / "full"
    target.write_bytes(b"")  # "xb": the file exists, the write fails
    assert exchange._write(str(target), b"data") is False
    assert not target.exists()


def test_a_late_result_of_an_ended_job_travels_inline(tmp_path: Path):
    ex = ChunkExchange(str(tmp_path))
    job = ex.put([b"\x80a"])
    path = exchange.referenced(job.rows[0])
    assert path is not None
    job.discard()  # the job failed; a task of it finishes after
    assert exchange.put_result(path, b"\x80late") == b"\x80late"
    assert job.directory is not None and not Path(job.directory).exists()


def test_a_removed_directory_is_made_again(tmp_path: Path):
    ex = ChunkExchange(str(tmp_path))
    first = ex.root()
    os.rename(first, str(tmp_path / "moved"))
    second = ex.root()
    assert second != first and os.path.isdir(second)
    assert ex.put([b"\x80a"]).rows[0].startswith(REF_PREFIX)


def test_directories_no_living_exchange_holds_are_removed(tmp_path: Path):
    # One made by a process that has ended (its lock went with it).
    subprocess.run(
        [sys.executable, "-c", "from connect_lite.pipeline.exchange import ChunkExchange as C; "
         f"C({str(tmp_path)!r}).put([b'left by a killed worker'])"],
        check=True, cwd=Path(__file__).resolve().parents[3],
    )  # fmt: skip
    (orphan,) = tmp_path.iterdir()
    living = ChunkExchange(str(tmp_path))
    living.root()
    unlocked = tmp_path / f"{DIR_PREFIX}being-made"  # made, not yet locked: left
    unlocked.mkdir()
    unrelated = tmp_path / "other"
    unrelated.mkdir()
    weird = tmp_path / f"{DIR_PREFIX}99999999999999999999-²"
    weird.mkdir()

    ChunkExchange(str(tmp_path)).root()
    assert not orphan.exists()
    assert living.directory is not None and os.path.isdir(living.directory)
    assert unlocked.exists() and unrelated.exists() and weird.exists()
