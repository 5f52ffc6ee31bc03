"""Spark's Python daemon on a local master (``spark.python.daemon.module``): PySpark's own,
except that a Python worker whose connection the JVM closes while it waits for a task ends
without a word.

Spark retires a Python worker by closing its socket: one idle for a minute, and every idle
one when the session stops. PySpark's worker takes the end of the stream for a failed task,
writes the error to the closed socket, and its daemon prints the ``BrokenPipeError`` as a
traceback (``spark.python.daemon.killWorkerOnFlushFailure``, on by default) on the stderr
that is the worker's log: a traceback after a clean stop. Here a reused worker first waits
for the next task's first byte, without taking it; if the connection ends instead, the
worker process ends quietly, as the JVM meant it to.

Spark starts it as ``python -m connect_lite.pipeline.python_daemon pyspark.worker``, with the
Python workers' environment (their ``PYTHONPATH`` holds connect_lite on a local master; a
cluster's executors keep PySpark's daemon). It forks every worker, so it starts no thread.
"""

from __future__ import annotations

import signal
import socket

from pyspark import daemon

from connect_lite.kafka.executor_clients import close_all

_pyspark_worker = daemon.worker


def worker(sock: socket.socket, authenticated: bool) -> int:
    """PySpark's ``daemon.worker`` for the next task on ``sock``; 1, silently, if the JVM
    closed the connection instead of sending one (the daemon then ends this worker process)."""
    _worker_signals()
    if _closed_before_a_task(sock):
        close_all()  # the worker process retires: its Kafka clients close with it
        return 1
    code = int(_pyspark_worker(sock, authenticated))
    if code:
        close_all()
    return code


def _worker_signals() -> None:
    """The signal handlers PySpark's ``daemon.worker`` sets first, set before the wait: a
    forked worker inherits the daemon's, which ignore SIGHUP, the daemon's word to its
    workers to end when it stops."""
    for number in (signal.SIGHUP, signal.SIGCHLD, signal.SIGTERM):
        signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _closed_before_a_task(sock: socket.socket) -> bool:
    """Wait for the JVM's next byte, leaving it to be read; True if the connection ends, or
    breaks, first."""
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


def main() -> None:
    daemon.worker = worker  # the manager calls the worker by this name, once per task
    daemon.manager()


if __name__ == "__main__":
    main()
