"""Job groups: which task's batch a Spark job belongs to, its scheduler pool, cancelling it.

Job groups and PySpark 4's pinned thread mode: PySpark (classic, not Spark Connect) runs
with ``PYSPARK_PIN_THREAD=true`` by default, so every Python thread talks to the JVM through
its own connection served by its own JVM thread. ``SparkContext.setJobGroup`` sets local
properties on *that* JVM thread, so jobs started by the calling Python thread (and the
JVM threads it spawns, e.g. ``toArrow``'s serving thread, which inherit local properties)
carry the group, and other Python threads are not affected. Py4J may hand a finished
thread's JVM connection to a new Python thread, so :meth:`JobGroups.opened` always
restores the previous properties on exit instead of leaving them set.

Fair sharing: the scheduler runs in FAIR mode by default, and each job group (one per task)
is also the name of the Spark scheduler pool its jobs go to (``spark.scheduler.pool``, a
local property like the group). Pools not named in an allocation file are made on first use
with weight 1, so a busy task's batches take turns with every other task's instead of
queueing them behind its own.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING

from connect_lite.pipeline.placement import BatchTracker

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

POOL_KEY = "spark.scheduler.pool"
_GROUP_KEYS = (
    "spark.jobGroup.id",
    "spark.job.description",
    "spark.job.interruptOnCancel",
    POOL_KEY,
)


def owner_tag(owner: str) -> str:
    """The job tag of a batch job's jobs (Spark's tags may not contain commas)."""
    return "connect-lite-job:" + owner.replace(",", "_")


class JobGroup:
    """A job group opened by :meth:`SparkEngine.job_group`; knows if it was cancelled."""

    def __init__(self, group_id: str, owner: str | None = None) -> None:
        self.group_id = group_id
        self.owner = owner
        self.cancelled = False


class JobGroups:
    """Opens job groups on the calling thread (group, scheduler pool, job tags) and cancels
    them.

    Owns the open JobGroup handles of each group id, so that ``cancel`` marks them; each
    opening's batch tag goes to the BatchTracker it is given (placement.py), which owns those.
    Lock: ``_lock``, over the handles only (no Spark call is made under it). No thread.
    """

    def __init__(self, batches: BatchTracker) -> None:
        self._batches = batches
        self._groups: dict[str, list[JobGroup]] = {}
        self._lock = threading.Lock()

    @contextmanager
    def opened(
        self, sc: SparkContext, group_id: str, description: str, owner: str | None = None
    ) -> Iterator[JobGroup]:
        """Tag the Spark jobs this thread runs on ``sc`` inside the block with ``group_id``,
        which is also the scheduler pool they run in, and with ``owner`` (a batch job's own
        id), which ``cancel`` may be limited to."""
        saved = {key: sc.getLocalProperty(key) for key in _GROUP_KEYS}
        handle = JobGroup(group_id, owner)
        with self._lock:
            self._groups.setdefault(group_id, []).append(handle)
        sc.setJobGroup(group_id, description, interruptOnCancel=True)
        sc.setLocalProperty(POOL_KEY, group_id)  # the task's own scheduler pool
        tag = self._batches.new_tag(group_id)  # finds this batch's jobs again (placement.py)
        tags = [tag] if owner is None else [tag, owner_tag(owner)]
        for each in tags:
            sc.addJobTag(each)
        try:
            yield handle
        finally:
            self._batches.finished(group_id, group_id, tag)
            with self._lock:
                handles = self._groups.get(group_id, [])
                if handle in handles:
                    handles.remove(handle)
                if not handles:
                    self._groups.pop(group_id, None)
            for each in tags:
                sc.removeJobTag(each)
            for key, value in saved.items():
                sc.setLocalProperty(key, value)  # type: ignore[arg-type]  # None clears it

    def cancel(self, spark: SparkSession | None, group_id: str, owner: str | None = None) -> None:
        """Cancel the running jobs of ``group_id`` on ``spark`` (if there is a session) and
        mark its open job groups cancelled; with ``owner``, only those opened with it."""
        with self._lock:
            for handle in self._groups.get(group_id, []):
                if owner is None or handle.owner == owner:
                    handle.cancelled = True
        if spark is not None:
            with suppress(Exception):  # a JVM that is gone has nothing left to cancel
                if owner is None:
                    spark.sparkContext.cancelJobGroup(group_id)
                else:
                    spark.sparkContext.cancelJobsWithTag(owner_tag(owner))
