"""WorkerSinkTask with its records read by the executors: ranges planned, frames handed over,
offsets that never pass a record not handed over. Over fakes (the Spark job is not the subject)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

from connect_lite.api import SinkTask, TopicPartition
from connect_lite.config.batching import Batching
from connect_lite.config.connector_config import SinkSubscription
from connect_lite.dataplane.sink_task import WorkerSinkTask
from connect_lite.pipeline.range_job import OffsetRange, RangeBatch, merged
from connect_lite.protocol.states import TargetState
from tests.unit.dataplane.sink_loop import Status, until

TP = TopicPartition("t", 0)


class FakeClient:
    """The group consumer: one partition whose watermark the test sets."""

    def __init__(self) -> None:
        self.config = {"auto.offset.reset": "earliest", "bootstrap.servers": "x"}
        self.pause_assigned = False
        self.high = 0
        self.commits: list[dict[TopicPartition, int]] = []

    def subscribe(self, topics: Any, pattern: Any, on_assign: Any, on_revoke: Any) -> None:
        on_assign([TP])

    def committed(self, tps: Any) -> dict[TopicPartition, int]:
        return {}

    def watermarks(self, tp: TopicPartition) -> tuple[int, int]:
        return 0, self.high

    def poll_batch(self, most: int, timeout: float) -> list[Any]:
        time.sleep(min(timeout, 0.005))
        return []

    def commit(self, offsets: dict[TopicPartition, int]) -> None:
        self.commits.append(dict(offsets))

    def close(self) -> None:
        pass


class FakeFrame:
    def __init__(self, start: int, end: int) -> None:
        self.limits = {TP: end}
        self.count = end - start
        self.offsets = (start, end)

    def frame(self) -> tuple[int, int]:
        return self.offsets


class FakeEngine:
    unavailable = None

    def __init__(self) -> None:
        self.lost = False

    @contextlib.contextmanager
    def job_group(self, *args: Any) -> Iterator[None]:
        yield

    def current_session(self) -> int:
        return 1

    def recover(self, session: int | None = None) -> bool:
        return self.lost


class FakeJob:
    """Reads each range up to ``readable`` (what the executors would find)."""

    job_group = "group"

    def __init__(self, client: FakeClient) -> None:
        self.client = client  # its watermark is where the records end here
        self.engine = FakeEngine()
        self.spec = type("Spec", (), {"job_id": "c-0"})()
        self.readable = 10**9
        self.planned: list[OffsetRange] = []
        self.batches: list[int] = []  # offsets per batch

    def run_ranges(self, ranges: list[OffsetRange], config: Any, ordered: bool) -> RangeBatch:
        self.planned.extend(ranges)
        self.batches.append(sum(r.end - r.offset for r in ranges))
        (r,) = merged(ranges)
        end = min(r.end, max(min(self.readable, self.client.high), r.offset))
        batch = RangeBatch([r], read=end - r.offset)
        batch.next_offsets[TP] = end
        if r.open:
            batch.opened[TP] = end > r.offset
        elif end < r.end:
            batch.short[TP] = end
        if end > r.offset:
            batch.frames = [FakeFrame(r.offset, end)]  # type: ignore[list-item]
        return batch

    def cancel(self) -> None:
        pass


class FrameSink(SinkTask):
    def __init__(self) -> None:
        self.puts: list[tuple[int, int]] = []
        self.fail: Exception | None = None

    def start(self, config: dict[str, str]) -> None:
        pass

    def put_dataframe(self, df: Any) -> None:
        if self.fail is not None:
            error, self.fail = self.fail, None
            raise error
        self.puts.append(df)

    def stop(self) -> None:
        pass


def task_over(client: FakeClient, job: FakeJob, plugin: FrameSink) -> WorkerSinkTask:
    task = WorkerSinkTask(
        plugin=plugin,
        task_config={"topics": "t"},
        subscription=SinkSubscription.of_task({"topics": "t"}),
        job=job,  # type: ignore[arg-type]
        consumer_factory=lambda: client,
        flush_interval_ms=60_000,
        batching=Batching(max_records=100, max_wait_ms=20),
        reads_in_executors=True,
        connector="c",
        task=0,
        status=Status(),  # type: ignore[arg-type]
        target=TargetState.RUNNING,
    )
    task.initialize()
    return task


def handed(plugin: FrameSink) -> list[int]:
    return [o for start, end in plugin.puts for o in range(start, end)]


def test_ranges_are_handed_over_as_frames_and_offsets_follow() -> None:
    client, plugin = FakeClient(), FrameSink()
    job = FakeJob(client)
    task = task_over(client, job, plugin)
    assert client.pause_assigned
    client.high = 250
    until(task, lambda: task.offsets.current.get(TP) == 250)
    assert handed(plugin) == list(range(250))  # each offset once, in order
    assert max(job.batches) <= 100  # a batch holds at most max.records offsets
    task.commit_offsets()
    assert client.commits[-1] == {TP: 250}
    task.close()


def test_a_short_read_is_read_again_from_where_it_stopped() -> None:
    client, plugin = FakeClient(), FrameSink()
    job = FakeJob(client)
    task = task_over(client, job, plugin)
    job.readable = 30  # the executors find records up to 30 only, for now
    client.high = 100
    until(task, lambda: task.offsets.current.get(TP) == 30 and len(job.planned) >= 3)
    job.readable = 10**9
    until(task, lambda: task.offsets.current.get(TP) == 100)
    assert handed(plugin) == list(range(100))  # no gap after the short read, no repeat
    task.close()


def test_a_batch_lost_with_spark_is_read_again_and_no_offset_passes_it() -> None:
    client, plugin = FakeClient(), FrameSink()
    job = FakeJob(client)
    task = task_over(client, job, plugin)
    plugin.fail, job.engine.lost = RuntimeError("the JVM died"), True
    client.high = 40
    until(task, lambda: task.offsets.current.get(TP) == 40)
    assert handed(plugin) == list(range(40))  # the lost batch came again, whole
    assert [r.offset for r in job.planned].count(0) == 2
    task.close()
