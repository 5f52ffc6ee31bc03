"""The SpoolDir source connectors and their task: files dropped into a directory, read by
Spark in the executors and produced from there (``SourceTask.poll_dataframe``)."""

from __future__ import annotations

import functools
import json
import logging
import os
import re
import threading
from dataclasses import dataclass
from typing import Any

from connect_lite.api import (
    FRAME_PARTITIONED_METADATA,
    ConfigDef,
    ConfigError,
    ConnectError,
    RetriableError,
    SourceConnector,
    SourceTask,
)

from . import files, schemas
from .config import (
    BATCH_SIZE,
    CSV_CHARSET,
    CSV_HEADER,
    CSV_QUOTE,
    CSV_SEPARATOR,
    EMPTY_POLL_WAIT_MS,
    ERROR_PATH,
    FILE_MINIMUM_AGE_MS,
    FILES_SORT_ATTRIBUTES,
    FINISHED_PATH,
    GENERATION_KEY_FIELDS,
    GENERATION_KEY_NAME,
    GENERATION_VALUE_NAME,
    HALT_ON_ERROR,
    INPUT_FILE_PATTERN,
    INPUT_PATH,
    KEY_SCHEMA,
    MAINTAIN_RELATIVE_PATH,
    PROCESSING_FILE_EXTENSION,
    TASK_COUNT,
    TASK_INDEX,
    VALUE_SCHEMA,
    WALK_RECURSIVELY,
    Cleanup,
    Format,
    SpoolConfig,
    config_def,
    cross_field_errors,
)
from .reader import FileFrames, header_row
from .version import VERSION

log = logging.getLogger(__name__)

_PACKAGE = "com.github.jcustenborder.kafka.connect.spooldir."
STOP_WAIT_S = 1.0
"""How long stop() waits for a poll in progress before leaving the clean-up to it."""
GENERATION_FILES = 5
"""How many files schema generation reads (jcustenborder's connector reads the first 5)."""

_DEFS = {kind: config_def(kind) for kind in Format}


class _SpoolDirConnector(SourceConnector):
    """The keys, checks and task configs every SpoolDir connector shares."""

    KIND = Format.CSV

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return _DEFS[self.KIND]

    def validate(self, config: dict[str, str]) -> None:
        """The checks across keys; each key alone is checked by the ConfigDef."""
        values = {name: cv.value for name, cv in _DEFS[self.KIND].validate(config).items()}
        errors = cross_field_errors(self.KIND, values)
        if errors:
            raise ConfigError("\n".join(m for ms in errors.values() for m in ms), errors)

    def start(self, config: dict[str, str]) -> None:
        parsed = SpoolConfig.parse(self.KIND, config, schemas_needed=False)
        self._props = dict(config)
        if parsed.generates:  # into the task configs, as jcustenborder's connector does
            generated = dict(zip((KEY_SCHEMA, VALUE_SCHEMA), _generate(parsed), strict=True))
            for key, schema in generated.items():
                if not config.get(key, "").strip():
                    self._props[key] = schema
                    log.info("Generated %s: %s", key, schema)

    def task_class(self) -> type[SourceTask]:
        return _TASKS[self.KIND]

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [
            dict(self._props, **{TASK_INDEX: str(i), TASK_COUNT: str(max_tasks)})
            for i in range(max_tasks)
        ]

    def stop(self) -> None:
        """Nothing to do: the connector does no background monitoring."""


class SpoolDirCsvSourceConnector(_SpoolDirConnector):
    """CSV files into a topic, with jcustenborder's keys, records, offsets and headers."""

    __connect_class_name__ = _PACKAGE + "SpoolDirCsvSourceConnector"
    KIND = Format.CSV


class SpoolDirJsonSourceConnector(_SpoolDirConnector):
    """JSON files (a JSON object per line) into a topic, as jcustenborder's connector."""

    __connect_class_name__ = _PACKAGE + "SpoolDirJsonSourceConnector"
    KIND = Format.JSON


class SpoolDirLineDelimitedSourceConnector(_SpoolDirConnector):
    """Each line of text files as a string record, as jcustenborder's connector."""

    __connect_class_name__ = _PACKAGE + "SpoolDirLineDelimitedSourceConnector"
    KIND = Format.LINES


class SpoolDirParquetSourceConnector(_SpoolDirConnector):
    """Parquet files into a topic, a row a record (connect-lite's own)."""

    KIND = Format.PARQUET


def _generate(config: SpoolConfig) -> tuple[str, str]:
    """jcustenborder's schema generation: the columns of the first files, as optional
    strings; every file must give the same columns."""
    spool = _spool(config)
    found = spool.list()[:GENERATION_FILES]
    if not found:
        raise ConnectError("Could not find any input file(s) to infer schema from.")
    seen: list[list[str]] = []
    for file in found:
        columns = _columns(config, file.path)
        if seen and columns != seen[0]:
            raise ConnectError("More than one schema was found for the input pattern.")
        seen.append(columns)
    return schemas.generated(
        config[GENERATION_KEY_NAME],
        config[GENERATION_VALUE_NAME],
        seen[0],
        list(config[GENERATION_KEY_FIELDS]),
    )


def _columns(config: SpoolConfig, path: str) -> list[str]:
    if config.kind is Format.CSV:
        separator, quote = chr(config[CSV_SEPARATOR]), chr(config[CSV_QUOTE])
        row = header_row(path, separator, quote, config[CSV_CHARSET])
        if config[CSV_HEADER]:
            return list(row)
        return [f"column{i + 1:02d}" for i in range(len(row))]
    with open(path, encoding="utf-8") as stream:
        for line in stream:
            if line.strip():
                node = json.loads(line)
                if isinstance(node, dict):
                    return list(node)
    return []


def _spool(config: SpoolConfig) -> files.Spool:
    return files.Spool(
        input_path=config[INPUT_PATH],
        pattern=config[INPUT_FILE_PATTERN],
        flag_extension=config[PROCESSING_FILE_EXTENSION],
        minimum_age_ms=config[FILE_MINIMUM_AGE_MS],
        sort_attributes=tuple(config[FILES_SORT_ATTRIBUTES]),
        recursive=config[WALK_RECURSIVELY],
        task_index=config[TASK_INDEX],
        task_count=config[TASK_COUNT],
    )


@dataclass
class _Cache:
    """The executors' cache of files parsed together, and how many of them still read it."""

    frame: Any
    users: int


@dataclass
class _Reading:
    """A file being read: its rows (in a cache it may share), its last record's offset
    (first - 1 when it has none), and the offset of the last record handed over."""

    file: files.InputFile
    frame: Any
    cache: _Cache | None
    last: int
    handed: int


class SpoolDirSourceTask(SourceTask):
    """Reads the spool's files with Spark; each poll hands over the next ``batch.size``
    records of up to as many files as Spark has cores, as one frame.

    A file is parsed once when it is opened (a Spark job that caches its records in the
    executors): a file that does not parse is moved to ``error.path`` before any of its
    records is produced. A file whose records are all handed over is cleaned up
    (``cleanup.policy``) once the worker has committed the offset of its last record, so a
    restart at any point resumes after the last committed record."""

    KIND = Format.CSV
    poll = SourceTask.poll  # only poll_dataframe

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._config: SpoolConfig | None = None
        self._spool: files.Spool | None = None
        self._frames: FileFrames | None = None
        self._queue: list[files.InputFile] = []
        self._reading: list[_Reading] = []
        self._handed: list[_Reading] = []
        """Files whose records are all handed over, waiting for their offsets' commit."""
        self._spent: list[Any] = []
        """Frames of the last poll's finished files: released at the next poll (its job ran)."""
        self._done: set[tuple[str, int, int]] = set()
        """Files finished under cleanup.policy NONE (still in input.path): not read again."""
        self._empty_polls = 0

    def version(self) -> str:
        return VERSION

    def start(self, config: dict[str, str]) -> None:
        self._config = SpoolConfig.parse(self.KIND, config)
        self._spool = _spool(self._config)
        self._frames = FileFrames(self._config)
        self._stopping.clear()
        for name in (INPUT_PATH, ERROR_PATH) + (
            (FINISHED_PATH,) if self._config.cleanup in (Cleanup.MOVE, Cleanup.MOVEBYDATE) else ()
        ):
            _check_directory(name, self._config[name])
        self._clear_stale_flags()

    def _clear_stale_flags(self) -> None:
        """A flag file of this task's files left by a worker that died: removed, so the file
        is read again from its committed offset (jcustenborder's task skips it forever)."""
        assert self._spool is not None
        for flagged in self._spool.clear_stale_flags():
            log.info("Removed the stale flag file of %s", flagged)

    def poll_dataframe(self, spark: Any) -> Any:
        with self._lock:
            if self._stopping.is_set():
                self._shut_down()
                return None
            self._release_spent()
            self._clean_up_handed()
            self._open_files(spark)
            frame = self._next_frame()
            if self._stopping.is_set():  # stop() came while a file was parsed
                self._shut_down()
                return None
        if frame is None:
            self._empty_polls += 1
            if self._empty_polls > 1:
                assert self._config is not None
                self._stopping.wait(self._config[EMPTY_POLL_WAIT_MS] / 1000)
            return None
        self._empty_polls = 0
        return frame

    def commit(self) -> None:
        """Offsets were committed: clean up the files whose records all are."""
        with self._lock:
            self._clean_up_handed()

    def stop(self) -> None:
        """Release the files' flags and caches; if a poll is parsing files, it does so when
        its job ends (stop does not wait for it)."""
        self._stopping.set()
        if self._lock.acquire(timeout=STOP_WAIT_S):
            try:
                self._shut_down()
            finally:
                self._lock.release()

    def _shut_down(self) -> None:
        for reading in self._reading + self._handed:
            if self._spool is not None:
                self._spool.release(reading.file)
            self._release(reading)
        self._reading, self._handed = [], []
        self._release_spent()

    # -- opening files ---------------------------------------------------------------------

    def _open_files(self, spark: Any) -> None:
        """Open files until as many are being read as Spark has cores: those opened together
        are parsed by one job (a Spark task each); if it fails, one at a time, so that only
        the bad file goes to error.path."""
        assert self._config is not None and self._spool is not None
        lanes = max(1, int(spark.sparkContext.defaultParallelism))
        wanted: list[files.InputFile] = []
        while len(self._reading) + len(wanted) < lanes and not self._stopping.is_set():
            file = self._next_file()
            if file is None:
                break
            self._spool.claim(file)
            wanted.append(file)
        if len(wanted) > 1 and self._open(spark, wanted) is None:
            return
        for file in wanted:
            error = self._open(spark, [file])
            if error is not None:
                self._failed(file, error)

    def _next_file(self) -> files.InputFile | None:
        assert self._spool is not None
        if not self._queue:
            self._queue = [
                f for f in self._spool.list() if (f.path, f.length, f.modified_ms) not in self._done
            ]
        while self._queue:
            file = self._queue.pop(0)
            if os.path.exists(file.path) and not os.path.exists(self._spool.flag(file)):
                return file
        return None

    def _open(self, spark: Any, opening: list[files.InputFile]) -> BaseException | None:
        """Parse the files in one job into the executors' cache; the error if it failed."""
        assert self._frames is not None and self._spool is not None
        frame = None
        try:
            frames = [self._frames.frame(spark, file, i) for i, file in enumerate(opening)]
            frame = functools.reduce(lambda a, b: a.unionByName(b), frames).persist()
            counts = {  # parses every file; a bad value raises here
                row[0]: row[1] for row in frame.groupBy("_file").count().collect()
            }
        except Exception as error:
            _unpersist(frame)
            if _is_spark_down(error):
                for file in opening:
                    self._spool.release(file)
                raise RetriableError(f"Spark failed while reading files: {error}") from error
            return error
        cache = _Cache(frame, len(opening))
        first = self.KIND.first_offset
        for i, file in enumerate(opening):
            rows = counts.get(i, 0)
            committed = self._committed(file)
            last = first + rows - 1
            handed = first - 1 if committed is None else min(committed, last)
            part = frame.filter(f"_file = {i}")
            reading = _Reading(file, part, cache, last, handed)
            log.info(
                "Opened %s: %d record(s), %s",
                file.path,
                rows,
                "from the start" if committed is None else f"after offset {committed}",
            )
            if handed >= last:
                self._handed.append(reading)
                self._release(reading)
            else:
                self._reading.append(reading)
        return None

    def _release(self, reading: _Reading) -> None:
        """The reading needs its file's cache no more: the cache is spent with its last one."""
        cache = reading.cache
        reading.cache = None
        if cache is not None:
            cache.users -= 1
            if cache.users == 0:
                self._spent.append(cache.frame)

    def _committed(self, file: files.InputFile) -> int | None:
        offset = self.context.offset_storage_reader().offset({"fileName": file.name})
        value = None if offset is None else offset.get("offset")
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConnectError(f"The stored offset of {file.name} is not a long: {value!r}")
        return value

    def _failed(self, file: files.InputFile, error: BaseException) -> None:
        """A file that could not be read: moved to error.path; the task fails if
        halt.on.error, else goes on with the next file."""
        assert self._config is not None and self._spool is not None
        message = _first_line(error)
        log.error("Exception encountered processing %s: %s", file.path, message)
        try:
            target = files.move(file, self._config[ERROR_PATH])
            log.info("Moved %s to %s", file.path, target)
        except OSError:
            log.exception("Could not move %s to %s", file.path, self._config[ERROR_PATH])
        self._spool.release(file)
        if self._config[HALT_ON_ERROR]:
            raise ConnectError(f"Could not read {file.path}: {message}") from error

    # -- handing over ----------------------------------------------------------------------

    def _next_frame(self) -> Any:
        assert self._config is not None and self._frames is not None
        batch = self._config[BATCH_SIZE]
        slices = []
        for reading in list(self._reading):
            end = min(reading.handed + batch, reading.last)
            rows = reading.frame.filter(f"_offset > {reading.handed} AND _offset <= {end}")
            slices.append(self._frames.records(rows, reading.file))
            reading.handed = end
            if end >= reading.last:
                self._reading.remove(reading)
                self._handed.append(reading)
                self._release(reading)
        if not slices:
            return None
        # The cache holds each file in one Spark partition, in order (or, when Spark's union
        # merged single-partition reads, whole files in one): the frame needs no shuffle (the
        # plugin API's connect.partitioned), and files of other partitions run in parallel.
        frame = functools.reduce(lambda a, b: a.unionByName(b), slices).drop("_offset")
        return frame.withMetadata("source_partition", {FRAME_PARTITIONED_METADATA: True})

    def _release_spent(self) -> None:
        for frame in self._spent:
            _unpersist(frame)
        self._spent = []

    # -- cleaning up -------------------------------------------------------------------------

    def _clean_up_handed(self) -> None:
        for reading in list(self._handed):
            committed = self._committed(reading.file)
            first = self.KIND.first_offset
            if reading.last >= first and (committed is None or committed < reading.last):
                continue  # records not all committed yet
            self._handed.remove(reading)
            self._finish(reading.file)

    def _finish(self, file: files.InputFile) -> None:
        assert self._config is not None and self._spool is not None
        policy = self._config.cleanup
        try:
            if policy is Cleanup.DELETE:
                os.remove(file.path)
                log.info("Deleted %s: all its records are committed", file.path)
            elif policy in (Cleanup.MOVE, Cleanup.MOVEBYDATE):
                directory = self._config[FINISHED_PATH]
                if policy is Cleanup.MOVEBYDATE:
                    directory = files.by_date(directory, file)
                target = files.move(file, directory)
                log.info("Moved %s to %s: all its records are committed", file.path, target)
            else:
                self._done.add((file.path, file.length, file.modified_ms))
        except OSError:
            log.exception("Could not clean up %s (%s)", file.path, policy.value)
        self._spool.release(file)
        if policy is not Cleanup.NONE and not self._config[MAINTAIN_RELATIVE_PATH]:
            files.prune(file, self._config[INPUT_PATH])


class SpoolDirCsvSourceTask(SpoolDirSourceTask):
    __connect_class_name__ = _PACKAGE + "SpoolDirCsvSourceTask"
    KIND = Format.CSV


class SpoolDirJsonSourceTask(SpoolDirSourceTask):
    __connect_class_name__ = _PACKAGE + "SpoolDirJsonSourceTask"
    KIND = Format.JSON


class SpoolDirLineDelimitedSourceTask(SpoolDirSourceTask):
    __connect_class_name__ = _PACKAGE + "SpoolDirLineDelimitedSourceTask"
    KIND = Format.LINES


class SpoolDirParquetSourceTask(SpoolDirSourceTask):
    KIND = Format.PARQUET


_TASKS: dict[Format, type[SourceTask]] = {
    Format.CSV: SpoolDirCsvSourceTask,
    Format.JSON: SpoolDirJsonSourceTask,
    Format.LINES: SpoolDirLineDelimitedSourceTask,
    Format.PARQUET: SpoolDirParquetSourceTask,
}


def _check_directory(key: str, path: str) -> None:
    if not os.path.isdir(path):
        raise ConnectError(f"Directory for '{key}' '{path}' does not exist")
    if not os.access(path, os.W_OK):
        raise ConnectError(f"Directory for '{key}' '{path}' is not writable.")


def _unpersist(frame: Any) -> None:
    if frame is not None:
        try:
            frame.unpersist()
        except Exception:  # the session is gone: nothing is cached any more
            log.debug("Could not unpersist a frame", exc_info=True)


def _is_spark_down(error: BaseException) -> bool:
    """Whether the error is Spark's (its JVM or the connection to it), not the file's: a
    failed job is a Py4JJavaError or one of pyspark's captured errors."""
    module, name = type(error).__module__ or "", type(error).__name__
    return (module.startswith("py4j") and name != "Py4JJavaError") or isinstance(
        error, ConnectionError
    )


def _first_line(error: BaseException) -> str:
    """What went wrong, in one line: the text of a raise_error, else the innermost cause
    of a Java error, else the first line."""
    text = str(error).strip()
    raised = re.search(r"\[USER_RAISED_EXCEPTION\] (.*?)(?: SQLSTATE: \w+)?$", text, re.M)
    if raised:
        return raised.group(1)
    causes = re.findall(r"^Caused by: [\w.$]+: (.*?)(?: SQLSTATE: \w+)?$", text, re.M)
    if causes:
        return causes[-1]
    return text.splitlines()[0] if text else type(error).__name__
