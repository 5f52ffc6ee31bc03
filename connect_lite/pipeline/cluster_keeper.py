"""The keeper of a session on a Spark cluster (never in local mode): probe, drop, restart.

A lost cluster: the keeper thread probes the session about once a second (cluster_watch.py
says why Spark's own client is not enough). Once the cluster counts as unreachable, its jobs
are cancelled, the session is stopped, and the keeper starts a new one with backoff until one
starts. Meanwhile :meth:`SparkEngine.session` raises SparkUnavailableError (a RetriableError)
at once, so tasks keep their batch and run it again later, and /health says why.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING

from connect_lite.api.errors import ConnectError
from connect_lite.pipeline.cluster_watch import Backoff, ClusterWatch
from connect_lite.pipeline.session_start import stop_session
from connect_lite.pipeline.shipping import ExecutorMismatchError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

PROBE_INTERVAL_S = 1.0
"""How often the keeper probes a session on a cluster (and may start a new one)."""


class ClusterKeeper:
    """Keeps the worker's session on a Spark cluster: probes it, drops it once the cluster is
    unreachable, and has a new one started, with backoff between attempts.

    Owns why Spark is unreachable now (``unavailable``); the session being started, probed
    during its handshake (the candidate), and the reason it was lost if it was; the
    ClusterWatch that judges the probes; the Backoff and when the next start may be tried.
    It does not hold the session: SparkEngine does, and gives the keeper ``current`` to read
    it, ``drop`` to forget a lost one and ``restart`` to start a new one (both under the
    engine's lock).

    Threads: ``spark-keeper``, the probe loop (``watch`` starts it, once; ``stop`` ends it),
    and ``spark-restart``, one restart at a time, on a thread of its own because a new
    session's handshake waits for ever if no executor comes. Lock: none of its own; the
    ``_closing`` event ends the loop and keeps a restart from starting during ``stop``.
    """

    def __init__(
        self,
        master: str,
        current: Callable[[], SparkSession | None],
        drop: Callable[[SparkSession], None],
        restart: Callable[[], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.master = master
        self._current = current
        self._drop = drop
        self._restart = restart
        self._clock = clock
        self._unavailable: str | None = None
        self._candidate: SparkSession | None = None
        """A session being created (before its handshake), so the keeper can probe it."""
        self._lost_during_start: str | None = None
        self._watch = ClusterWatch(clock=clock)
        self._backoff = Backoff()
        self._next_start = 0.0
        self._thread: threading.Thread | None = None
        self._restarter: threading.Thread | None = None
        self._closing = threading.Event()

    @property
    def unavailable(self) -> str | None:
        """Why Spark's cluster is unreachable now (None in local mode, and while it is not)."""
        return self._unavailable

    @property
    def closing(self) -> bool:
        """True once ``stop`` began (until ``watch`` starts the keeper again)."""
        return self._closing.is_set()

    def watch(self) -> None:
        """Start the keeper thread, once (cluster only)."""
        if self._thread is None:
            self._closing.clear()
            self._thread = threading.Thread(target=self._keep, name="spark-keeper", daemon=True)
            self._thread.start()

    @contextmanager
    def starting(self) -> Iterator[None]:
        """Around a session's start: a loss the keeper finds during it becomes the start's
        reason (``failed_start``), and the candidate is let go at the end."""
        self._lost_during_start = None
        try:
            yield
        finally:
            self._candidate = None

    def admit(self, spark: SparkSession, handshake: Callable[[], None]) -> None:
        """Run a new session's ``handshake`` while the keeper probes the session (on a lost
        cluster it cancels the handshake's job). If the handshake fails, the session is
        stopped, and ConnectError says so if the master had stopped the application."""
        self._candidate = spark
        try:
            handshake()
        except BaseException as error:
            _, stopped = _probe(spark)
            self._candidate = None  # stopped by us: the keeper must not take it for lost
            spark.stop()
            if stopped:  # not the executors' fault: the master gave up on the application
                raise ConnectError(
                    f"the application was stopped: the master at {self.master} is unresponsive"
                ) from error
            raise

    def is_mismatch(self, error: BaseException) -> bool:
        """Whether the executors ran the handshake and cannot run connect_lite (a setup error,
        not a passing one); a handshake the keeper cancelled is not."""
        return isinstance(error, ExecutorMismatchError) and self._lost_during_start is None

    def failed_start(self, message: str) -> str:
        """A start on the cluster failed with ``message``: Spark is unreachable, for the reason
        the keeper found during the start if it found one. That reason, as ``unavailable``."""
        return self._become_unavailable(self._lost_during_start or message)

    def started(self) -> None:
        """A session started: Spark is reachable (again); backoff and watch begin anew."""
        if self._unavailable is not None:
            log.warning("Spark is reachable again: a new session started")
        self._unavailable = None
        self._backoff.reset()
        self._watch.reset()

    def _become_unavailable(self, reason: str) -> str:
        """Tell callers the cluster is unreachable, and when the keeper tries again."""
        if not reason.startswith("Spark is unreachable"):
            reason = f"Spark is unreachable: {reason}"
        delay = self._backoff.next()
        self._next_start = self._clock() + delay
        self._unavailable = reason
        log.error("%s. A new SparkSession is tried in %.0f s", reason, delay)
        return reason

    def _keep(self) -> None:
        """The keeper: probe the session; once the cluster is unreachable, drop the session
        and start a new one, with backoff between attempts."""
        while not self._closing.wait(PROBE_INTERVAL_S):
            try:
                self.keep_once()
            except Exception:  # the keeper must outlive any one probe
                log.exception("Spark's keeper failed a round")

    def keep_once(self) -> None:
        """One round of the keeper (its thread runs one a PROBE_INTERVAL_S)."""
        spark = self._current() or self._candidate
        if spark is not None:
            reason = self._watch.observe(*_probe(spark), master=self.master)
            if reason is not None:
                self._lose(spark, reason)
        elif self._unavailable is not None and self._clock() >= self._next_start:
            restarter = self._restarter
            if restarter is None or not restarter.is_alive():
                # On a thread of its own: the keeper goes on probing the new session, whose
                # handshake job waits for ever if no executor comes.
                self._restarter = threading.Thread(
                    target=self._restart, name="spark-restart", daemon=True
                )
                self._restarter.start()

    def _lose(self, spark: SparkSession, reason: str) -> None:
        """Cancel the jobs of a session whose cluster is unreachable, then stop it (a session
        still starting fails its handshake, and its start reports the reason). The reason is
        set first: a job that fails once cancelled finds it (raise_if_unavailable)."""
        if spark is not self._current():
            self._lost_during_start = f"Spark is unreachable: {reason}"
            with suppress(Exception):
                spark.sparkContext.cancelAllJobs()
            return
        self._become_unavailable(reason)
        with suppress(Exception):
            spark.sparkContext.cancelAllJobs()
        self._drop(spark)
        self._watch.reset()
        _stop_session(spark)

    def stop(self) -> None:
        """End the keeper (waiting for its threads); a restart waiting in its handshake has
        the handshake's job cancelled, so that it ends now."""
        self._closing.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join()
        candidate = self._candidate
        if candidate is not None:
            with suppress(Exception):
                candidate.sparkContext.cancelAllJobs()
        restarter = self._restarter
        if restarter is not None:
            restarter.join()


def _probe(spark: SparkSession) -> tuple[int | None, bool]:
    """(executors registered, or None if unknown; whether the SparkContext was stopped)."""
    try:
        sc = spark.sparkContext._jsc.sc()
        if sc.isStopped():
            return None, True
        return max(0, int(sc.getExecutorMemoryStatus().size()) - 1), False  # minus the driver
    except Exception:  # py4j: the JVM is gone; SparkEngine.recover handles that
        return None, False


def _stop_session(spark: SparkSession) -> None:
    """Stop a session whose cluster is gone (Spark tells the master, if it still answers)."""
    try:
        stop_session(spark)
    except Exception as error:
        log.warning("Stopping the unreachable SparkSession failed: %s", error)
