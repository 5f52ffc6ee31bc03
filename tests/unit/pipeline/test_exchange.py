"""ChunkExchange and the Python workers' side of it: chunks and results through files."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from connect_lite.pipeline import exchange
from connect_lite.pipeline.exchange import REF_PREFIX, ChunkExchange


def test_a_chunk_and_its_result_go_through_files_that_are_removed_once_read(tmp_path: Path):
    ex = ChunkExchange(str(tmp_path))
    refs = ex.put([b"\x80chunk-0", b"\x80chunk-1"])
    assert ex.directory is not None and ex.sent == 2
    assert stat.S_IMODE(os.stat(ex.directory).st_mode) == 0o700
    paths = [exchange.referenced(ref) for ref in refs]
    assert all(ref.startswith(REF_PREFIX) for ref in refs)
    assert [Path(p).read_bytes() for p in paths if p] == [b"\x80chunk-0", b"\x80chunk-1"]

    # In a Python worker: read the chunk (it stays, for a task run again), write the result.
    assert paths[0] is not None
    assert exchange.read(paths[0]) == b"\x80chunk-0"
    result_ref = exchange.put_result(paths[0], b"\x80result-0")
    assert Path(paths[0]).exists()

    # On the driver: the result, read and removed; then the job's chunks.
    assert exchange.resolve(result_ref) == b"\x80result-0"
    assert not Path(paths[0] + ".out").exists()
    ex.discard(refs)
    assert os.listdir(ex.directory) == []
    ex.close()
    assert ex.directory is None and not any(tmp_path.iterdir())


def test_an_inline_payload_is_passed_through():
    payload = b"\x80\x05inline pickle"
    assert exchange.referenced(payload) is None
    assert exchange.resolve(payload) is payload
    assert exchange.resolve(memoryview(payload)) == payload


def test_a_chunk_that_cannot_be_written_travels_inline(tmp_path: Path):
    ex = ChunkExchange(str(tmp_path / "missing"))  # mkdtemp fails: no such directory
    assert ex.put([b"\x80a", b"\x80b"]) == [b"\x80a", b"\x80b"]
    assert ex.sent == 0


def test_a_result_that_cannot_be_written_travels_inline(tmp_path: Path):
    gone = str(tmp_path / "gone" / "1")
    assert exchange.put_result(gone, b"\x80result") == b"\x80result"


def test_discard_removes_the_inputs_and_results_of_a_failed_job(tmp_path: Path):
    ex = ChunkExchange(str(tmp_path))
    refs = ex.put([b"\x80a", b"\x80b", b"\x80c"])
    first = exchange.referenced(refs[0])
    assert first is not None
    exchange.put_result(first, b"\x80done")  # one task finished before the job failed
    ex.discard([*refs, b"\x80inline"])
    assert ex.directory is not None and os.listdir(ex.directory) == []


def test_directories_of_processes_that_are_gone_are_removed(tmp_path: Path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    orphan = tmp_path / f"connect-lite-chunks-{dead.stdout.strip()}-x"
    orphan.mkdir()
    (orphan / "1").write_bytes(b"left by a killed worker")
    living = tmp_path / f"connect-lite-chunks-{os.getpid()}-y"
    living.mkdir()
    unrelated = tmp_path / "other"
    unrelated.mkdir()

    ChunkExchange(str(tmp_path)).put([b"\x80a"])
    assert not orphan.exists()
    assert living.exists() and unrelated.exists()
