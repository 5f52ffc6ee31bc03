"""The spool directory: which files a task reads and in what order, the flag file that marks a
file being read, and what happens to a file once it is done (``cleanup.policy``) or bad.

Discovery follows jcustenborder's ``InputFileDequeue``: the files of ``input.path`` (or of its
tree, ``input.path.walk.recursively``) whose whole name matches ``input.file.pattern``, that
this task owns (``abs(adler32(name)) % task.count == task.index``), that have no flag file
``<name><processing.file.extension>`` beside them and are at least ``file.minimum.age.ms``
old, sorted by ``files.sort.attributes``. A link to a file outside ``input.path`` is passed
by. A move keeps the file's path relative to ``input.path`` (``finished.path/a/b/x.csv``);
jcustenborder's 2.0 nests it one level deeper (``finished.path/a/b/x.csv/x.csv``, its issue
211), which connect-lite does not copy.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import logging
import os
import re
import shutil
import time
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class InputFile:
    """A file found in the spool, with what was known of it when it was listed."""

    path: str
    relative: str
    """Its path relative to input.path, including its name (the file.relative.path header)."""
    length: int
    modified_ms: int

    @property
    def name(self) -> str:
        return os.path.basename(self.path)


@dataclass(frozen=True)
class Spool:
    """The directories and rules of one task's spool."""

    input_path: str
    pattern: str
    flag_extension: str
    minimum_age_ms: int
    sort_attributes: tuple[str, ...]
    recursive: bool
    task_index: int
    task_count: int

    def list(self, now_ms: int | None = None) -> list[InputFile]:
        """The files ready to read, in reading order."""
        now_ms = int(time.time() * 1000) if now_ms is None else now_ms
        matcher = re.compile(self.pattern)
        found = []
        for path in self._candidates():
            name = os.path.basename(path)
            if not matcher.fullmatch(name) or not self.owns(name):
                continue
            if os.path.exists(path + self.flag_extension):
                continue
            try:
                stat = os.stat(path)
            except FileNotFoundError:
                continue  # gone meanwhile
            if now_ms - int(stat.st_mtime * 1000) < self.minimum_age_ms:
                continue
            relative = os.path.relpath(path, self.input_path)
            found.append(InputFile(path, relative, stat.st_size, int(stat.st_mtime * 1000)))
        return sorted(found, key=functools.cmp_to_key(self._compare))

    def _candidates(self) -> Iterable[str]:
        """The regular files below input.path; a link is followed only if its target lies
        inside input.path too (input.path is what connector.allowed.paths vouched for)."""
        if not self.recursive:
            with os.scandir(self.input_path) as entries:
                paths = [e.path for e in entries if e.is_file()]
        else:
            paths = []
            for root, _dirs, names in os.walk(self.input_path):
                paths.extend(os.path.join(root, n) for n in names)
        root = os.path.realpath(self.input_path) + os.sep
        return [p for p in paths if os.path.realpath(p).startswith(root) and os.path.isfile(p)]

    def owns(self, name: str) -> bool:
        """Whether the file of that name is this task's (jcustenborder's ByName partitioner)."""
        if self.task_count <= 1:
            return True
        checksum = zlib.adler32(name.encode("utf-8"))
        signed = checksum - (1 << 32) if checksum >= 1 << 31 else checksum
        return abs(signed) % self.task_count == self.task_index

    def _compare(self, a: InputFile, b: InputFile) -> int:
        for attribute in self.sort_attributes:
            field, ascending = _SORTS[attribute]
            x, y = field(a), field(b)
            if x != y:
                return (-1 if x < y else 1) * (1 if ascending else -1)
        return 0

    def flag(self, file: InputFile) -> str:
        return file.path + self.flag_extension

    def claim(self, file: InputFile) -> None:
        """Create the file's flag file: other tasks (and a later listing) pass it by."""
        with open(self.flag(file), "a"):
            pass

    def clear_stale_flags(self) -> Sequence[str]:
        """Remove the flag files that stand beside files of this task's, left by a task that
        died (nothing reads them now: a task clears them as it starts); the files."""
        walk = (
            os.walk(self.input_path)
            if self.recursive
            else [(self.input_path, [], os.listdir(self.input_path))]
        )
        cleared: list[str] = []
        for directory, _dirs, names in walk:
            present = set(names)
            for name in names:
                base = name[: -len(self.flag_extension)]
                if name.endswith(self.flag_extension) and base in present and self.owns(base):
                    os.remove(os.path.join(directory, name))
                    cleared.append(os.path.join(directory, base))
        return cleared

    def release(self, file: InputFile) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.remove(self.flag(file))


_SORTS = {
    "NameAsc": (lambda f: f.name, True),
    "NameDesc": (lambda f: f.name, False),
    "LengthAsc": (lambda f: f.length, True),
    "LengthDesc": (lambda f: f.length, False),
    "LastModifiedAsc": (lambda f: f.modified_ms, True),
    "LastModifiedDesc": (lambda f: f.modified_ms, False),
}


def move(file: InputFile, directory: str) -> str:
    """Move the file to ``directory``, under its path relative to input.path; the new path."""
    target = os.path.join(directory, file.relative)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    shutil.move(file.path, target)
    return target


def by_date(directory: str, file: InputFile) -> str:
    """MOVEBYDATE's directory: ``<directory>/<yyyy-MM-dd of the file's mtime, local time>``."""
    day = dt.datetime.fromtimestamp(file.modified_ms / 1000).strftime("%Y-%m-%d")
    return os.path.join(directory, day)


def prune(file: InputFile, input_path: str) -> None:
    """Remove the file's parent directories inside input.path that are now empty."""
    parent = os.path.dirname(file.path)
    root = os.path.abspath(input_path)
    while os.path.abspath(parent) != root and os.path.abspath(parent).startswith(root + os.sep):
        try:
            os.rmdir(parent)
        except OSError:
            return  # not empty
        parent = os.path.dirname(parent)
