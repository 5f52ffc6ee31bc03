"""Where things live in the store: visible file names and the connector's hidden directories.

Every path here is relative to ``store.url`` and uses ``/``.
"""

from __future__ import annotations

import hashlib
import re
import urllib.parse
from dataclasses import dataclass

from .config import HIDDEN_DIR

_FILE_NAME = re.compile(
    r"^(?P<topic>[A-Za-z0-9_-][A-Za-z0-9._-]*)\+(?P<partition>\d+)\+(?P<first>\d+)\+(?P<last>\d+)"
    r"\.(?P<ext>[A-Za-z0-9]+(?:\.[A-Za-z0-9]+)*)$"
)
_SAFE = re.compile(r"[^A-Za-z0-9._-]")


@dataclass(frozen=True)
class FileName:
    """A visible file's name: ``<topic>+<partition>+<first>+<last>.<ext>``."""

    topic: str
    partition: int
    first_offset: int
    last_offset: int
    extension: str

    def render(self, width: int) -> str:
        first = f"{self.first_offset:0{width}d}" if width else str(self.first_offset)
        last = f"{self.last_offset:0{width}d}" if width else str(self.last_offset)
        return f"{self.topic}+{self.partition}+{first}+{last}.{self.extension}"

    @staticmethod
    def parse(name: str) -> FileName | None:
        """The parts of a visible file name, or None for any other name."""
        m = _FILE_NAME.match(name)
        if m is None:
            return None
        return FileName(m["topic"], int(m["partition"]), int(m["first"]), int(m["last"]), m["ext"])


def unescape_partition_value(text: str) -> str:
    """A value of a directory Spark's ``partitionBy`` wrote (``key=<escaped value>``): Spark
    escapes some ASCII characters as ``%XX``, and only those."""
    return urllib.parse.unquote(text)


def connector_dir_name(name: str) -> str:
    """A directory name for a connector: its name if that is safe in a path (letters,
    digits, ``.``, ``_``, ``-``), else a safe spelling plus a short hash of the name, so
    two names never share a directory."""
    if name and not _SAFE.search(name) and name not in (".", ".."):
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:12]
    return f"{_SAFE.sub('_', name)[:80]}-{digest}"


@dataclass(frozen=True)
class Layout:
    """The paths of one task of one connector."""

    topics_dir: str
    connector: str  # the connector's directory name (connector_dir_name)
    task_id: int

    @property
    def connector_root(self) -> str:
        return f"{HIDDEN_DIR}/{self.connector}"

    @property
    def task_root(self) -> str:
        return f"{self.connector_root}/task-{self.task_id}"

    @property
    def buffer_root(self) -> str:
        """The task's buffer area: one directory per put, holding its buffered pieces. On
        disk it is named ``staging``: part of the store's layout, which tasks of earlier
        versions wrote too."""
        return f"{self.task_root}/staging"

    @property
    def temp_root(self) -> str:
        return f"{self.task_root}/tmp"

    def journal(self, round_id: str) -> str:
        return f"{self.task_root}/journal-{round_id}.json"

    def topic_dir(self, topic: str) -> str:
        return f"{self.topics_dir}/{topic}"

    def visible_file(self, topic: str, directory: str, name: str) -> str:
        return f"{self.topics_dir}/{topic}/{directory}/{name}"
