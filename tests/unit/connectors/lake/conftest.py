"""A stand-in for the sink's Spark work, so the commit protocol is tested without Spark.

A "batch" is a list of :class:`Row`. Buffering writes each partition's rows as JSON where
Spark would write Parquet; a commit round reads those pieces back, keeps the rows inside
the segments' bounds and writes one file per (partition, segment, directory) holding the
offsets, under the directory names Spark would use. So a visible file's content is the
list of the offsets it holds.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pytest

from connect_lite.api import SinkTaskContext, TopicPartition
from connect_lite.connectors.lake import spark_io
from connect_lite.connectors.lake.partitioning import FILE_COLUMN, BatchPlan
from connect_lite.connectors.lake.spark_io import PartitionRows


@dataclass(frozen=True)
class Row:
    topic: str
    partition: int
    offset: int
    time: int | None = None
    dir: str = "partition=0"
    null: bool = False


def plan(type_key: str = "struct-a") -> BatchPlan:
    return BatchPlan("`value`", True, type_key, "t", "d")


def rows(topic: str, partition: int, offsets: range | list[int], **kw: Any) -> list[Row]:
    return [Row(topic, partition, o, dir=kw.get("dir", f"partition={partition}")) for o in offsets]


_SKIP = re.compile(r"NOT \(topic = '([^']*)' AND partition = (\d+) AND offset < (\d+)\)")


def _path(url: str) -> Path:
    assert url.startswith("file://")
    return Path(urllib.parse.unquote(url[len("file://") :]))


class FakeSpark:
    """collect_rows, buffer_batch and write_files of spark_io, on the local file system."""

    def __init__(self) -> None:
        self.jobs: list[str] = []

    def collect_rows(self, df: list[Row], plan: BatchPlan) -> dict[TopicPartition, PartitionRows]:
        self.jobs.append("collect")
        found: dict[TopicPartition, PartitionRows] = {}
        for row in df:
            part = found.setdefault(TopicPartition(row.topic, row.partition), PartitionRows())
            part.offsets.append(row.offset)
            part.times.append(row.time)
            part.dirs.append(row.dir)
            part.nulls.append(row.null)
        return found

    def buffer_batch(self, df: list[Row], plan: BatchPlan, url: str, condition: str | None) -> None:
        self.jobs.append("buffer")
        skip = {(t, int(p)): int(o) for t, p, o in _SKIP.findall(condition or "")}
        kept = [
            r
            for r in df
            if r.offset >= skip.get((r.topic, r.partition), -1)
            and not (r.null and "value IS NOT NULL" in (condition or ""))
        ]
        root = _path(url)
        if root.exists():
            raise OSError(f"{url} exists")
        for row in kept:
            piece = root / f"_tp={row.topic}+{row.partition}"
            piece.mkdir(parents=True, exist_ok=True)
            with (piece / "part-0.json").open("a") as file:
                file.write(json.dumps(asdict(row)) + "\n")
        (root / "_SUCCESS").parent.mkdir(parents=True, exist_ok=True)
        (root / "_SUCCESS").write_text("")

    def write_files(
        self,
        session: Any,
        fmt: Any,
        piece_urls: list[str],
        bounds: list[tuple[str, int, int, int]],
        url: str,
        value_is_struct: bool,
    ) -> None:
        self.jobs.append("write")
        buffered = [
            Row(**json.loads(line))
            for piece in piece_urls
            for line in (_path(piece) / "part-0.json").read_text().splitlines()
        ]
        files: dict[str, list[int]] = {}
        for topic, partition, first, last in bounds:
            for row in buffered:
                if (row.topic, row.partition) == (topic, partition) and first <= row.offset <= last:
                    key = f"{topic}+{partition}+{first}/{row.dir}"
                    files.setdefault(key, []).append(row.offset)
        for key, offsets in files.items():
            escaped = urllib.parse.quote(key, safe="+")
            target = _path(url) / f"{FILE_COLUMN}={escaped}" / "part-00000.json"
            target.parent.mkdir(parents=True)
            target.write_text(json.dumps(sorted(offsets)))
        (_path(url) / "_SUCCESS").write_text("")


@pytest.fixture
def fake_spark(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeSpark]:
    fake = FakeSpark()
    monkeypatch.setattr(spark_io, "collect_rows", fake.collect_rows)
    monkeypatch.setattr(spark_io, "buffer_batch", fake.buffer_batch)
    monkeypatch.setattr(spark_io, "write_files", fake.write_files)
    yield fake


def visible_offsets(root: Path, topics_dir: str = "topics") -> dict[str, list[int]]:
    """Visible file path (under the topics dir) -> the offsets it holds."""
    base = root / topics_dir
    return {
        str(p.relative_to(base)): json.loads(p.read_text())
        for p in sorted(base.rglob("*"))
        if p.is_file() and not p.name.startswith(".")
    }


class FakeContext(SinkTaskContext):
    """Records what a sink task asks of the worker. ``assigned``: the assignment, if the
    context tells it (else the task goes by the partitions it opened)."""

    def __init__(self, assigned: set[TopicPartition] | None = None) -> None:
        self.assigned = assigned
        self.offsets: dict[TopicPartition, int] = {}
        self.timeouts: list[int] = []
        self.commit_requests = 0

    def offset(self, tp_or_offsets: Any, offset: int | None = None) -> None:
        if isinstance(tp_or_offsets, TopicPartition):
            assert offset is not None
            self.offsets[tp_or_offsets] = offset
        else:
            self.offsets.update(tp_or_offsets)

    def timeout(self, timeout_ms: int) -> None:
        self.timeouts.append(timeout_ms)

    def request_commit(self) -> None:
        self.commit_requests += 1

    def assignment(self) -> set[TopicPartition]:
        if self.assigned is None:
            raise NotImplementedError
        return set(self.assigned)


class _Conf:
    def get(self, key: str) -> str:
        assert key == "spark.sql.session.timeZone"
        return "UTC"


class UtcSession:
    """A batch's sparkSession as the lake sink reads it: only its time zone, UTC."""

    conf = _Conf()


class _Schema:
    def __init__(self, value_type: Any) -> None:
        self.value_type = value_type

    def jsonValue(self) -> dict[str, Any]:  # PySpark's name
        fields = [("topic", "string"), ("partition", "integer"), ("offset", "long")]
        fields += [("timestamp", "timestamp"), ("value", self.value_type)]
        return {
            "type": "struct",
            "fields": [{"name": n, "type": t, "nullable": True, "metadata": {}} for n, t in fields],
        }


class FakeFrame(list[Row]):
    """A batch as the task sees it: rows, a session and a schema."""

    def __init__(self, batch: list[Row], value_type: Any = "string") -> None:
        super().__init__(batch)
        self.sparkSession = UtcSession()
        self.schema = _Schema(value_type)
