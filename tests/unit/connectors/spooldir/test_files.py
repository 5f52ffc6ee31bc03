"""The spool directory: which files a task reads, in what order, and where they go."""

from __future__ import annotations

import os
import time
from pathlib import Path

from connect_lite.connectors.spooldir.files import InputFile, Spool, by_date, move, prune


def spool(root: Path, **changes: object) -> Spool:
    settings: dict[str, object] = {
        "input_path": str(root),
        "pattern": r".*\.csv",
        "flag_extension": ".PROCESSING",
        "minimum_age_ms": 0,
        "sort_attributes": ("NameAsc",),
        "recursive": False,
        "task_index": 0,
        "task_count": 1,
        **changes,
    }
    return Spool(**settings)  # type: ignore[arg-type]


def names(files: list[InputFile]) -> list[str]:
    return [f.relative for f in files]


def test_matching_unflagged_files_of_a_minimum_age_in_sort_order(tmp_path: Path) -> None:
    for name, size in (("b.csv", 3), ("a.csv", 1), ("c.csv", 2), ("x.txt", 1), ("d.csv", 4)):
        (tmp_path / name).write_text("x" * size)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "e.csv").write_text("e")
    (tmp_path / "d.csv.PROCESSING").write_text("")
    assert names(spool(tmp_path).list()) == ["a.csv", "b.csv", "c.csv"]
    assert names(spool(tmp_path, sort_attributes=("LengthDesc",)).list()) == [
        "b.csv",
        "c.csv",
        "a.csv",
    ]
    assert names(spool(tmp_path, recursive=True).list()) == [
        "a.csv",
        "b.csv",
        "c.csv",
        "sub/e.csv",
    ]
    now = int(time.time() * 1000)
    assert spool(tmp_path, minimum_age_ms=60_000).list(now) == []
    os.utime(tmp_path / "a.csv", (time.time() - 120, time.time() - 120))
    assert names(spool(tmp_path, minimum_age_ms=60_000).list(now)) == ["a.csv"]


def test_the_pattern_matches_the_whole_name(tmp_path: Path) -> None:
    (tmp_path / "a.csv.bak").write_text("x")
    (tmp_path / "a.csv").write_text("x")
    assert names(spool(tmp_path).list()) == ["a.csv"]


def test_tasks_share_files_by_a_hash_of_their_names(tmp_path: Path) -> None:
    every = [f"{'orders-' * (n % 4)}{n * 7919}.csv" for n in range(30)]
    for name in every:
        (tmp_path / name).write_text("x")
    shares = [set(names(spool(tmp_path, task_index=i, task_count=3).list())) for i in range(3)]
    assert set.union(*shares) == set(every) and sum(len(s) for s in shares) == len(every)
    assert all(shares)  # each task gets some
    # jcustenborder's ByName: abs(adler32(name) as a Java int) % task.count
    assert spool(tmp_path, task_index=1, task_count=3).owns("a.csv")  # adler32 0x052701dc
    long = "x" * 19 + ".csv"  # adler32 0x80040a63: a negative Java int, -0x7ffbf59d
    assert spool(tmp_path, task_index=0, task_count=3).owns(long)


def test_claim_and_release_a_flag(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("x")
    s = spool(tmp_path)
    (file,) = s.list()
    s.claim(file)
    assert (tmp_path / "a.csv.PROCESSING").exists() and s.list() == []
    s.release(file)
    s.release(file)  # twice is fine
    assert names(s.list()) == ["a.csv"]


def test_a_move_keeps_the_relative_path_and_prune_removes_empty_directories(
    tmp_path: Path,
) -> None:
    root, done = tmp_path / "in", tmp_path / "done"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "x.csv").write_text("x")
    (file,) = spool(root, recursive=True).list()
    assert move(file, str(done)) == str(done / "a" / "b" / "x.csv")
    assert (done / "a" / "b" / "x.csv").read_text() == "x"  # not .../x.csv/x.csv
    prune(file, str(root))
    assert root.exists() and not (root / "a").exists()


def test_movebydate_uses_the_files_modification_day(tmp_path: Path) -> None:
    stamp = time.mktime((2024, 2, 29, 12, 0, 0, 0, 0, -1))
    file = InputFile(str(tmp_path / "x.csv"), "x.csv", 1, int(stamp * 1000))
    assert by_date("/done", file) == "/done/2024-02-29"


def test_a_link_to_a_file_outside_the_input_path_is_passed_by(tmp_path: Path) -> None:
    root, outside = tmp_path / "in", tmp_path / "secret.csv"
    root.mkdir()
    outside.write_text("not yours")
    (root / "inside.csv").write_text("x")
    (root / "leak.csv").symlink_to(outside)
    (root / "alias.csv").symlink_to(root / "inside.csv")  # inside: read
    assert names(spool(root).list()) == ["alias.csv", "inside.csv"]
    assert names(spool(root, recursive=True).list()) == ["alias.csv", "inside.csv"]


def test_stale_flags_of_this_tasks_files_are_cleared(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    for name in ("a.csv", "a.csv.PROCESSING", "orphan.csv.PROCESSING", "sub/b.csv"):
        (tmp_path / name).write_text("")
    (tmp_path / "sub" / "b.csv.PROCESSING").write_text("")
    assert spool(tmp_path).clear_stale_flags() == [str(tmp_path / "a.csv")]
    assert not (tmp_path / "a.csv.PROCESSING").exists()
    assert (tmp_path / "orphan.csv.PROCESSING").exists()  # no file beside it: not ours to judge
    assert (tmp_path / "sub" / "b.csv.PROCESSING").exists()  # not below a flat spool
    assert spool(tmp_path, recursive=True).clear_stale_flags() == [str(tmp_path / "sub" / "b.csv")]
    long = "x" * 19 + ".csv"  # task 0 of 3 owns it; task 1 leaves its flag alone
    (tmp_path / long).write_text("")
    (tmp_path / (long + ".PROCESSING")).write_text("")
    assert spool(tmp_path, task_index=1, task_count=3).clear_stale_flags() == []
    assert spool(tmp_path, task_index=0, task_count=3).clear_stale_flags() == [str(tmp_path / long)]
