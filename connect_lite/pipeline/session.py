"""The worker's Spark: SparkEngine, the one object batch jobs, tasks and /health use.

SparkEngine holds the worker's one SparkSession, created lazily (or in the background) and
shared, and decides when a new one starts; the rest is its collaborators':

- session_start.py: the conf and the builder, the last failed start, the background start;
- cluster_keeper.py: on a cluster, the keeper, which drops a session whose cluster is
  unreachable and starts a new one with backoff; meanwhile :meth:`SparkEngine.session`
  raises SparkUnavailableError (a RetriableError) at once, so tasks keep their batch and
  run it again later;
- job_groups.py: a task's job group, scheduler pool and job tags, and cancelling its jobs;
- shipping.py: connect_lite and plugin locations, shipped to a cluster's executors;
- placement.py: where each task's last batch ran.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING

from connect_lite.api.errors import ConnectError, RetriableError
from connect_lite.pipeline.cluster_keeper import ClusterKeeper
from connect_lite.pipeline.exchange import ChunkExchange
from connect_lite.pipeline.job_groups import JobGroup, JobGroups
from connect_lite.pipeline.placement import BatchTracker
from connect_lite.pipeline.session_start import (
    SessionStarter,
    forget_dead_session,
    jvm_alive,
    stop_session,
)
from connect_lite.pipeline.shipping import Shipper, handshake
from connect_lite.protocol.host import LastBatch
from connect_lite.protocol.job_spec import JobSpec

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)


class SparkStartError(ConnectError):
    """The SparkSession could not be created: tasks fail with it, and /health reports it."""


class SparkUnavailableError(SparkStartError, RetriableError):
    """Spark's cluster is unreachable (lost, or not there at start): the engine is building a
    new session with backoff; a task keeps its batch, stays RUNNING, and runs it again later."""


class SparkEngine:
    """The worker's Spark behind one facade: the session, job groups, shipping, placement.

    Owns the session itself, the partitions a batch is split into, and the chunk exchange
    (local mode); decides when a session starts, what a failed start is (SparkStartError,
    or SparkUnavailableError on a cluster) and when a session is dropped (``recover``,
    ``stop``, and ``_drop`` for the keeper). The rest is delegated (module docstring).

    Lock: ``_lock``, held while a session is created, dropped or stopped, so there is one at
    a time and callers of ``session`` wait for a creation in progress. No thread of its own:
    the background start's is the SessionStarter's, the probe loop's and the restarts' are
    the ClusterKeeper's.
    """

    def __init__(
        self,
        conf: dict[str, str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._starter = SessionStarter(conf or {}, clock)
        self.conf = self._starter.conf
        self.local = self._starter.local
        self._clock = clock
        self._lock = threading.Lock()
        self._spark: SparkSession | None = None
        self._sessions = 0
        """The number of the current session (``current_session``): it counts the sessions
        started and those forgotten because their JVM was gone."""
        self._parallelism: int | None = None
        self.exchange = ChunkExchange() if self.local else None
        """On a local master, chunks go to the Python workers through files (exchange.py)."""
        self._shipper = Shipper()
        self._batches = BatchTracker()
        self._groups = JobGroups(self._batches)
        self._keeper = ClusterKeeper(  # its thread runs on a cluster only (_start_session)
            self.conf["spark.master"],
            current=lambda: self._spark,
            drop=self._drop,
            restart=self._restart,
            clock=clock,
        )

    @property
    def is_started(self) -> bool:
        """True once the session exists (creation finished successfully)."""
        return self._spark is not None

    @property
    def unavailable(self) -> str | None:
        """Why Spark's cluster is unreachable now (None in local mode, and while it is not)."""
        return self._keeper.unavailable

    def session(self) -> SparkSession:
        """The shared session, created on first use; blocks while another thread creates it.
        SparkUnavailableError at once while a cluster is unreachable (the keeper restarts it)."""
        spark = self._spark
        if spark is not None:
            return spark
        unavailable = self._keeper.unavailable
        if unavailable is not None:
            raise SparkUnavailableError(unavailable)
        with self._lock:
            if self._spark is None:
                self._spark = self._start_session()
            return self._spark

    def _start_session(self) -> SparkSession:
        """Create the session (under ``_lock``); SparkStartError if it fails, or failed less
        than RETRY_AFTER_S ago: a failed start is not retried by every caller in turn. On a
        cluster, SparkUnavailableError unless the executors cannot run connect_lite."""
        recent = self._starter.recent_failure()
        if recent is not None:
            raise SparkStartError(recent[0]) from recent[1]
        if not self.local:
            self._keeper.watch()
        begin = self._clock()
        with self._keeper.starting():
            try:
                spark = self._create()
            except Exception as error:
                message = self._starter.failure_message(error)
                log.error("%s", message, exc_info=error)
                if self.local or self._keeper.is_mismatch(error):
                    self._starter.failed(message, error)
                    raise SparkStartError(message) from error
                raise SparkUnavailableError(self._keeper.failed_start(message)) from error
        self._starter.succeeded(self._clock() - begin)
        self._sessions += 1
        self._keeper.started()
        log.info("Spark session started in %.1f s", self.started_in)
        return spark

    def _restart(self) -> None:
        """The keeper's restart (on its ``spark-restart`` thread): a new session, if none."""
        with self._lock, suppress(SparkStartError):
            if self._spark is None and not self._keeper.closing:
                self._spark = self._start_session()

    def _drop(self, spark: SparkSession) -> None:
        """The keeper's: forget ``spark``, whose cluster is unreachable, if it is the session."""
        with self._lock:
            if self._spark is spark:
                self._spark = None
                self._parallelism = None

    def raise_if_unavailable(self, error: BaseException) -> None:
        """After a failed job: SparkUnavailableError (from ``error``) if the cluster is
        unreachable now, which is why the job failed."""
        unavailable = self._keeper.unavailable
        if unavailable is not None:
            raise SparkUnavailableError(unavailable) from error

    def current_session(self) -> int:
        """The number of the session a job about to run uses (started now if there is none),
        for ``recover``. SparkUnavailableError and SparkStartError as ``session``."""
        self.session()
        return self._sessions

    def recover(self, session: int | None = None) -> bool:
        """After a failed job: if Spark's JVM is gone (killed, or out of memory, which ends
        it), forget the dead session so the next use starts a new one. True if it was gone.

        ``session`` is the job's ``current_session()``: if another task's job already found
        that session dead and a newer one started meanwhile, the job runs again on the newer
        one (True), whose liveness says nothing of the job's failure."""
        with self._lock:
            if session is not None and session != self._sessions:
                return True
            spark = self._spark
            if spark is None or jvm_alive(spark):
                return False
            log.error("Spark's JVM is gone; a new SparkSession starts with the next batch")
            forget_dead_session()
            self._sessions += 1  # the jobs that ran on it run again, even before the next
            self._spark = None
            self._parallelism = None
            self._batches.forget()
            return True

    def start_in_background(
        self, then: Callable[[SparkEngine], None] | None = None
    ) -> threading.Thread:
        """Begin creating the session on a daemon thread; the caller never waits for it.
        ``then`` runs on that thread once the session exists (e.g. a warm-up job)."""
        return self._starter.in_background(functools.partial(self._start_quietly, then))

    def _start_quietly(self, then: Callable[[SparkEngine], None] | None) -> None:
        """Start the session, then run ``then``; failures are logged (a failed start is also
        kept as start_error and raised to tasks)."""
        with suppress(SparkStartError):
            self.session()
            if then is None:
                return
            try:
                then(self)
            except Exception as error:  # e.g. the warm-up: the first batch pays instead
                log.warning("Spark's first job after its start failed: %s", error)

    @property
    def start_error(self) -> str | None:
        """Why the last start failed (it is logged at ERROR); None once a start succeeded."""
        return self._starter.start_error

    @property
    def started_in(self) -> float | None:
        """Seconds the last successful start took (None before one finished)."""
        return self._starter.started_in

    def _create(self) -> SparkSession:
        """A new session (SessionStarter.create); on a cluster, once its handshake passed."""
        spark = self._starter.create(self.exchange)
        if not self.local:
            self._keeper.admit(
                spark,
                lambda: handshake(spark.sparkContext, self._shipper.package(spark.sparkContext)),
            )
        return spark

    def ship(self, spec: JobSpec) -> JobSpec:
        """``spec`` with its plugin locations shipped to the executors (shipping.py); in local
        mode, or without plugin locations, ``spec`` itself."""
        if self.local or not spec.plugin_locations:
            return spec
        return self._shipper.ship(self.session().sparkContext, spec)

    @property
    def default_parallelism(self) -> int:
        """How many partitions a batch is split into."""
        if self._parallelism is None:
            self._parallelism = max(1, int(self.session().sparkContext.defaultParallelism))
        return self._parallelism

    @contextmanager
    def job_group(
        self, group_id: str, description: str, owner: str | None = None
    ) -> Iterator[JobGroup]:
        """Tag the Spark jobs this thread runs inside the block with ``group_id``, which is
        also the scheduler pool they run in, and with ``owner`` (a batch job's own id), which
        ``cancel`` may be limited to (job_groups.py)."""
        sc = self.session().sparkContext
        with self._groups.opened(sc, group_id, description, owner) as handle:
            yield handle

    def last_batch(self, group_id: str) -> LastBatch | None:
        """The scheduler pool and executors of the last finished batch of ``group_id``;
        None before its first. Never starts Spark."""
        spark = self._spark
        return self._batches.last_batch(group_id, None if spark is None else spark._jsc.sc())

    def cancel(self, group_id: str, owner: str | None = None) -> None:
        """Cancel the running jobs of ``group_id`` and mark its open job groups cancelled;
        with ``owner``, only those opened with it (a batch job stopped late must not cancel the
        jobs of the batch job that replaced it, in the same group)."""
        self._groups.cancel(self._spark, group_id, owner)

    def stop(self) -> None:
        """Stop the session (waiting for a background start and the keeper first)."""
        self._keeper.stop()
        self._starter.join_background()
        with self._lock:
            if self._spark is not None:
                stop_session(self._spark)
                self._spark = None
            self._parallelism = None
            self._batches.forget()
        self._shipper.close()
        if self.exchange is not None:
            self.exchange.close()
