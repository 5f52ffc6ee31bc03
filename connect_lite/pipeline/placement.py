"""Where a task's last batch ran: its scheduler pool and the executors its Spark jobs used.

Every opening of a job group (one per batch, see SparkEngine.job_group) also adds a job tag
of its own, so the jobs of that batch, and only those, can be found again. The executors are
read from Spark's own status store on the driver (the one its UI and status tracker read):
each task attempt of each Spark stage of those jobs names the executor it ran on (``driver`` in
local mode). The status store is fed by Spark's listener bus, which runs behind the jobs, so
the executors are read when asked (a scrape, a status request), not when the batch ends:
a lone record's batch never waits for the listener. Once every job of the batch is over in
the store, the answer is kept and Spark is not asked again.
"""

from __future__ import annotations

import logging
import threading
import uuid
from dataclasses import dataclass
from typing import Any

from connect_lite.protocol.host import LastBatch

log = logging.getLogger(__name__)

MAX_TASKS = 2**31 - 1
_FINISHED = ("SUCCEEDED", "FAILED")


@dataclass
class _Entry:
    pool: str
    tag: str
    executor_ids: tuple[str, ...] | None = None
    final: bool = False


class BatchTracker:
    """Per job group, the tag of its last finished batch; reads its executors on demand.

    Owns those tags and what was read of them. Lock: ``_lock``, over the entries only (Spark
    is read without it). No thread.
    """

    def __init__(self) -> None:
        self._last: dict[str, _Entry] = {}
        self._lock = threading.Lock()

    @staticmethod
    def new_tag(group_id: str) -> str:
        """A job tag for one batch of ``group_id`` (Spark's tags may not contain commas)."""
        return f"{group_id.replace(',', '_')}:{uuid.uuid4().hex[:12]}"

    def finished(self, group_id: str, pool: str, tag: str) -> None:
        """The batch tagged ``tag`` of ``group_id`` is over: it is now the group's last."""
        with self._lock:
            self._last[group_id] = _Entry(pool, tag)

    def forget(self) -> None:
        """The session is gone (stopped, or its JVM died): its tags mean nothing any more."""
        with self._lock:
            for entry in self._last.values():
                entry.final = True  # keep what is known, never ask the old session again

    def last_batch(self, group_id: str, scala_context: Any | None) -> LastBatch | None:
        """The group's last finished batch; its executors read from ``scala_context`` (the
        JVM's SparkContext, None when there is no session) unless already known."""
        with self._lock:
            entry = self._last.get(group_id)
        if entry is None:
            return None
        if not entry.final and scala_context is not None:
            try:
                ids, final = executors_of_tag(scala_context, entry.tag)
            except Exception as error:  # a JVM that is gone, or an evicted job
                log.debug("Reading the executors of batch %s failed: %s", entry.tag, error)
            else:
                with self._lock:
                    entry.executor_ids, entry.final = ids, final
        return LastBatch(entry.pool, entry.executor_ids)


def executors_of_tag(scala_context: Any, tag: str) -> tuple[tuple[str, ...] | None, bool]:
    """The sorted ids of the executors that ran a task of a job tagged ``tag``, and whether
    every such job is over in the status store (so the answer is final). None when the store
    knows no job of the tag yet."""
    tracker = scala_context.statusTracker()
    store = scala_context.statusStore()
    job_ids = list(tracker.getJobIdsForTag(tag))
    if not job_ids:
        return None, False
    executors: set[str] = set()
    final = True
    for job_id in job_ids:
        info = tracker.getJobInfo(job_id)
        if info.isEmpty():
            final = False
            continue
        job = info.get()
        final = final and str(job.status().toString()) in _FINISHED
        for stage_id in job.stageIds():
            executors.update(_spark_stage_executors(tracker, store, stage_id))
    return tuple(sorted(executors)), final


def _spark_stage_executors(tracker: Any, store: Any, stage_id: int) -> set[str]:
    """The executors of every attempt of every task of a Spark stage (none if it was skipped)."""
    info = tracker.getStageInfo(stage_id)
    if info.isEmpty():
        return set()
    found: set[str] = set()
    for attempt in range(int(info.get().currentAttemptId()) + 1):
        tasks = store.taskList(stage_id, attempt, MAX_TASKS)
        found.update(str(tasks.apply(i).executorId()) for i in range(int(tasks.size())))
    return found
