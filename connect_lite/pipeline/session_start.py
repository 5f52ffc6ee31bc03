"""Starting and stopping the worker's SparkSession: its conf, the builder, a failed start.

The conf is Spark's defaults for connect-lite (DEFAULT_CONF), overridden by the worker's
``spark.*`` keys, plus the driver JVM's options and the Python to run (effective_conf).
:class:`SessionStarter` builds a session from it; SparkEngine (session.py) holds the session,
decides when one is started, and stops it with :func:`stop_session`.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from connect_lite.pipeline.class_archive import archive_options
from connect_lite.pipeline.exchange import ChunkExchange
from connect_lite.pipeline.shipping import is_local
from connect_lite.protocol.environment import package_home, python_path

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

MAX_CAUSE_CHARS = 500
RETRY_AFTER_S = 60.0
"""After a failed start, how long :meth:`SparkEngine.session` answers with that failure at
once (every task thread, /health) before a caller may try to start Spark again."""


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
        # directory (SessionStarter.create): over them PySpark asks for no secret.
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


class SessionStarter:
    """Builds the worker's SparkSession, and remembers how the last start went.

    Owns the effective conf (``conf``) and the builder (``create``); the last failed start,
    answered at once for RETRY_AFTER_S (``recent_failure``), and how long the last good one
    took (``started_in``); and the background start. It does not hold the session, and
    decides nothing about when one starts: SparkEngine does both.

    Lock: ``_starter_lock``, over the background start's thread handle only (never held while
    a session is created). Thread: ``spark-session-start`` (``in_background``), once.
    """

    def __init__(self, conf: dict[str, str], clock: Callable[[], float] = time.monotonic) -> None:
        self.conf = effective_conf(dict(conf))
        self._given_keys = sorted(conf)
        self._user_java_options = conf.get(JAVA_OPTIONS_KEY)
        self.local = is_local(self.conf["spark.master"])
        self._clock = clock
        self._failure: tuple[str, BaseException, float] | None = None
        """(message, cause, when) of the last failed start, until a start succeeds."""
        self.started_in: float | None = None
        """Seconds the last successful start took (None before one finished)."""
        self._starter: threading.Thread | None = None
        self._starter_lock = threading.Lock()

    def recent_failure(self) -> tuple[str, BaseException] | None:
        """(message, cause) of the last failed start if it was less than RETRY_AFTER_S ago: a
        failed start is not retried by every caller in turn."""
        failure = self._failure
        if failure is not None and self._clock() - failure[2] < RETRY_AFTER_S:
            return failure[0], failure[1]
        return None

    def failed(self, message: str, error: BaseException) -> None:
        """A start failed with ``error`` (``message`` says why, from failure_message)."""
        self._failure = (message, error, self._clock())

    def succeeded(self, seconds: float) -> None:
        """A start succeeded in ``seconds``: an earlier failure is forgotten."""
        self._failure = None
        self.started_in = seconds

    @property
    def start_error(self) -> str | None:
        """Why the last start failed; None once a start succeeded."""
        failure = self._failure
        return None if failure is None else failure[0]

    def failure_message(self, error: BaseException) -> str:
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

    def in_background(self, start: Callable[[], None]) -> threading.Thread:
        """Run ``start`` on a daemon thread, once; the caller never waits for it."""
        with self._starter_lock:  # not the engine's lock: a creation must not block us
            if self._starter is None:
                self._starter = threading.Thread(
                    target=start, name="spark-session-start", daemon=True
                )
                self._starter.start()
            return self._starter

    def join_background(self) -> None:
        """Wait for the background start, if there was one; a later call may start another."""
        with self._starter_lock:
            starter, self._starter = self._starter, None
        if starter is not None:
            starter.join()

    def create(self, exchange: ChunkExchange | None) -> SparkSession:
        """A new session from the conf; its Python workers' sockets go in the private
        directory of ``exchange`` (local mode only)."""
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
            conf.update(_socket_dir(exchange))
        builder = SparkSession.builder
        for key, value in conf.items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel(self.conf["spark.log.level"])
        _quiet_pool_warnings(spark)
        return spark


def _socket_dir(exchange: ChunkExchange | None) -> dict[str, str]:
    """Where the Python workers' sockets go: the engine's private directory, so only
    its user reaches them (TCP instead, if its path is too long for a socket's)."""
    try:
        root = exchange.root() if exchange is not None else None
    except OSError as error:
        log.warning("No private directory for Spark's Python worker sockets: %s", error)
        root = None
    if root is None or len(root) > MAX_SOCKET_DIR_CHARS:
        log.info("Spark's Python workers use TCP on loopback (no short private directory)")
        return {UNIX_SOCKETS_KEY: "false"}
    return {SOCKET_DIR_KEY: root}


def _quiet_pool_warnings(spark: SparkSession) -> None:
    """Each task's job group is its scheduler pool, made on first use by design (job_groups.py);
    Spark's driver warns at each that it "has not been configured". And a range batch's stage
    is freed by design once handed over (range_job.py); Spark warns at each that it "cannot be
    recomputed after unpersisting". Only those loggers are raised to ERROR (in the driver's
    log4j), whatever ``spark.log.level`` says."""
    jvm: Any = spark.sparkContext._jvm
    log4j = jvm.org.apache.logging.log4j
    for name in (
        "org.apache.spark.scheduler.FairSchedulableBuilder",
        "org.apache.spark.rdd.MapPartitionsRDD",
    ):
        log4j.core.config.Configurator.setLevel(name, log4j.Level.ERROR)


def stop_session(spark: SparkSession) -> None:
    """Stop ``spark``; if its JVM is gone, forget it instead (forget_dead_session)."""
    if jvm_alive(spark):
        spark.stop()
    else:
        forget_dead_session()


def jvm_alive(spark: SparkSession) -> bool:
    try:
        return not spark.sparkContext._jsc.sc().isStopped()
    except Exception:  # py4j: connection refused or reset
        return False


def forget_dead_session() -> None:
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
