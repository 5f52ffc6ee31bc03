"""The lake sink's configuration: Confluent's storage-sink keys, declared once."""

from __future__ import annotations

import enum
import os
import re
import urllib.parse
import zoneinfo
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from connect_lite.api import (
    ConfigDef,
    ConfigError,
    Importance,
    LocalPath,
    Range,
    Type,
    ValidString,
)

from .timeformat import joda_to_java

STORE_URL = "store.url"
TOPICS_DIR = "topics.dir"
FORMAT_CLASS = "format.class"
FLUSH_SIZE = "flush.size"
ROTATE_INTERVAL_MS = "rotate.interval.ms"
ROTATE_SCHEDULE_INTERVAL_MS = "rotate.schedule.interval.ms"
PARTITIONER_CLASS = "partitioner.class"
PARTITION_FIELD_NAME = "partition.field.name"
PATH_FORMAT = "path.format"
PARTITION_DURATION_MS = "partition.duration.ms"
TIMESTAMP_EXTRACTOR = "timestamp.extractor"
TIMESTAMP_FIELD = "timestamp.field"
TIMEZONE = "timezone"
LOCALE = "locale"
ZERO_PAD_WIDTH = "filename.offset.zero.pad.width"
BEHAVIOR_ON_NULL_VALUES = "behavior.on.null.values"
RETRY_BACKOFF_MS = "retry.backoff.ms"

TASK_ID = "lake.task.id"
"""Set by the connector in each task's config: the task's number, which names its private
buffer area."""

HIDDEN_DIR = "_connect-lite"
"""The store's directory for buffered pieces, temporary files and journals. Its leading ``_`` hides
it from Spark's and pyarrow's dataset readers."""


class Format(enum.Enum):
    """A file format Spark writes; the value is Spark's format name."""

    PARQUET = "parquet"
    JSON = "json"
    CSV = "csv"
    ORC = "orc"

    @property
    def extension(self) -> str:
        return "." + self.value


class Partitioner(enum.Enum):
    DEFAULT = "DefaultPartitioner"
    FIELD = "FieldPartitioner"
    TIME = "TimeBasedPartitioner"
    HOURLY = "HourlyPartitioner"
    DAILY = "DailyPartitioner"


class Extractor(enum.Enum):
    RECORD = "Record"
    RECORD_FIELD = "RecordField"
    WALLCLOCK = "Wallclock"


HOURLY_PATH_FORMAT = "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH"
DAILY_PATH_FORMAT = "'year'=YYYY/'month'=MM/'day'=dd"
_FIXED_TIME = {
    Partitioner.HOURLY: (HOURLY_PATH_FORMAT, 3_600_000),
    Partitioner.DAILY: (DAILY_PATH_FORMAT, 86_400_000),
}
_OFFSET_ZONE = re.compile(r"^[+-](\d{2}):(\d{2})$")
_MAX_OFFSET_HOURS = 18
"""Java's ZoneOffset (Spark's zones) ranges over -18:00..+18:00."""


def _simple_name(value: str, suffix: str) -> str:
    """A class name's simple name (after the last ``.`` or ``$``), lower case, without
    ``suffix``: ``io.confluent.connect.s3.format.json.JsonFormat`` is ``json``."""
    simple = re.split(r"[.$]", value.strip())[-1].lower()
    if simple.endswith(suffix) and simple != suffix:
        simple = simple[: -len(suffix)]
    return simple


def format_of(value: str) -> Format | None:
    """The format a ``format.class`` value names: ``parquet``, ``JSON``, or Confluent's
    ``…ParquetFormat`` / ``…JsonFormat`` / ``…OrcFormat`` class names."""
    return {f.value: f for f in Format}.get(_simple_name(value, "format"))


def partitioner_of(value: str) -> Partitioner | None:
    """The partitioner a ``partitioner.class`` value names (short or Confluent's name)."""
    names = {_simple_name(p.value, "partitioner"): p for p in Partitioner}
    return names.get(_simple_name(value, "partitioner"))


def extractor_of(value: str) -> Extractor | None:
    """The extractor a ``timestamp.extractor`` value names (``Record``, or Confluent's
    ``…TimeBasedPartitioner$RecordTimestampExtractor``)."""
    names = {e.value.lower(): e for e in Extractor}
    return names.get(_simple_name(value, "timestampextractor"))


def _invalid(name: str, value: Any, message: str) -> str:
    return f"Invalid value {value} for configuration {name}: {message}"


@dataclass(frozen=True)
class _OneOf:
    """A validator: the value must be a name ``parse`` knows."""

    parse: Callable[[str], Any]
    supported: str

    def __call__(self, name: str, value: Any) -> str | None:
        if value is None or self.parse(value) is None:
            return _invalid(name, value, f"must be one of {self.supported}")
        return None


def _store_url(name: str, value: Any) -> str | None:
    if not value:
        return _invalid(name, value, "must be a URL such as file:///data/lake or s3a://bucket/lake")
    try:
        parts = urllib.parse.urlsplit(value)
    except ValueError as exc:  # e.g. "Invalid IPv6 URL" for s3a://[bucket
        return _invalid(name, value, f"not a valid URL ({exc})")
    if len(parts.scheme) < 2:
        return None  # a plain path: absolute, or relative to the worker's working directory
    if parts.scheme == "file" and (
        parts.netloc not in ("", "localhost") or not parts.path.startswith("/")
    ):
        return _invalid(name, value, "a file URL needs an absolute path: file:///abs/path")
    return None


def _topics_dir(name: str, value: Any) -> str | None:
    parts = [p for p in str(value or "").split("/") if p]
    if not parts:
        return _invalid(name, value, "must not be empty")
    if any(p in (".", "..") for p in parts):
        return _invalid(name, value, "must not contain . or .. segments")
    if parts[0] == HIDDEN_DIR:
        return _invalid(name, value, f"{HIDDEN_DIR} is the connector's private directory")
    return None


def _off_or_positive(name: str, value: Any) -> str | None:
    if value is None or (value != -1 and value <= 0):
        return _invalid(name, value, "must be -1 (off) or a positive number of milliseconds")
    return None


def _path_format(name: str, value: Any) -> str | None:
    try:
        joda_to_java(value or "")
    except ValueError as exc:
        return _invalid(name, value, str(exc))
    return None


def _timezone(name: str, value: Any) -> str | None:
    if value is None or not value.strip():
        return _invalid(name, value, "must be a time zone ID such as UTC or Europe/Paris")
    text = value.strip()
    offset = _OFFSET_ZONE.match(text)
    if offset:
        hours, minutes = int(offset[1]), int(offset[2])
        if minutes >= 60 or hours > _MAX_OFFSET_HOURS or (hours == _MAX_OFFSET_HOURS and minutes):
            return _invalid(
                name, value, "a zone offset is ±HH:MM from -18:00 to +18:00, minutes below 60"
            )
        return None
    try:
        zoneinfo.ZoneInfo(text)
    except (ValueError, OSError, zoneinfo.ZoneInfoNotFoundError):
        # OSError: a directory of the zone database ("Europe"), a name too long for a path
        return _invalid(name, value, "unknown time zone ID (use e.g. UTC, Europe/Paris, +05:30)")
    return None


def _field_names(name: str, value: Any) -> str | None:
    if value and any(not field for field in value):
        return _invalid(name, ",".join(value), "field names must not be empty")
    return None


_CONNECTOR, _STORAGE, _PARTITIONER = "Connector", "Storage", "Partitioner"
_FORMAT_NAMES = "parquet, json, csv, orc (or Confluent's …ParquetFormat, …JsonFormat, …OrcFormat)"

CONFIG_DEF = (
    ConfigDef()
    .define(
        STORE_URL,
        Type.STRING,
        validator=_store_url,
        importance=Importance.HIGH,
        doc="Where the files go: file:///abs/path (or a plain path, relative to the worker's "
        "working directory), or any Hadoop URL Spark can write "
        "(s3a://bucket/path, hdfs://namenode/path) when its jars are present. A local "
        "path must be inside the worker's connector.allowed.paths.",
        group=_STORAGE,
        local_path=LocalPath.URL,
    )
    .define(
        TOPICS_DIR,
        Type.STRING,
        "topics",
        _topics_dir,
        Importance.HIGH,
        "The directory under store.url that holds one directory per topic.",
        group=_STORAGE,
    )
    .define(
        FORMAT_CLASS,
        Type.STRING,
        "parquet",
        _OneOf(format_of, _FORMAT_NAMES),
        Importance.HIGH,
        "The file format: parquet, json, csv or orc, in any case; Confluent's format class "
        "names are accepted by their simple name (…ParquetFormat, …JsonFormat, …OrcFormat).",
        group=_CONNECTOR,
    )
    .define(
        FLUSH_SIZE,
        Type.INT,
        validator=Range.at_least(1),
        importance=Importance.HIGH,
        doc="Records per file: a file is committed once its topic partition has this many records.",
        group=_CONNECTOR,
    )
    .define(
        ROTATE_INTERVAL_MS,
        Type.LONG,
        -1,
        _off_or_positive,
        Importance.HIGH,
        "Commit a file when a record's timestamp (by timestamp.extractor) is at least this "
        "long after the timestamp of the file's first record. -1 disables it.",
        group=_CONNECTOR,
    )
    .define(
        ROTATE_SCHEDULE_INTERVAL_MS,
        Type.LONG,
        -1,
        _off_or_positive,
        Importance.MEDIUM,
        "Commit buffered records that have waited this long (wall clock) at the next put or "
        "offset commit. -1 disables it.",
        group=_CONNECTOR,
    )
    .define(
        PARTITIONER_CLASS,
        Type.STRING,
        "io.confluent.connect.storage.partitioner.DefaultPartitioner",
        _OneOf(partitioner_of, ", ".join(p.value for p in Partitioner)),
        Importance.HIGH,
        "How records are laid out in directories under <topics.dir>/<topic>/: "
        "DefaultPartitioner (partition=<n>), FieldPartitioner (<field>=<value>/...), "
        "TimeBasedPartitioner (path.format), HourlyPartitioner, DailyPartitioner. Short or "
        "Confluent's io.confluent.connect.storage.partitioner.* names.",
        group=_PARTITIONER,
    )
    .define(
        PARTITION_FIELD_NAME,
        Type.LIST,
        [],
        _field_names,
        Importance.MEDIUM,
        "FieldPartitioner: the value fields whose values name the directories, nested in "
        "this order.",
        group=_PARTITIONER,
    )
    .define(
        PATH_FORMAT,
        Type.STRING,
        "",
        _path_format,
        Importance.MEDIUM,
        "TimeBasedPartitioner: the Joda-Time pattern of the directories, e.g. "
        "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH.",
        group=_PARTITIONER,
    )
    .define(
        PARTITION_DURATION_MS,
        Type.LONG,
        -1,
        None,
        Importance.MEDIUM,
        "TimeBasedPartitioner: the length of a time bucket in milliseconds.",
        group=_PARTITIONER,
    )
    .define(
        TIMESTAMP_EXTRACTOR,
        Type.STRING,
        "Wallclock",
        _OneOf(extractor_of, "Record, RecordField, Wallclock"),
        Importance.MEDIUM,
        "The time of a record for time-based partitioning and rotate.interval.ms: Record "
        "(the Kafka timestamp), RecordField (timestamp.field of the value) or Wallclock.",
        group=_PARTITIONER,
    )
    .define(
        TIMESTAMP_FIELD,
        Type.STRING,
        "timestamp",
        None,
        Importance.MEDIUM,
        "RecordField: the value field holding the time (epoch milliseconds, a timestamp, a "
        "date or an ISO-8601 string); dots name nested fields.",
        group=_PARTITIONER,
    )
    .define(
        TIMEZONE,
        Type.STRING,
        "UTC",
        _timezone,
        Importance.MEDIUM,
        "Time-based partitioners: the time zone directories are formatted in.",
        group=_PARTITIONER,
    )
    .define(
        LOCALE,
        Type.STRING,
        "",
        None,
        Importance.LOW,
        "Accepted for Confluent compatibility; text fields of path.format are in English.",
        group=_PARTITIONER,
    )
    .define(
        ZERO_PAD_WIDTH,
        Type.INT,
        10,
        Range.at_least(0),
        Importance.LOW,
        "Width to zero-pad the offsets in file names to.",
        group=_CONNECTOR,
    )
    .define(
        BEHAVIOR_ON_NULL_VALUES,
        Type.STRING,
        "fail",
        ValidString.in_ignore_case("fail", "ignore"),
        Importance.LOW,
        "What a record with a null value does: fail the task, or ignore the record.",
        group=_CONNECTOR,
    )
    .define(
        RETRY_BACKOFF_MS,
        Type.LONG,
        5000,
        Range.at_least(1),
        Importance.LOW,
        "How long (milliseconds, at least 1) the worker waits before handing a batch over "
        "again after a failure of the store that may pass. The worker ignores a timeout of 0 "
        "(as Kafka Connect does) and would wait until the next offset commit instead.",
        group=_CONNECTOR,
    )
)


@dataclass(frozen=True)
class TimeLayout:
    """A time-based partitioner's directories: a Spark pattern, a bucket, a zone."""

    pattern: str  # Java DateTimeFormatter pattern, for Spark's date_format
    duration_ms: int
    timezone: str


@dataclass(frozen=True)
class LakeConfig:
    """A parsed, checked lake sink configuration."""

    store_url: str
    topics_dir: str
    format: Format
    flush_size: int
    rotate_interval_ms: int
    rotate_schedule_interval_ms: int
    partitioner: Partitioner
    field_names: tuple[str, ...]
    time: TimeLayout | None
    extractor: Extractor
    timestamp_field: str
    zero_pad_width: int
    ignore_null_values: bool
    retry_backoff_ms: int

    @staticmethod
    def parse(props: Mapping[str, Any]) -> LakeConfig:
        """Parse and check ``props``; ConfigError lists every problem by key."""
        values = CONFIG_DEF.parse(props)
        errors = cross_field_errors(values)
        if errors:
            raise ConfigError("\n".join(m for ms in errors.values() for m in ms), errors)
        partitioner = partitioner_of(values[PARTITIONER_CLASS])
        assert partitioner is not None
        return LakeConfig(
            store_url=_normalized_url(values[STORE_URL]),
            topics_dir="/".join(p for p in values[TOPICS_DIR].split("/") if p),
            format=format_of(values[FORMAT_CLASS]) or Format.PARQUET,
            flush_size=values[FLUSH_SIZE],
            rotate_interval_ms=values[ROTATE_INTERVAL_MS],
            rotate_schedule_interval_ms=values[ROTATE_SCHEDULE_INTERVAL_MS],
            partitioner=partitioner,
            field_names=tuple(values[PARTITION_FIELD_NAME]),
            time=_time_layout(partitioner, values),
            extractor=extractor_of(values[TIMESTAMP_EXTRACTOR]) or Extractor.WALLCLOCK,
            timestamp_field=values[TIMESTAMP_FIELD],
            zero_pad_width=values[ZERO_PAD_WIDTH],
            ignore_null_values=values[BEHAVIOR_ON_NULL_VALUES].lower() == "ignore",
            retry_backoff_ms=values[RETRY_BACKOFF_MS],
        )


def cross_field_errors(values: Mapping[str, Any]) -> dict[str, list[str]]:
    """Problems of keys that depend on each other, given values that parsed on their own."""
    errors: dict[str, list[str]] = {}
    partitioner = partitioner_of(values.get(PARTITIONER_CLASS) or "")
    if partitioner is Partitioner.FIELD and not values.get(PARTITION_FIELD_NAME):
        errors[PARTITION_FIELD_NAME] = [
            f"{PARTITION_FIELD_NAME} must name at least one field for FieldPartitioner"
        ]
    if partitioner is Partitioner.TIME:
        if not (values.get(PATH_FORMAT) or "").strip():
            errors[PATH_FORMAT] = [f"{PATH_FORMAT} is required for TimeBasedPartitioner"]
        duration = values.get(PARTITION_DURATION_MS)
        if duration is None or duration <= 0:
            errors[PARTITION_DURATION_MS] = [
                f"{PARTITION_DURATION_MS} must be a positive number of milliseconds for "
                "TimeBasedPartitioner"
            ]
    extractor = extractor_of(values.get(TIMESTAMP_EXTRACTOR) or "")
    if extractor is Extractor.RECORD_FIELD and not (values.get(TIMESTAMP_FIELD) or "").strip():
        errors[TIMESTAMP_FIELD] = [f"{TIMESTAMP_FIELD} is required for the RecordField extractor"]
    return errors


def _time_layout(partitioner: Partitioner, values: Mapping[str, Any]) -> TimeLayout | None:
    if partitioner in _FIXED_TIME:
        joda, duration = _FIXED_TIME[partitioner]
    elif partitioner is Partitioner.TIME:
        joda, duration = values[PATH_FORMAT].strip(), values[PARTITION_DURATION_MS]
    else:
        return None
    return TimeLayout(joda_to_java(joda), duration, values[TIMEZONE].strip())


def _normalized_url(url: str) -> str:
    """The store URL without a trailing slash; a file URL as ``file:///abs/path``."""
    parts = urllib.parse.urlsplit(url.strip())
    if len(parts.scheme) < 2:  # a plain path, relative to the worker's working directory
        return "file://" + (os.path.abspath(url.strip()).rstrip("/") or "/")
    if parts.scheme == "file":
        return "file://" + (parts.path.rstrip("/") or "/")
    return url.strip().rstrip("/")
