"""The worker's one SparkSession: created lazily (or in the background), shared, job groups.

Job groups and PySpark 4's pinned thread mode: PySpark (classic, not Spark Connect) runs
with ``PYSPARK_PIN_THREAD=true`` by default, so every Python thread talks to the JVM through
its own connection served by its own JVM thread. ``SparkContext.setJobGroup`` sets local
properties on *that* JVM thread, so jobs started by the calling Python thread (and the
JVM threads it spawns, e.g. ``toArrow``'s serving thread, which inherit local properties)
carry the group, and other Python threads are not affected. Py4J may hand a finished
thread's JVM connection to a new Python thread, so :meth:`SparkEngine.job_group` always
restores the previous properties on exit instead of leaving them set.

Fair sharing: the scheduler runs in FAIR mode by default, and each job group (one per task)
is also the name of the Spark scheduler pool its jobs go to (``spark.scheduler.pool``, a
local property like the group). Pools not named in an allocation file are made on first use
with weight 1, so a busy task's batches take turns with every other task's instead of
queueing them behind its own.

A lost cluster (not local mode): the keeper thread probes the session about once a second
(cluster_watch.py). Once the cluster counts as unreachable, its jobs are cancelled, the session
is stopped, and the keeper starts a new one with backoff until one starts. Meanwhile
:meth:`SparkEngine.session` raises SparkUnavailableError (a RetriableError) at once, so tasks
keep their batch and run it again later, and /health says why.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any

from connect_lite.api.errors import ConnectError, RetriableError
from connect_lite.pipeline.class_archive import archive_options
from connect_lite.pipeline.cluster_watch import Backoff, ClusterWatch
from connect_lite.pipeline.exchange import ChunkExchange
from connect_lite.pipeline.placement import BatchTracker
from connect_lite.pipeline.shipping import (
    ExecutorMismatchError,
    Shipper,
    handshake,
    is_local,
)
from connect_lite.protocol.environment import package_home, python_path
from connect_lite.protocol.host import LastBatch
from connect_lite.protocol.job_spec import JobSpec

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

DEFAULT_CONF: dict[str, str] = {
    "spark.master": "local[*]",
    "spark.app.name": "connect-lite",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.python.worker.reuse": "true",
    "spark.log.level": "WARN",
    # In local mode the driver's JVM runs the tasks too; its default 1 GiB heap is tight for
    # 200k-record batches (each batch is in the heap as task data and as rows at once).
    "spark.driver.memory": "2g",
    # Kafka's transforms format times in UTC; so do their column forms (TimestampRouter).
    "spark.sql.session.timeZone": "UTC",
    # Each task's jobs go to a pool of their own (SparkEngine.job_group); FAIR shares the
    # executors between the pools, so one busy connector cannot starve another's batches.
    "spark.scheduler.mode": "FAIR",
    # A batch's chunks become one partition each (transfer.chunk_frame) only on this path:
    # below the threshold createDataFrame makes a LocalRelation, which Spark splits in
    # defaultParallelism partitions, so a big batch would hold every core until it ends.
    "spark.sql.execution.arrow.localRelationThreshold": "0",
}

JAVA_OPTIONS_KEY = "spark.driver.extraJavaOptions"
UNIX_SOCKETS_KEY = "spark.python.unix.domain.socket.enabled"
SOCKET_DIR_KEY = "spark.python.unix.domain.socket.dir"
DAEMON_MODULE_KEY = "spark.python.daemon.module"
QUIET_DAEMON_MODULE = "connect_lite.pipeline.python_daemon"
MAX_SOCKET_DIR_CHARS = 60
"""Spark names each socket ``.<uuid>.sock`` in its directory; a socket's whole path must fit
in 104 bytes (macOS; 108 on Linux)."""
DRIVER_JAVA_OPTIONS: tuple[str, ...] = (
    # Idle footprint: G1 collects after 5 s without a GC and gives the free heap back to the
    # OS down to 10-30 % free (its defaults keep 40-70 % and wait for a GC that an idle JVM
    # never has). Idle JVM RSS 508 -> 394 MB 10 s after records stopped (bench_latency.py).
    "-XX:G1PeriodicGCInterval=5000",
    "-XX:MinHeapFreeRatio=10",
    "-XX:MaxHeapFreeRatio=30",
    # C1 only, no C2: on 2 cores C2's compiler threads compete with Spark's start (session
    # 2.7 -> 2.0 s with the class archive, first job 2.2 -> 1.8 s) and take memory (idle JVM
    # 392 -> 353 MB); bench_pipeline.py --records 300000 was no slower (source 99 -> 123 k/s,
    # sink 42 -> 47 k/s: noise, mostly).
    "-XX:TieredStopAtLevel=1",
)
"""The driver JVM's options (figures from scripts/bench_latency.py). The user's
``spark.driver.extraJavaOptions`` come after them, and HotSpot takes the last of a repeated
option, so the user's win (driver_java_options)."""

POOL_KEY = "spark.scheduler.pool"
_GROUP_KEYS = (
    "spark.jobGroup.id",
    "spark.job.description",
    "spark.job.interruptOnCancel",
    POOL_KEY,
)

MAX_CAUSE_CHARS = 500
RETRY_AFTER_S = 60.0
"""After a failed start, how long :meth:`SparkEngine.session` answers with that failure at
once (every task thread, /health) before a caller may try to start Spark again."""


PROBE_INTERVAL_S = 1.0
"""How often the keeper probes a session on a cluster (and may start a new one)."""


class SparkStartError(ConnectError):
    """The SparkSession could not be created: tasks fail with it, and /health reports it."""


class SparkUnavailableError(SparkStartError, RetriableError):
    """Spark's cluster is unreachable (lost, or not there at start): the engine is building a
    new session with backoff; a task keeps its batch, stays RUNNING, and runs it again later."""


def effective_conf(conf: dict[str, str]) -> dict[str, str]:
    """The defaults, overridden by the worker's ``spark.*`` keys, plus the Python to run."""
    merged = dict(DEFAULT_CONF)
    merged.update(conf)
    merged[JAVA_OPTIONS_KEY] = driver_java_options(conf.get(JAVA_OPTIONS_KEY))
    merged.setdefault("spark.pyspark.python", os.environ.get("PYSPARK_PYTHON") or sys.executable)
    merged.setdefault("spark.pyspark.driver.python", sys.executable)
    if is_local(merged["spark.master"]):  # a cluster gets connect_lite shipped (shipping.py)
        merged["spark.executorEnv.PYTHONPATH"] = _python_path(
            merged.get("spark.executorEnv.PYTHONPATH")
        )
        # The JVM talks to its Python workers over Unix domain sockets, not TCP on loopback:
        # each Python task's exchanges no longer wait on TCP. A job of ten empty mapInArrow
        # tasks took 381 ms over TCP and 229 ms this way (scripts/bench_spark_tasks.py, 2
        # cores; docs/benchmarks.md has the run). The sockets go in the engine's private
        # directory (SparkEngine._create): over them PySpark asks for no secret.
        merged.setdefault(UNIX_SOCKETS_KEY, "true")
        # PySpark's daemon, but a Python worker that Spark retires (idle for a minute, or at
        # stop) ends quietly instead of printing a BrokenPipeError traceback (python_daemon.py).
        merged.setdefault(DAEMON_MODULE_KEY, QUIET_DAEMON_MODULE)
    return merged


def driver_java_options(user: str | None, extra: Sequence[str] = ()) -> str:
    """DRIVER_JAVA_OPTIONS, then ``extra``, then the user's own options (one string, as
    Spark takes it). The user's come last, so theirs win: ``-XX:MaxHeapFreeRatio=70`` undoes
    ours, ``-XX:G1PeriodicGCInterval=0`` turns the idle collection off."""
    return " ".join(
        [*DRIVER_JAVA_OPTIONS, *extra, *([user.strip()] if user and user.strip() else [])]
    )


def _python_path(given: str | None) -> str:
    """The executors' PYTHONPATH: the directory connect_lite is imported from, then ``given``.

    Spark's Python workers import connect_lite.pipeline (the batch job code) by name; in local
    mode this makes that work whether connect_lite is installed or run from a checkout.
    """
    return python_path(package_home(), given)


def owner_tag(owner: str) -> str:
    """The job tag of a batch job's jobs (Spark's tags may not contain commas)."""
    return "connect-lite-job:" + owner.replace(",", "_")


class JobGroup:
    """A job group opened by :meth:`SparkEngine.job_group`; knows if it was cancelled."""

    def __init__(self, group_id: str, owner: str | None = None) -> None:
        self.group_id = group_id
        self.owner = owner
        self.cancelled = False


class SparkEngine:
    """Owns the worker's SparkSession: lazy, thread-safe creation, job groups, stop."""

    def __init__(
        self,
        conf: dict[str, str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.conf = effective_conf(dict(conf or {}))
        self._given_keys = sorted(conf or {})
        self._user_java_options = (conf or {}).get(JAVA_OPTIONS_KEY)
        self._clock = clock
        self._lock = threading.Lock()
        self._spark: SparkSession | None = None
        self._failure: tuple[str, BaseException, float] | None = None
        """(message, cause, when) of the last failed start, until a start succeeds."""
        self.started_in: float | None = None
        """Seconds the last successful start took (None before one finished)."""
        self._groups: dict[str, list[JobGroup]] = {}
        self._groups_lock = threading.Lock()
        self._starter: threading.Thread | None = None
        self._starter_lock = threading.Lock()
        self._parallelism: int | None = None
        self.local = is_local(self.conf["spark.master"])
        self.exchange = ChunkExchange() if self.local else None
        """On a local master, chunks go to the Python workers through files (exchange.py)."""
        self._shipper = Shipper()
        self._batches = BatchTracker()
        # A cluster's keeper (never in local mode): see the module's docstring.
        self._unavailable: str | None = None
        self._candidate: SparkSession | None = None
        """A session being created (before its handshake), so the keeper can probe it."""
        self._lost_during_start: str | None = None
        self._watch = ClusterWatch(clock=clock)
        self._backoff = Backoff()
        self._next_start = 0.0
        self._keeper: threading.Thread | None = None
        self._restarter: threading.Thread | None = None
        self._closing = threading.Event()

    @property
    def is_started(self) -> bool:
        """True once the session exists (creation finished successfully)."""
        return self._spark is not None

    @property
    def unavailable(self) -> str | None:
        """Why Spark's cluster is unreachable now (None in local mode, and while it is not)."""
        return self._unavailable

    def session(self) -> SparkSession:
        """The shared session, created on first use; blocks while another thread creates it.
        SparkUnavailableError at once while a cluster is unreachable (the keeper restarts it)."""
        spark = self._spark
        if spark is not None:
            return spark
        unavailable = self._unavailable
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
        failure = self._failure
        if failure is not None and self._clock() - failure[2] < RETRY_AFTER_S:
            raise SparkStartError(failure[0]) from failure[1]
        if not self.local:
            self._keep_watch()
        begin = self._clock()
        self._lost_during_start = None
        try:
            spark = self._create()
        except Exception as error:
            message = self._failure_message(error)
            log.error("%s", message, exc_info=error)
            if self.local or self._is_mismatch(error):
                self._failure = (message, error, self._clock())
                raise SparkStartError(message) from error
            self._become_unavailable(self._lost_during_start or message)
            raise SparkUnavailableError(self._unavailable or message) from error
        finally:
            self._candidate = None
        self._failure = None
        self.started_in = self._clock() - begin
        if self._unavailable is not None:
            log.warning("Spark is reachable again: a new session started")
        self._unavailable = None
        self._backoff.reset()
        self._watch.reset()
        log.info("Spark session started in %.1f s", self.started_in)
        return spark

    def _is_mismatch(self, error: BaseException) -> bool:
        """Whether the executors ran the handshake and cannot run connect_lite (a setup error,
        not a passing one); a handshake the keeper cancelled is not."""
        return isinstance(error, ExecutorMismatchError) and self._lost_during_start is None

    def _become_unavailable(self, reason: str) -> None:
        """Tell callers the cluster is unreachable, and when the keeper tries again."""
        if not reason.startswith("Spark is unreachable"):
            reason = f"Spark is unreachable: {reason}"
        delay = self._backoff.next()
        self._next_start = self._clock() + delay
        self._unavailable = reason
        log.error("%s. A new SparkSession is tried in %.0f s", reason, delay)

    def _keep_watch(self) -> None:
        """Start the keeper thread, once (cluster only)."""
        if self._keeper is None:
            self._closing.clear()
            self._keeper = threading.Thread(target=self._keep, name="spark-keeper", daemon=True)
            self._keeper.start()

    def _keep(self) -> None:
        """The keeper: probe the session; once the cluster is unreachable, drop the session
        and start a new one, with backoff between attempts."""
        while not self._closing.wait(PROBE_INTERVAL_S):
            try:
                self._keep_once()
            except Exception:  # the keeper must outlive any one probe
                log.exception("Spark's keeper failed a round")

    def _keep_once(self) -> None:
        spark = self._spark or self._candidate
        if spark is not None:
            reason = self._watch.observe(*_probe(spark), master=self.conf["spark.master"])
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

    def _restart(self) -> None:
        with self._lock, suppress(SparkStartError):
            if self._spark is None and not self._closing.is_set():
                self._spark = self._start_session()

    def _lose(self, spark: SparkSession, reason: str) -> None:
        """Cancel the jobs of a session whose cluster is unreachable, then stop it (a session
        still starting fails its handshake, and its start reports the reason). The reason is
        set first: a job that fails once cancelled finds it (raise_if_unavailable)."""
        if spark is not self._spark:
            self._lost_during_start = f"Spark is unreachable: {reason}"
            with suppress(Exception):
                spark.sparkContext.cancelAllJobs()
            return
        self._become_unavailable(reason)
        with suppress(Exception):
            spark.sparkContext.cancelAllJobs()
        with self._lock:
            if self._spark is spark:
                self._spark = None
                self._parallelism = None
        self._watch.reset()
        _stop_session(spark)

    def raise_if_unavailable(self, error: BaseException) -> None:
        """After a failed job: SparkUnavailableError (from ``error``) if the cluster is
        unreachable now, which is why the job failed."""
        unavailable = self._unavailable
        if unavailable is not None:
            raise SparkUnavailableError(unavailable) from error

    def _failure_message(self, error: BaseException) -> str:
        """One line. A Py4J error's text holds a whole Java stack trace (the log has it): its
        first line and the Java exception's line (": org.apache...") are kept."""
        lines = [line.strip() for line in str(error).splitlines() if line.strip()]
        if len(lines) > 1 and lines[1].startswith(":"):
            lines[0] = f"{lines[0].rstrip('.')}{lines[1]}"
        cause = (lines[0][:MAX_CAUSE_CHARS] if lines else type(error).__name__).rstrip(".")
        keys = ", ".join(self._given_keys) or "none set"
        return (
            f"Spark failed to start: {cause}. Check the worker's spark.* keys ({keys}); "
            "the JVM's own message, if it printed one, is in the worker's output just before."
        )

    def recover(self) -> bool:
        """After a failed job: if Spark's JVM is gone (killed, or out of memory, which ends
        it), forget the dead session so the next use starts a new one. True if it was gone."""
        with self._lock:
            spark = self._spark
            if spark is None or _jvm_alive(spark):
                return False
            log.error("Spark's JVM is gone; a new SparkSession starts with the next batch")
            _forget_dead_session()
            self._spark = None
            self._parallelism = None
            self._batches.forget()
            return True

    def start_in_background(
        self, then: Callable[[SparkEngine], None] | None = None
    ) -> threading.Thread:
        """Begin creating the session on a daemon thread; the caller never waits for it.
        ``then`` runs on that thread once the session exists (e.g. a warm-up job)."""
        with self._starter_lock:  # not self._lock: a creation in progress must not block us
            if self._starter is None:
                self._starter = threading.Thread(
                    target=self._start_quietly,
                    args=(then,),
                    name="spark-session-start",
                    daemon=True,
                )
                self._starter.start()
            return self._starter

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
        failure = self._failure
        return None if failure is None else failure[0]

    def _create(self) -> SparkSession:
        from pyspark.sql import SparkSession

        log.info("Starting Spark session (master %s)", self.conf["spark.master"])
        # PySpark's driver reads the workers' Python from the environment, not the conf.
        os.environ["PYSPARK_PYTHON"] = self.conf["spark.pyspark.python"]
        if self.conf["spark.master"].startswith("local"):
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # loopback only, no warning
        conf = dict(self.conf)
        # The class-data-sharing archive, if there is one (class_archive.py): read at each
        # start, so one built while the worker runs serves its next session.
        sharing = archive_options(conf)
        if sharing:
            conf[JAVA_OPTIONS_KEY] = driver_java_options(self._user_java_options, sharing)
        if self.local and conf.get(UNIX_SOCKETS_KEY) == "true" and SOCKET_DIR_KEY not in conf:
            conf.update(self._socket_dir())
        builder = SparkSession.builder
        for key, value in conf.items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel(self.conf["spark.log.level"])
        _quiet_pool_warnings(spark)
        if not self.local:
            self._candidate = spark
            try:
                handshake(spark.sparkContext, self._shipper.package(spark.sparkContext))
            except BaseException as error:
                _, stopped = _probe(spark)
                self._candidate = None  # stopped by us: the keeper must not take it for lost
                spark.stop()
                if stopped:  # not the executors' fault: the master gave up on the application
                    raise ConnectError(
                        f"the application was stopped: the master at {self.conf['spark.master']} "
                        "is unresponsive"
                    ) from error
                raise
        return spark

    def _socket_dir(self) -> dict[str, str]:
        """Where the Python workers' sockets go: the engine's private directory, so only
        its user reaches them (TCP instead, if its path is too long for a socket's)."""
        try:
            root = self.exchange.root() if self.exchange is not None else None
        except OSError as error:
            log.warning("No private directory for Spark's Python worker sockets: %s", error)
            root = None
        if root is None or len(root) > MAX_SOCKET_DIR_CHARS:
            log.info("Spark's Python workers use TCP on loopback (no short private directory)")
            return {UNIX_SOCKETS_KEY: "false"}
        return {SOCKET_DIR_KEY: root}

    def ship(self, spec: JobSpec) -> JobSpec:
        """``spec`` with its plugin locations shipped to the executors (shipping.py); in local
        mode, or without plugin locations, ``spec`` itself."""
        if self.local or not spec.plugin_locations:
            return spec
        shipped = self._shipper.locations(self.session().sparkContext, spec.plugin_locations)
        return spec if shipped == spec.shipped else dataclasses.replace(spec, shipped=shipped)

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
        ``cancel`` may be limited to."""
        sc = self.session().sparkContext
        saved = {key: sc.getLocalProperty(key) for key in _GROUP_KEYS}
        handle = JobGroup(group_id, owner)
        with self._groups_lock:
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
            with self._groups_lock:
                handles = self._groups.get(group_id, [])
                if handle in handles:
                    handles.remove(handle)
                if not handles:
                    self._groups.pop(group_id, None)
            for each in tags:
                sc.removeJobTag(each)
            for key, value in saved.items():
                sc.setLocalProperty(key, value)  # type: ignore[arg-type]  # None clears it

    def last_batch(self, group_id: str) -> LastBatch | None:
        """The scheduler pool and executors of the last finished batch of ``group_id``;
        None before its first. Never starts Spark."""
        spark = self._spark
        return self._batches.last_batch(group_id, None if spark is None else spark._jsc.sc())

    def cancel(self, group_id: str, owner: str | None = None) -> None:
        """Cancel the running jobs of ``group_id`` and mark its open job groups cancelled;
        with ``owner``, only those opened with it (a batch job stopped late must not cancel the
        jobs of the batch job that replaced it, in the same group)."""
        with self._groups_lock:
            for handle in self._groups.get(group_id, []):
                if owner is None or handle.owner == owner:
                    handle.cancelled = True
        spark = self._spark
        if spark is not None:
            with suppress(Exception):  # a JVM that is gone has nothing left to cancel
                if owner is None:
                    spark.sparkContext.cancelJobGroup(group_id)
                else:
                    spark.sparkContext.cancelJobsWithTag(owner_tag(owner))

    def stop(self) -> None:
        """Stop the session (waiting for a background start and the keeper first)."""
        self._closing.set()
        keeper, self._keeper = self._keeper, None
        if keeper is not None:
            keeper.join()
        candidate = self._candidate
        if candidate is not None:  # a restart waiting in its handshake: end it now
            with suppress(Exception):
                candidate.sparkContext.cancelAllJobs()
        restarter = self._restarter
        if restarter is not None:
            restarter.join()
        with self._starter_lock:
            starter, self._starter = self._starter, None
        if starter is not None:
            starter.join()
        with self._lock:
            if self._spark is not None:
                if _jvm_alive(self._spark):
                    self._spark.stop()
                else:
                    _forget_dead_session()
                self._spark = None
            self._parallelism = None
            self._batches.forget()
        self._shipper.close()
        if self.exchange is not None:
            self.exchange.close()


def _probe(spark: SparkSession) -> tuple[int | None, bool]:
    """(executors registered, or None if unknown; whether the SparkContext was stopped)."""
    try:
        sc = spark.sparkContext._jsc.sc()
        if sc.isStopped():
            return None, True
        return max(0, int(sc.getExecutorMemoryStatus().size()) - 1), False  # minus the driver
    except Exception:  # py4j: the JVM is gone; recover() handles that
        return None, False


def _stop_session(spark: SparkSession) -> None:
    """Stop a session whose cluster is gone (Spark tells the master, if it still answers)."""
    try:
        if _jvm_alive(spark):
            spark.stop()
        else:
            _forget_dead_session()
    except Exception as error:
        log.warning("Stopping the unreachable SparkSession failed: %s", error)


def _quiet_pool_warnings(spark: SparkSession) -> None:
    """Each task's job group is its scheduler pool, made on first use by design (see above);
    Spark's driver warns at each that it "has not been configured". Only that logger is
    raised to ERROR (in the driver's log4j), whatever ``spark.log.level`` says."""
    jvm: Any = spark.sparkContext._jvm
    log4j = jvm.org.apache.logging.log4j
    log4j.core.config.Configurator.setLevel(
        "org.apache.spark.scheduler.FairSchedulableBuilder", log4j.Level.ERROR
    )


def _jvm_alive(spark: SparkSession) -> bool:
    try:
        return not spark.sparkContext._jsc.sc().isStopped()
    except Exception:  # py4j: connection refused or reset
        return False


def _forget_dead_session() -> None:
    """Drop PySpark's references to a JVM that is gone, so that a new one can start."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    gateway = SparkContext._gateway
    if gateway is not None:
        with suppress(Exception):
            gateway.shutdown()
    SparkContext._active_spark_context = None
    SparkContext._gateway = None
    SparkContext._jvm = None
    SparkSession._instantiatedSession = None
    SparkSession._activeSession = None
