"""The file operations the sink needs beyond Spark's writers, on two kinds of store.

:class:`LocalStore` serves ``file://`` URLs with plain ``os`` calls, fsync and ``os.replace``.
:class:`HadoopStore` serves any other scheme through the Hadoop FileSystem of the JVM that
Spark runs in, reached through the DataFrame's session (PySpark's private ``_jvm`` and
``_jsc``: the only way in without importing pyspark, so it stays in this one class).

Paths are relative to the store's root URL and use ``/``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import urllib.parse
from abc import ABC, abstractmethod
from typing import Any


class Store(ABC):
    """A directory tree under one root URL."""

    def __init__(self, root_url: str) -> None:
        self.root_url = root_url.rstrip("/")

    def url(self, path: str) -> str:
        """The URL Spark reads and writes ``path`` at."""
        return f"{self.root_url}/{path}" if path else self.root_url

    @abstractmethod
    def exists(self, path: str) -> bool: ...

    @abstractmethod
    def list_dir(self, path: str) -> list[tuple[str, bool]]:
        """(name, is_directory) of each entry of a directory; [] if it does not exist."""

    @abstractmethod
    def list_files(self, path: str) -> list[str]:
        """Paths of every file under a directory, recursively, without hidden names
        (``.`` prefixes); [] if it does not exist."""

    @abstractmethod
    def rename(self, source: str, target: str) -> bool:
        """Move a file, creating the target's directories; False if ``source`` is gone.
        The target must not exist."""

    @abstractmethod
    def delete(self, path: str) -> None:
        """Delete a file or a directory tree; nothing if it does not exist."""

    @abstractmethod
    def write_atomically(self, path: str, data: bytes) -> None:
        """Create a file that appears whole or not at all, durably."""

    @abstractmethod
    def read(self, path: str) -> bytes: ...

    def for_session(self, session: Any) -> Store:
        """The store for batches of another Spark session (the same one if it needs none)."""
        return self

    def sync_files(self, paths: list[str]) -> None:  # noqa: B027  # optional for a store
        """Make files written by Spark durable (where closing them does not)."""

    def sync_dirs(self, paths: list[str]) -> None:  # noqa: B027  # optional for a store
        """Make renames into these directories durable (where a rename does not)."""


class LocalStore(Store):
    """A ``file://`` store: ``os`` calls, fsync of files and directories, ``os.replace``."""

    def __init__(self, root_url: str) -> None:
        super().__init__(root_url)
        self.root = urllib.parse.urlsplit(self.root_url).path
        """The directory, as Hadoop's Path reads the URL: ``%`` is a character, too."""

    def local(self, path: str) -> str:
        return os.path.join(self.root, *path.split("/")) if path else self.root

    def exists(self, path: str) -> bool:
        return os.path.lexists(self.local(path))

    def list_dir(self, path: str) -> list[tuple[str, bool]]:
        try:
            with os.scandir(self.local(path)) as entries:
                return sorted((e.name, e.is_dir(follow_symlinks=False)) for e in entries)
        except (FileNotFoundError, NotADirectoryError):
            return []

    def list_files(self, path: str) -> list[str]:
        base = self.local(path)
        found: list[str] = []
        for parent, dirs, files in os.walk(base):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            rel = os.path.relpath(parent, base)
            prefix = path if rel == "." else f"{path}/{rel.replace(os.sep, '/')}"
            found += [f"{prefix}/{f}" for f in files if not f.startswith(".")]
        return sorted(found)

    def rename(self, source: str, target: str) -> bool:
        dest = self.local(target)
        _makedirs_durably(os.path.dirname(dest))
        try:
            os.rename(self.local(source), dest)
        except FileNotFoundError:
            return False
        return True

    def delete(self, path: str) -> None:
        local = self.local(path)
        if os.path.isdir(local) and not os.path.islink(local):
            for parent, dirs, files in os.walk(local, topdown=False):
                for name in files:
                    _unlink(os.path.join(parent, name))
                for name in dirs:
                    _rmdir(os.path.join(parent, name))
            _rmdir(local)
        else:
            _unlink(local)

    def write_atomically(self, path: str, data: bytes) -> None:
        final = self.local(path)
        _makedirs_durably(os.path.dirname(final))
        temp = final + ".tmp"
        with open(temp, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp, final)
        _fsync_dir(os.path.dirname(final))

    def read(self, path: str) -> bytes:
        with open(self.local(path), "rb") as file:
            return file.read()

    def sync_files(self, paths: list[str]) -> None:
        for path in paths:
            fd = os.open(self.local(path), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def sync_dirs(self, paths: list[str]) -> None:
        for path in dict.fromkeys(paths):
            _fsync_dir(self.local(path))


def _makedirs_durably(directory: str) -> None:
    """Create a directory and its missing parents, each made durable in its parent."""
    missing: list[str] = []
    while directory and not os.path.isdir(directory):
        missing.append(directory)
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    for path in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(path)
        _fsync_dir(os.path.dirname(path))


def _fsync_dir(directory: str) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _unlink(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _rmdir(path: str) -> None:
    try:
        os.rmdir(path)
    except FileNotFoundError:
        pass
    except OSError as exc:  # a concurrent writer added a file: leave it for a later sweep
        if exc.errno != errno.ENOTEMPTY:
            raise


class HadoopStore(Store):
    """A store behind a Hadoop FileSystem (``s3a://``, ``hdfs://``, ``abfs://``, also
    ``file://``), reached through Py4J in Spark's JVM.

    ``session`` is the DataFrame's ``sparkSession``; its Hadoop configuration (the
    ``spark.hadoop.*`` settings) configures the FileSystem."""

    def __init__(self, root_url: str, session: Any) -> None:
        super().__init__(root_url)
        self.session = session
        context = session.sparkContext
        self._jvm = context._jvm  # private PySpark API: the one door to the JVM without pyspark
        conf = context._jsc.hadoopConfiguration()
        self._path_class = self._jvm.org.apache.hadoop.fs.Path
        root = self._path_class(self.root_url)
        self._fs = root.getFileSystem(conf)
        self._root = self._fs.makeQualified(root)
        self._root_text = self._root.toString().rstrip("/")

    def for_session(self, session: Any) -> Store:
        """This store in the JVM of another session: a new session may run in a new JVM
        (the old one died), where this store's FileSystem handle is gone."""
        return self if session is self.session else HadoopStore(self.root_url, session)

    def _path(self, path: str) -> Any:
        return self._path_class(self._root, path) if path else self._root

    def _relative(self, qualified: Any) -> str:
        text = qualified.toString()
        return text[len(self._root_text) :].lstrip("/")

    def exists(self, path: str) -> bool:
        return bool(self._fs.exists(self._path(path)))

    def list_dir(self, path: str) -> list[tuple[str, bool]]:
        target = self._path(path)
        if not self._fs.exists(target):
            return []
        entries = [
            (s.getPath().getName(), bool(s.isDirectory())) for s in self._fs.listStatus(target)
        ]
        return sorted(entries)

    def list_files(self, path: str) -> list[str]:
        target = self._path(path)
        if not self._fs.exists(target):
            return []
        found: list[str] = []
        iterator = self._fs.listFiles(target, True)
        while iterator.hasNext():
            relative = self._relative(iterator.next().getPath())
            if not any(part.startswith(".") for part in relative.split("/")):
                found.append(relative)
        return sorted(found)

    def rename(self, source: str, target: str) -> bool:
        src, dst = self._path(source), self._path(target)
        if not self._fs.exists(src):
            return False
        self._fs.mkdirs(dst.getParent())
        if self._fs.rename(src, dst):
            return True
        if self._fs.exists(src):
            raise OSError(errno.EIO, f"Could not rename {self.url(source)} to {self.url(target)}")
        return False

    def delete(self, path: str) -> None:
        self._fs.delete(self._path(path), True)

    def write_atomically(self, path: str, data: bytes) -> None:
        final, temp = self._path(path), self._path(path + ".tmp")
        out = self._fs.create(temp, True)
        try:
            out.write(bytearray(data))
            out.hsync()
        finally:
            out.close()
        self._fs.delete(final, False)
        if not self._fs.rename(temp, final):
            raise OSError(errno.EIO, f"Could not rename {self.url(path)}.tmp to {self.url(path)}")

    def read(self, path: str) -> bytes:
        target = self._path(path)
        if not self._fs.exists(target):
            raise FileNotFoundError(self.url(path))
        stream = self._fs.open(target)
        try:
            return bytes(self._jvm.org.apache.hadoop.io.IOUtils.readFullyToByteArray(stream))
        finally:
            stream.close()


def open_store(root_url: str, session: Any | None) -> Store | None:
    """The store for a root URL: local for ``file://``; for other schemes a Hadoop store,
    which needs a Spark session (None until one is known)."""
    if urllib.parse.urlsplit(root_url).scheme == "file":
        return LocalStore(root_url)
    return None if session is None else HadoopStore(root_url, session)
