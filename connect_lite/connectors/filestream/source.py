"""FileStreamSourceConnector and its task: the lines of a file (or stdin) into one topic."""

from __future__ import annotations

import logging
import os
import select
import sys
import threading
import time
from typing import Any, BinaryIO

from connect_lite.api import (
    ConfigDef,
    ConnectError,
    Headers,
    Importance,
    LocalPath,
    Partition,
    Schema,
    SourceConnector,
    SourceRecord,
    SourceTask,
    Type,
)

from .lines import LineBuffer
from .version import VERSION

log = logging.getLogger(__name__)

FILE_CONFIG = "file"
TOPIC_CONFIG = "topic"
TASK_BATCH_SIZE_CONFIG = "batch.size"
DEFAULT_TASK_BATCH_SIZE = 2000

FILENAME_FIELD = "filename"
POSITION_FIELD = "position"

IDLE_WAIT_SECONDS = 0.1
"""How long poll() waits for new data before returning an empty batch. Kafka's task waits
1 s; a line appended to the file waits half of this on average before it is read."""
READ_BLOCK_BYTES = 1 << 20

_NO_HEADERS = Headers()


def _single_topic(name: str, value: Any) -> str | None:
    """Kafka's NonEmptyString, plus the single-topic rule of older Kafka releases."""
    if value == "":
        return f"Invalid value  for configuration {name}: String must be non-empty"
    if value is not None and "," in value:
        return (
            f"'{name}' in FileStreamSourceConnector configuration "
            "requires definition of a single topic"
        )
    return None


CONFIG_DEF = (
    ConfigDef()
    .define(
        FILE_CONFIG,
        Type.STRING,
        None,
        importance=Importance.HIGH,
        doc="Source filename. If not specified, the standard input will be used. It must be "
        "inside the worker's connector.allowed.paths.",
        local_path=LocalPath.PATH,
    )
    .define(
        TOPIC_CONFIG,
        Type.STRING,
        validator=_single_topic,
        importance=Importance.HIGH,
        doc="The topic to publish data to",
    )
    .define(
        TASK_BATCH_SIZE_CONFIG,
        Type.INT,
        DEFAULT_TASK_BATCH_SIZE,
        importance=Importance.LOW,
        doc="The maximum number of records the source task can read from the file each time "
        "it is polled",
    )
)


class FileStreamSourceConnector(SourceConnector):
    """Very simple source connector that works with stdin or a file."""

    __connect_class_name__ = "org.apache.kafka.connect.file.FileStreamSourceConnector"

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def start(self, config: dict[str, str]) -> None:
        CONFIG_DEF.parse(config)
        self._props = dict(config)
        log.info("Starting file source connector reading from %s", _describe(config))

    def task_class(self) -> type[FileStreamSourceTask]:
        return FileStreamSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props)]  # only one input stream makes sense

    def stop(self) -> None:
        """Nothing to do: the connector does no background monitoring."""

    def alter_offsets(
        self, connector_config: dict[str, str], offsets: dict[Partition, dict[str, Any] | None]
    ) -> bool:
        """Accept well-formed offsets; the task checks the position against the file."""
        if not connector_config.get(FILE_CONFIG):
            raise ConnectError(
                f"Offsets cannot be modified if the '{FILE_CONFIG}' configuration is "
                "unspecified. This is because stdin is used for input and offsets are not tracked."
            )
        for partition, offset in offsets.items():
            if offset is None:
                continue  # tombstones are allowed for anything, so garbage can be cleaned up
            _check_offset(offset)
            if partition is None:
                raise ConnectError("Partition objects cannot be null")
            if FILENAME_FIELD not in partition:
                raise ConnectError(f"Partition objects should contain the key '{FILENAME_FIELD}'")
        return True


def _check_offset(offset: dict[str, Any]) -> None:
    if POSITION_FIELD not in offset:
        raise ConnectError(
            f"Offset objects should either be null or contain the key '{POSITION_FIELD}'"
        )
    position = offset[POSITION_FIELD]
    if not _is_long(position):
        raise ConnectError(
            f"The value for the '{POSITION_FIELD}' key in the offset is expected to be a Long value"
        )
    if position < 0:
        raise ConnectError(
            f"The value for the '{POSITION_FIELD}' key in the offset should be a non-negative value"
        )


def _is_long(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _describe(config: dict[str, str]) -> str:
    return config.get(FILE_CONFIG) or "standard input"


class FileStreamSourceTask(SourceTask):
    """Reads lines from stdin or a file; a file is followed as it grows.

    Each record's source partition is ``{"filename": file}`` and its source offset
    ``{"position": n}``, the byte position after the line, so a restarted task resumes at
    the next unread line. Reading stdin tracks no offsets.
    """

    __connect_class_name__ = "org.apache.kafka.connect.file.FileStreamSourceTask"

    def __init__(self) -> None:
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._filename: str | None = None
        self._topic = ""
        self._batch_size = DEFAULT_TASK_BATCH_SIZE
        self._stream: BinaryIO | None = None
        self._stdin_fd: int | None = None
        self._buffer = LineBuffer()
        self._partition: dict[str, Any] | None = None
        self._missing_reported = False
        """Whether the missing file was reported (at WARN) already."""

    def version(self) -> str:
        return VERSION

    def start(self, config: dict[str, str]) -> None:
        parsed = CONFIG_DEF.parse(config)
        self._filename = parsed[FILE_CONFIG] or None
        self._topic = parsed[TOPIC_CONFIG]
        self._batch_size = max(1, parsed[TASK_BATCH_SIZE_CONFIG])
        self._stopping.clear()
        if self._filename is None:
            self._stdin_fd = sys.stdin.fileno()
        else:
            self._partition = {FILENAME_FIELD: self._filename}

    def poll(self) -> list[SourceRecord]:
        """Up to ``batch.size`` new lines; [] after a short wait when there are none."""
        if self._stopping.is_set():
            return []
        with self._lock:
            if self._stopping.is_set():
                return []
            if self._stream is None and self._stdin_fd is None and not self._open():
                self._report_missing()
                records: list[SourceRecord] = []
            else:
                records = self._read_records()
        if not records:
            self._stopping.wait(IDLE_WAIT_SECONDS)
        return records

    def stop(self) -> None:
        """Wake a waiting poll() and close the file; safe to call from any thread."""
        self._stopping.set()
        with self._lock:
            if self._stream is not None:
                self._stream.close()
                self._stream = None

    def _report_missing(self) -> None:
        """Say once that the file is not there, then look for it quietly (every
        IDLE_WAIT_SECONDS); its arrival is said at INFO. Kafka's task warns at each look."""
        if self._missing_reported:
            return
        self._missing_reported = True
        log.warning(
            "Couldn't find file %s for FileStreamSourceTask, waiting for it to be created",
            self._filename,
        )

    def _open(self) -> bool:
        """Open the file at the stored position; False if it does not exist yet."""
        assert self._filename is not None and self._partition is not None
        try:
            stream = open(self._filename, "rb", buffering=0)  # noqa: SIM115  # closed in stop()
        except FileNotFoundError:
            return False
        try:
            position = self._stored_position()
            if position:
                stream.seek(position)
        except BaseException:
            stream.close()
            raise
        self._stream = stream
        self._buffer = LineBuffer(position)
        if self._missing_reported:
            log.info("File %s was created; reading it from byte %d", self._filename, position)
        else:
            log.debug("Opened %s for reading at byte %d", self._filename, position)
        return True

    def _stored_position(self) -> int:
        assert self._partition is not None
        offset = self.context.offset_storage_reader().offset(self._partition)
        position = None if offset is None else offset.get(POSITION_FIELD)
        if position is None:
            return 0
        if not _is_long(position):
            raise ConnectError("Offset position is the incorrect type")
        if position < 0:
            raise ConnectError(f"Offset position {position} is negative")
        return int(position)

    def _read_records(self) -> list[SourceRecord]:
        buffer = self._buffer
        while buffer.ready < self._batch_size:
            data = self._read_block()
            if not data:
                break
            buffer.feed(data)
        lines, ends = buffer.take(self._batch_size)
        if not lines:
            return []
        return self._records(lines, ends)

    def _read_block(self) -> bytes:
        if self._stream is not None:
            return self._stream.read(READ_BLOCK_BYTES) or b""
        if self._stdin_fd is None:
            return b""
        readable, _, _ = select.select([self._stdin_fd], [], [], 0)
        return os.read(self._stdin_fd, READ_BLOCK_BYTES) if readable else b""

    def _records(self, lines: list[str], ends: list[int]) -> list[SourceRecord]:
        partition, topic, schema = self._partition, self._topic, Schema.STRING_SCHEMA
        timestamp, headers = int(time.time() * 1000), _NO_HEADERS
        if partition is None:  # stdin: no offsets to track
            return [
                SourceRecord(None, None, topic, line, None, None, None, schema, timestamp, headers)
                for line in lines
            ]
        position = POSITION_FIELD
        return [
            SourceRecord(
                partition,
                {position: end},
                topic,
                line,
                None,
                None,
                None,
                schema,
                timestamp,
                headers,
            )
            for line, end in zip(lines, ends, strict=True)
        ]
