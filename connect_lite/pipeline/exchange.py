"""Chunk payloads through files when Spark's executors run on the driver's machine.

On a local master the driver and Spark's Python workers share a file system, so a job's
pickled chunks need not travel through the JVM: the driver writes each chunk to a file in
a private directory and the job's row carries only a reference to it; the Python worker
reads that file, runs the chunk, and writes its result beside it for the driver to read.
The job's files go when it ends (done, failed or cancelled). The job itself is unchanged:
one Spark task per chunk, run by Spark's Python workers. Through the JVM, the payloads are
written to a file for ``createDataFrame``, copied into Spark's tasks and rows, and copied
back by ``toArrow``: ten chunks of 2.5 MB took 553 ms in and out that way, and 267 ms
through files (scripts/bench_spark_tasks.py, with Unix domain sockets to the Python workers;
docs/benchmarks.md has the run).

A reference is ``REF_PREFIX`` then the file's path; a pickle never starts with a zero byte,
so a payload is either one or the other. A chunk or result that cannot be written (a full
disk) travels inline, as it does on a cluster.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shutil
import stat
import tempfile
import threading
from dataclasses import dataclass

log = logging.getLogger(__name__)

REF_PREFIX = b"\x00connect-lite-chunk:"
DIR_PREFIX = "connect-lite-chunks-"
_LOCK_FILE = ".lock"
_RESULT_SUFFIX = ".out"


def referenced(blob: bytes | memoryview) -> str | None:
    """The path ``blob`` refers to, or None when it is an inline payload."""
    if bytes(blob[: len(REF_PREFIX)]) != REF_PREFIX:
        return None
    return os.fsdecode(bytes(blob[len(REF_PREFIX) :]))


def read(path: str) -> bytes:
    """In a Python worker: a referenced chunk. It stays until its job ends, so a task that
    Spark runs again (``local[N,F]``) finds it too."""
    with open(path, "rb") as f:
        return f.read()


def _write(path: str, data: bytes) -> bool:
    """Write ``data`` to a new file; False (and no file) if it cannot be written."""
    try:
        with open(path, "xb") as f:
            f.write(data)
    except OSError as error:
        log.debug("Chunk file %s not written: %s", path, error)
        with contextlib.suppress(OSError):
            os.unlink(path)
        return False
    return True


def put_result(input_path: str, result: bytes) -> bytes:
    """In a Python worker: the result of the chunk read from ``input_path``, as a reference
    to a file beside it, or inline if that cannot be written (its job has ended)."""
    path = input_path + _RESULT_SUFFIX
    if os.path.exists(path):  # an earlier attempt of the task wrote it
        os.unlink(path)
    return REF_PREFIX + os.fsencode(path) if _write(path, result) else result


@dataclass
class JobFiles:
    """One job's rows (references, or payloads that travel inline) and its directory."""

    rows: list[bytes]
    directory: str | None

    def discard(self) -> None:
        """Remove the job's files: its chunks, and results not read (a failed or cancelled
        job's tasks may still write theirs; they find no directory and send them inline)."""
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)


class ChunkExchange:
    """The driver's side: a private directory (mode 0700, made on first use, removed by
    ``close``) for one SparkEngine, with a directory per job. It holds a lock on a file in
    it for as long as it lives, so directories left by a process that is gone (killed in
    the middle of a job) are known, and removed when a new one is made."""

    def __init__(self, parent: str | None = None) -> None:
        self._parent = parent
        self._root: str | None = None
        self._lock_fd: int | None = None
        self._lock = threading.Lock()
        self.sent = 0
        """Chunks written so far."""

    @property
    def directory(self) -> str | None:
        """The private directory, once made (until ``close``)."""
        return self._root

    def root(self) -> str:
        """The private directory, made if need be (or made again, if something removed it)."""
        with self._lock:
            if self._root is not None and not os.path.isdir(self._root):
                log.warning("The chunk directory %s is gone: making a new one", self._root)
                self._forget()
            if self._root is None:
                parent = self._parent or tempfile.gettempdir()
                remove_orphans(parent)
                root = os.path.realpath(tempfile.mkdtemp(prefix=DIR_PREFIX, dir=parent))
                fd = os.open(os.path.join(root, _LOCK_FILE), os.O_CREAT | os.O_RDWR, 0o600)
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self._root, self._lock_fd = root, fd
            return self._root

    def put(self, payloads: list[bytes]) -> JobFiles:
        """A new job's files: each payload written to one, or kept inline if it cannot be."""
        try:
            directory = tempfile.mkdtemp(prefix="job-", dir=self.root())
        except OSError as error:
            log.debug("Chunks sent inline: %s", error)
            return JobFiles(list(payloads), None)
        rows = []
        for i, payload in enumerate(payloads):
            path = os.path.join(directory, str(i))
            if _write(path, payload):
                rows.append(REF_PREFIX + os.fsencode(path))
            else:
                rows.append(payload)
        with self._lock:
            self.sent += sum(1 for row in rows if row.startswith(REF_PREFIX))
        return JobFiles(rows, directory)

    def resolve(self, blob: bytes | memoryview) -> bytes | memoryview:
        """A result's payload: read (and removed) from its file when it refers to one of
        this exchange's files, else the blob itself."""
        path = referenced(blob)
        if path is None:
            return blob
        root = self._root
        if root is None or os.path.commonpath([root, os.path.realpath(path)]) != root:
            raise ValueError(f"A chunk result refers to {path}, outside {root}")
        data = read(path)
        os.unlink(path)
        return data

    def close(self) -> None:
        with self._lock:
            self._forget()

    def _forget(self) -> None:
        root, self._root = self._root, None
        fd, self._lock_fd = self._lock_fd, None
        if root is not None:
            shutil.rmtree(root, ignore_errors=True)
        if fd is not None:
            os.close(fd)


def remove_orphans(parent: str) -> None:
    """Remove this user's chunk directories in ``parent`` that no living exchange holds.
    Nothing here stops a job: an entry that cannot be judged is left."""
    try:
        entries = [e for e in os.scandir(parent) if e.name.startswith(DIR_PREFIX)]
    except OSError:
        return
    for entry in entries:
        try:
            info = entry.stat(follow_symlinks=False)
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
                continue
            fd = os.open(os.path.join(entry.path, _LOCK_FILE), os.O_RDWR | os.O_NOFOLLOW)
        except OSError:
            continue  # gone, not ours, or not yet locked by its maker
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # its exchange lives
        finally:
            os.close(fd)
        shutil.rmtree(entry.path, ignore_errors=True)
