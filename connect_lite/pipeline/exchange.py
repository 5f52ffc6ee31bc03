"""Chunk payloads through files when Spark's executors run on the driver's machine.

On a local master the driver and Spark's Python workers share a file system, so a job's
pickled chunks need not travel through the JVM: the driver writes each chunk to a file in
a private directory and the job's row carries only a reference to it; the Python worker
reads that file, runs the chunk, and writes its result beside it for the driver to read
and remove (with the chunk, once the job is over). The job itself is unchanged: one
Spark task per chunk, run by Spark's Python workers. Through the JVM, the payloads are
written to a file for ``createDataFrame``, copied into Spark's tasks and rows, and copied
back by ``toArrow``: ten chunks of 2.5 MB took 496 ms in and out that way, and 214 ms through files
(scripts/bench_spark_tasks.py, with Unix domain sockets to the Python workers).

A reference is ``REF_PREFIX`` then the file's path; a pickle never starts with a zero byte,
so a payload is either one or the other. When a file cannot be written (a full disk), the
payload travels inline as it does on a cluster.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
import threading
from pathlib import Path

log = logging.getLogger(__name__)

REF_PREFIX = b"\x00connect-lite-chunk:"
_DIR_PREFIX = "connect-lite-chunks-"
_RESULT_SUFFIX = ".out"


def referenced(blob: bytes | memoryview) -> str | None:
    """The path ``blob`` refers to, or None when it is an inline payload."""
    head = bytes(blob[: len(REF_PREFIX)])
    return bytes(blob[len(REF_PREFIX) :]).decode() if head == REF_PREFIX else None


def read(path: str) -> bytes:
    """In a Python worker: a referenced chunk. It stays until the driver's ``discard``, so a
    task that Spark runs again (``local[N,F]``) finds it too."""
    with open(path, "rb") as f:
        return f.read()


def take(path: str) -> bytes:
    """On the driver: read a referenced result and remove it."""
    data = read(path)
    os.unlink(path)
    return data


def _write(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


def put_result(input_path: str, result: bytes) -> bytes:
    """In a Python worker: the result of the chunk read from ``input_path``, as a reference
    to a file beside it (or inline, if that cannot be written)."""
    path = input_path + _RESULT_SUFFIX
    try:
        _write(path, result)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(path)
        return result
    return REF_PREFIX + path.encode()


def resolve(blob: bytes | memoryview) -> bytes | memoryview:
    """On the driver: a result's payload, read (and removed) from its file if it is one."""
    path = referenced(blob)
    return blob if path is None else take(path)


class ChunkExchange:
    """The driver's side: a private directory (mode 0700, created on first use, removed by
    ``close``) for one SparkRuntime's chunk files. Directories left by a process that is
    gone (killed in the middle of a job) are removed when a new one is made."""

    def __init__(self, parent: str | None = None) -> None:
        self._parent = parent
        self._dir: str | None = None
        self._lock = threading.Lock()
        self.sent = 0
        """Chunks written so far."""

    def _directory(self) -> str:
        with self._lock:
            if self._dir is None:
                parent = self._parent or tempfile.gettempdir()
                _remove_orphans(Path(parent))
                self._dir = tempfile.mkdtemp(prefix=f"{_DIR_PREFIX}{os.getpid()}-", dir=parent)
            self.sent += 1
            return os.path.join(self._dir, str(self.sent))

    def put(self, payloads: list[bytes]) -> list[bytes]:
        """References to files holding ``payloads`` (a payload that cannot be written
        stays inline)."""
        out = []
        for payload in payloads:
            try:
                path = self._directory()
                _write(path, payload)
            except OSError as error:
                log.debug("Chunk sent inline: %s", error)
                out.append(payload)
                continue
            out.append(REF_PREFIX + path.encode())
        return out

    @staticmethod
    def discard(refs: list[bytes]) -> None:
        """Remove what is left of a job's files (its inputs and results): after a failed or
        cancelled job, and after the results were read."""
        for ref in refs:
            path = referenced(ref)
            if path is None:
                continue
            for leftover in (path, path + _RESULT_SUFFIX):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(leftover)

    @property
    def directory(self) -> str | None:
        """The directory, once the first chunk was written (until ``close``)."""
        return self._dir

    def close(self) -> None:
        with self._lock:
            directory, self._dir = self._dir, None
        if directory is not None:
            shutil.rmtree(directory, ignore_errors=True)


def _remove_orphans(parent: Path) -> None:
    """Remove chunk directories whose process is gone."""
    for entry in parent.glob(f"{_DIR_PREFIX}*"):
        pid = entry.name[len(_DIR_PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(entry, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True
