"""FileStreamSinkConnector and its task: each record's value as one line of a file (or stdout)."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from typing import Any, BinaryIO

from connect_lite.api import (
    ConfigDef,
    Importance,
    LocalPath,
    SinkConnector,
    SinkRecord,
    SinkTask,
    Struct,
    TopicPartition,
    Type,
)

from .version import VERSION

log = logging.getLogger(__name__)

FILE_CONFIG = "file"
_COPIED_TO_TASKS = (FILE_CONFIG, "topics", "topics.regex")
WRITE_BUFFER_BYTES = 1 << 20

CONFIG_DEF = ConfigDef().define(
    FILE_CONFIG,
    Type.STRING,
    None,
    importance=Importance.HIGH,
    doc="Destination filename. If not specified, the standard output will be used. It must be "
    "inside the worker's connector.allowed.paths.",
    local_path=LocalPath.PATH,
)


class FileStreamSinkConnector(SinkConnector):
    """Very simple sink connector that writes record values to a file or the console."""

    __connect_class_name__ = "org.apache.kafka.connect.file.FileStreamSinkConnector"

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def start(self, config: dict[str, str]) -> None:
        CONFIG_DEF.parse(config)
        self._props = dict(config)

    def task_class(self) -> type[FileStreamSinkTask]:
        return FileStreamSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """One config per task: ``file``, and the topic subscription Kafka's worker adds."""
        config = {k: self._props[k] for k in _COPIED_TO_TASKS if self._props.get(k) is not None}
        return [dict(config) for _ in range(max_tasks)]

    def stop(self) -> None:
        """Nothing to do: the connector does no background monitoring."""

    def alter_offsets(
        self, connector_config: dict[str, str], offsets: dict[TopicPartition, int | None]
    ) -> bool:
        """Any offsets are fine: this connector keeps no offsets of its own."""
        return True


class FileStreamSinkTask(SinkTask):
    """Appends ``value`` of every record, as text, plus a newline: written to the file at each
    put (readable at once), made durable (fsync) at flush()."""

    __connect_class_name__ = "org.apache.kafka.connect.file.FileStreamSinkTask"

    def __init__(self) -> None:
        self._filename: str | None = None
        self._file: BinaryIO | None = None

    def version(self) -> str:
        return VERSION

    def start(self, config: dict[str, str]) -> None:
        self._filename = config.get(FILE_CONFIG) or None
        if self._filename is not None:
            self._file = open(self._filename, "ab", buffering=WRITE_BUFFER_BYTES)  # noqa: SIM115
        log.debug("Writing records to %s", self._filename or "standard output")

    def put(self, records: list[SinkRecord]) -> None:
        if not records:
            return
        text = "\n".join([v if type(v) is str else to_text(v) for v in [r.value for r in records]])
        if self._file is not None:  # written at put, as Kafka's task does; flush() syncs
            self._file.write(text.encode("utf-8", "replace") + b"\n")
            self._file.flush()
        elif self._filename is None:
            sys.stdout.write(text + "\n")  # looked up each time: stdout may be redirected

    def flush(self, offsets: dict[TopicPartition, int]) -> None:
        """Make everything put so far durable (fsync), for a file."""
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())
        elif self._filename is None:
            sys.stdout.flush()

    def stop(self) -> None:
        file, self._file = self._file, None
        if file is not None:
            file.close()
        elif self._filename is None:
            sys.stdout.flush()


def to_text(value: Any) -> str:
    """A value as Java's ``String.valueOf`` prints it (bytes are decoded as UTF-8)."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, Struct):
        fields = value.as_dict().items()
        return "Struct{" + ",".join(f"{k}={to_text(v)}" for k, v in fields if v is not None) + "}"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{to_text(k)}={to_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(to_text(v) for v in value) + "]"
    return str(value)
