"""The SpoolDir sources' configuration: jcustenborder's keys and defaults, declared once per
format, and the checks across keys (``SpoolConfig.parse``)."""

from __future__ import annotations

import codecs
import enum
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from connect_lite.api import ConfigDef, ConfigError, Importance, LocalPath, Range, Type, ValidString

from . import schemas

TOPIC = "topic"
INPUT_PATH = "input.path"
FINISHED_PATH = "finished.path"
ERROR_PATH = "error.path"
INPUT_FILE_PATTERN = "input.file.pattern"
HALT_ON_ERROR = "halt.on.error"
FILE_MINIMUM_AGE_MS = "file.minimum.age.ms"
PROCESSING_FILE_EXTENSION = "processing.file.extension"
CLEANUP_POLICY = "cleanup.policy"
BATCH_SIZE = "batch.size"
EMPTY_POLL_WAIT_MS = "empty.poll.wait.ms"
TIMESTAMP_MODE = "timestamp.mode"
FILES_SORT_ATTRIBUTES = "files.sort.attributes"
TASK_PARTITIONER = "task.partitioner"
TASK_INDEX = "task.index"
TASK_COUNT = "task.count"
WALK_RECURSIVELY = "input.path.walk.recursively"
MAINTAIN_RELATIVE_PATH = "cleanup.policy.maintain.relative.path"
FILE_BUFFER_SIZE = "file.buffer.size.bytes"

KEY_SCHEMA = "key.schema"
VALUE_SCHEMA = "value.schema"
GENERATION_ENABLED = "schema.generation.enabled"
GENERATION_KEY_FIELDS = "schema.generation.key.fields"
GENERATION_KEY_NAME = "schema.generation.key.name"
GENERATION_VALUE_NAME = "schema.generation.value.name"
TIMESTAMP_TIMEZONE = "parser.timestamp.timezone"
TIMESTAMP_FORMATS = "parser.timestamp.date.formats"
TIMESTAMP_FIELD = "timestamp.field"

CSV_HEADER = "csv.first.row.as.header"
CSV_SEPARATOR = "csv.separator.char"
CSV_QUOTE = "csv.quote.char"
CSV_ESCAPE = "csv.escape.char"
CSV_SKIP_LINES = "csv.skip.lines"
CSV_NULL_INDICATOR = "csv.null.field.indicator"
CSV_IGNORE_LEADING_WHITESPACE = "csv.ignore.leading.whitespace"
CSV_IGNORE_QUOTATIONS = "csv.ignore.quotations"
CSV_STRICT_QUOTES = "csv.strict.quotes"
CSV_KEEP_CARRIAGE_RETURN = "csv.keep.carriage.return"
CSV_VERIFY_READER = "csv.verify.reader"
CSV_CHARSET = "csv.file.charset"
CSV_CASE_SENSITIVE = "csv.case.sensitive.field.names"
CSV_RFC_4180 = "csv.rfc.4180.parser.enabled"
FILE_CHARSET = "file.charset"

SORT_ATTRIBUTES = (
    "NameAsc",
    "NameDesc",
    "LengthAsc",
    "LengthDesc",
    "LastModifiedAsc",
    "LastModifiedDesc",
)
NULL_INDICATORS = ("EMPTY_SEPARATORS", "EMPTY_QUOTES", "BOTH", "NEITHER")
DEFAULT_DATE_FORMATS = ["yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd' 'HH:mm:ss"]
DEFAULT_KEY_NAME = "com.github.jcustenborder.kafka.connect.model.Key"
DEFAULT_VALUE_NAME = "com.github.jcustenborder.kafka.connect.model.Value"
UTF8 = ("utf-8", "ascii")


class Format(enum.Enum):
    """What a connector reads: jcustenborder's CSV, JSON and line-delimited sources, and our
    Parquet one."""

    CSV = "csv"
    JSON = "json"
    LINES = "lines"
    PARQUET = "parquet"

    @property
    def schemas(self) -> bool:
        """Whether records have ``key.schema`` and ``value.schema`` (CSV and JSON)."""
        return self in (Format.CSV, Format.JSON)

    @property
    def first_offset(self) -> int:
        """The ``offset`` of a file's first record: CSV and lines count lines from 1, JSON
        and Parquet records from 0 (as jcustenborder's tasks do)."""
        return 1 if self in (Format.CSV, Format.LINES) else 0


class Cleanup(enum.Enum):
    NONE = "NONE"
    DELETE = "DELETE"
    MOVE = "MOVE"
    MOVEBYDATE = "MOVEBYDATE"


class TimestampMode(enum.Enum):
    FIELD = "FIELD"
    FILE_TIME = "FILE_TIME"
    PROCESS_TIME = "PROCESS_TIME"


def _pattern(name: str, value: Any) -> str | None:
    if value is None:
        return f'Missing required configuration "{name}" which has no default value.'
    try:
        re.compile(value)
    except re.error as error:
        return f"Invalid value {value} for configuration {name}: not a regular expression ({error})"
    return None


def _extension(name: str, value: Any) -> str | None:
    if value is None or not re.fullmatch(r".*\..+", value):
        return f"Invalid value {value} for configuration {name}: must match ^.*\\..+$"
    return None


def _sort_attributes(name: str, value: Any) -> str | None:
    bad = [v for v in value or [] if v not in SORT_ATTRIBUTES]
    if bad:
        return (
            f"Invalid value {','.join(bad)} for configuration {name}: each must be one of "
            + ", ".join(SORT_ATTRIBUTES)
        )
    return None


def _charset(name: str, value: Any) -> str | None:
    if value is None or value == "":
        return None
    try:
        codecs.lookup(value)
    except LookupError:
        return f"Invalid value {value} for configuration {name}: not a known charset"
    return None


def _timezone(name: str, value: Any) -> str | None:
    import zoneinfo

    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return f"Invalid value {value} for configuration {name}: not a known time zone"
    return None


def _char(name: str, value: Any) -> str | None:
    if value is None or not 0 <= value <= 0xFFFF:
        return f"Invalid value {value} for configuration {name}: must be a character code"
    return None


def _common(defs: ConfigDef) -> ConfigDef:
    path_doc = " It must be inside the worker's connector.allowed.paths."
    return (
        defs.define(
            TOPIC,
            Type.STRING,
            importance=Importance.HIGH,
            doc="The Kafka topic to write the data to.",
        )
        .define(
            INPUT_PATH,
            Type.STRING,
            importance=Importance.HIGH,
            doc="The directory to read files from." + path_doc,
            local_path=LocalPath.PATH,
        )
        .define(
            FINISHED_PATH,
            Type.STRING,
            "",
            importance=Importance.HIGH,
            doc="The directory files are moved to once all their records are acknowledged "
            "(cleanup.policy MOVE or MOVEBYDATE)." + path_doc,
            local_path=LocalPath.PATH,
        )
        .define(
            ERROR_PATH,
            Type.STRING,
            importance=Importance.HIGH,
            doc="The directory files that cannot be read are moved to." + path_doc,
            local_path=LocalPath.PATH,
        )
        .define(
            INPUT_FILE_PATTERN,
            Type.STRING,
            validator=_pattern,
            importance=Importance.HIGH,
            doc="A regular expression a file's whole name must match to be read.",
        )
        .define(
            HALT_ON_ERROR,
            Type.BOOLEAN,
            True,
            importance=Importance.HIGH,
            doc="Whether a file that cannot be read fails the task (it is moved to error.path "
            "either way); false goes on with the next file.",
        )
        .define(
            FILE_MINIMUM_AGE_MS,
            Type.LONG,
            0,
            validator=Range.at_least(0),
            importance=Importance.LOW,
            doc="How long a file must be unmodified before it is read.",
        )
        .define(
            PROCESSING_FILE_EXTENSION,
            Type.STRING,
            ".PROCESSING",
            validator=_extension,
            importance=Importance.LOW,
            doc="The suffix of the flag file that marks a file being read.",
        )
        .define(
            CLEANUP_POLICY,
            Type.STRING,
            Cleanup.MOVE.value,
            validator=ValidString.in_(*(c.value for c in Cleanup)),
            importance=Importance.MEDIUM,
            doc="What happens to a file once its records are acknowledged: MOVE to "
            "finished.path, MOVEBYDATE to a yyyy-MM-dd directory of it, DELETE, or NONE.",
        )
        .define(
            BATCH_SIZE,
            Type.INT,
            1000,
            validator=Range.at_least(1),
            importance=Importance.LOW,
            doc="The most records of one file a poll hands over. Each poll is one Spark job, "
            "so raise it for throughput.",
        )
        .define(
            EMPTY_POLL_WAIT_MS,
            Type.LONG,
            500,
            validator=Range.between(1, 2**63 - 1),
            importance=Importance.LOW,
            doc="How long a poll that found no file waits before returning.",
        )
        .define(
            TIMESTAMP_MODE,
            Type.STRING,
            TimestampMode.PROCESS_TIME.value,
            validator=ValidString.in_(*(m.value for m in TimestampMode)),
            importance=Importance.MEDIUM,
            doc="The record timestamp: FIELD (timestamp.field), FILE_TIME (the file's "
            "modification time) or PROCESS_TIME (when produced). Only CSV and JSON use it.",
        )
        .define(
            FILES_SORT_ATTRIBUTES,
            Type.LIST,
            "NameAsc",
            validator=_sort_attributes,
            importance=Importance.LOW,
            doc="The order files are read in: " + ", ".join(SORT_ATTRIBUTES) + ".",
        )
        .define(
            TASK_PARTITIONER,
            Type.STRING,
            "ByName",
            validator=ValidString.in_("ByName"),
            importance=Importance.LOW,
            doc="How files are shared among tasks: ByName (a hash of the file name).",
        )
        .define(TASK_INDEX, Type.INT, 0, Range.at_least(0), Importance.LOW, "Set per task.")
        .define(TASK_COUNT, Type.INT, 1, Range.at_least(1), Importance.LOW, "Set per task.")
        .define(
            WALK_RECURSIVELY,
            Type.BOOLEAN,
            False,
            importance=Importance.LOW,
            doc="Whether files in sub-directories of input.path are read too.",
        )
        .define(
            MAINTAIN_RELATIVE_PATH,
            Type.BOOLEAN,
            False,
            importance=Importance.LOW,
            doc="Whether empty sub-directories of input.path are kept once their files are "
            "moved or deleted.",
        )
        .define(
            FILE_BUFFER_SIZE,
            Type.INT,
            128 * 1024,
            validator=Range.at_least(1),
            importance=Importance.LOW,
            doc="Accepted for compatibility: Spark's readers choose their own buffers.",
        )
    )


def _schemas(defs: ConfigDef) -> ConfigDef:
    return (
        defs.define(
            KEY_SCHEMA,
            Type.STRING,
            "",
            importance=Importance.HIGH,
            doc="The key's schema, in connect-utils' schema JSON.",
        )
        .define(
            VALUE_SCHEMA,
            Type.STRING,
            "",
            importance=Importance.HIGH,
            doc="The value's schema, in connect-utils' schema JSON.",
        )
        .define(
            GENERATION_ENABLED,
            Type.BOOLEAN,
            False,
            importance=Importance.MEDIUM,
            doc="Whether missing schemas are generated from the first files (every field an "
            "optional string).",
        )
        .define(GENERATION_KEY_FIELDS, Type.LIST, "", None, Importance.MEDIUM, "Key fields.")
        .define(GENERATION_KEY_NAME, Type.STRING, DEFAULT_KEY_NAME, None, Importance.MEDIUM)
        .define(GENERATION_VALUE_NAME, Type.STRING, DEFAULT_VALUE_NAME, None, Importance.MEDIUM)
        .define(
            TIMESTAMP_TIMEZONE,
            Type.STRING,
            "UTC",
            validator=_timezone,
            importance=Importance.LOW,
            doc="The time zone of timestamps without one.",
        )
        .define(
            TIMESTAMP_FORMATS,
            Type.LIST,
            ",".join(DEFAULT_DATE_FORMATS),
            importance=Importance.LOW,
            doc="The patterns Timestamp and Date fields are parsed with, tried in order.",
        )
        .define(
            TIMESTAMP_FIELD,
            Type.STRING,
            "",
            importance=Importance.MEDIUM,
            doc="The value field that holds the record timestamp (timestamp.mode FIELD).",
        )
    )


def _csv(defs: ConfigDef) -> ConfigDef:
    return (
        defs.define(CSV_HEADER, Type.BOOLEAN, False, None, Importance.MEDIUM, "Header row.")
        .define(CSV_SEPARATOR, Type.INT, ord(","), _char, Importance.LOW, "Separator code.")
        .define(CSV_QUOTE, Type.INT, ord('"'), _char, Importance.LOW, "Quote character code.")
        .define(CSV_ESCAPE, Type.INT, ord("\\"), _char, Importance.LOW, "Escape char code.")
        .define(CSV_SKIP_LINES, Type.INT, 0, Range.at_least(0), Importance.LOW, "Lines skipped.")
        .define(
            CSV_NULL_INDICATOR,
            Type.STRING,
            "NEITHER",
            ValidString.in_(*NULL_INDICATORS),
            Importance.LOW,
            "Which empty fields are null: EMPTY_SEPARATORS, EMPTY_QUOTES, BOTH or NEITHER.",
        )
        .define(CSV_IGNORE_LEADING_WHITESPACE, Type.BOOLEAN, True, None, Importance.LOW)
        .define(CSV_IGNORE_QUOTATIONS, Type.BOOLEAN, False, None, Importance.LOW)
        .define(CSV_STRICT_QUOTES, Type.BOOLEAN, False, None, Importance.LOW)
        .define(CSV_KEEP_CARRIAGE_RETURN, Type.BOOLEAN, False, None, Importance.LOW)
        .define(CSV_VERIFY_READER, Type.BOOLEAN, True, None, Importance.LOW)
        .define(CSV_CHARSET, Type.STRING, "UTF-8", _charset, Importance.LOW, "The charset.")
        .define(CSV_CASE_SENSITIVE, Type.BOOLEAN, False, None, Importance.LOW)
        .define(CSV_RFC_4180, Type.BOOLEAN, False, None, Importance.LOW, "RFC 4180 quoting.")
    )


def config_def(kind: Format) -> ConfigDef:
    """The keys of a format's connector."""
    defs = _common(ConfigDef())
    if kind.schemas:
        defs = _schemas(defs)
    if kind is Format.CSV:
        defs = _csv(defs)
    if kind is Format.LINES:
        defs = defs.define(FILE_CHARSET, Type.STRING, "UTF-8", _charset, Importance.LOW)
    return defs


UNSUPPORTED_VALUES: dict[str, tuple[Any, str]] = {
    CSV_SKIP_LINES: (0, "Spark's CSV reader cannot skip lines"),
    CSV_IGNORE_QUOTATIONS: (False, "Spark's CSV reader always honours quotes"),
    CSV_STRICT_QUOTES: (False, "Spark's CSV reader has no strict quotes"),
    CSV_KEEP_CARRIAGE_RETURN: (False, "Spark's CSV reader drops carriage returns"),
}
"""Keys connect-lite takes only at their default: another value is a validate error."""


@dataclass(frozen=True)
class SpoolConfig:
    """A connector's or task's parsed settings."""

    kind: Format
    values: dict[str, Any]
    key_schema: dict[str, Any] | None
    value_schema: dict[str, Any] | None

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    @property
    def cleanup(self) -> Cleanup:
        return Cleanup(self.values[CLEANUP_POLICY])

    @property
    def timestamp_mode(self) -> TimestampMode:
        return TimestampMode(self.values.get(TIMESTAMP_MODE, TimestampMode.PROCESS_TIME.value))

    @property
    def generates(self) -> bool:
        """Whether the connector generates missing schemas at start."""
        return (
            self.kind.schemas
            and self.values[GENERATION_ENABLED]
            and (self.key_schema is None or self.value_schema is None)
        )

    @staticmethod
    def parse(
        kind: Format, props: Mapping[str, str], *, schemas_needed: bool = True
    ) -> SpoolConfig:
        """Parse and check across keys; ConfigError names each key at fault.
        ``schemas_needed``: a task needs both schemas (the connector may generate them)."""
        values = config_def(kind).parse(props)
        config, errors = _checked(kind, values, schemas_needed)
        if errors:
            raise ConfigError("\n".join(m for ms in errors.values() for m in ms), errors)
        assert config is not None
        return config


def cross_field_errors(
    kind: Format, values: dict[str, Any], schemas_needed: bool = False
) -> dict[str, list[str]]:
    """The errors across keys of values that each passed their own checks."""
    return _checked(kind, values, schemas_needed)[1]


def _checked(
    kind: Format, values: dict[str, Any], schemas_needed: bool
) -> tuple[SpoolConfig | None, dict[str, list[str]]]:
    errors: dict[str, list[str]] = {}

    def fail(key: str, message: str) -> None:
        errors.setdefault(key, []).append(message)

    _check_values(kind, values, fail)
    key_schema = value_schema = None
    if kind.schemas:
        key_schema, value_schema = _check_schemas(kind, values, schemas_needed, errors, fail)
    config = None if errors else SpoolConfig(kind, values, key_schema, value_schema)
    return config, errors


def _check_values(kind: Format, values: dict[str, Any], fail: Any) -> None:
    for key, (default, why) in UNSUPPORTED_VALUES.items():
        if key in values and values[key] != default:
            fail(key, f"{key}={values[key]} is not supported by connect-lite: {why}")
    charset = values.get(FILE_CHARSET)
    if (
        charset
        and _charset(FILE_CHARSET, charset) is None
        and codecs.lookup(charset).name not in UTF8
    ):
        fail(
            FILE_CHARSET,
            f"{FILE_CHARSET}={charset} is not supported: Spark's text reader reads UTF-8 only",
        )
    for key in (INPUT_PATH, ERROR_PATH):
        path = values.get(key)
        if path is not None and not os.path.isabs(path):
            fail(key, f"Invalid value {path} for configuration {key}: must be an absolute path")
    cleanup = values.get(CLEANUP_POLICY)
    finished = values.get(FINISHED_PATH) or ""
    if cleanup in (Cleanup.MOVE.value, Cleanup.MOVEBYDATE.value) and not os.path.isabs(finished):
        fail(
            FINISHED_PATH,
            f"Invalid value {finished} for configuration {FINISHED_PATH}: Must be an absolute "
            f"path. (It is required with {CLEANUP_POLICY}={cleanup}.)",
        )


def _check_schemas(
    kind: Format,
    values: dict[str, Any],
    schemas_needed: bool,
    errors: dict[str, list[str]],
    fail: Any,
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    parsed: dict[str, dict[str, Any] | None] = {}
    for key in (KEY_SCHEMA, VALUE_SCHEMA):
        try:
            parsed[key] = schemas.parse(values.get(key), key)
        except schemas.SchemaError as error:
            fail(key, str(error))
            parsed[key] = None
    key_schema, value_schema = parsed[KEY_SCHEMA], parsed[VALUE_SCHEMA]
    generating = values.get(GENERATION_ENABLED)
    for key, node in ((KEY_SCHEMA, key_schema), (VALUE_SCHEMA, value_schema)):
        if node is None and key not in errors and (schemas_needed or not generating):
            fail(key, f"'{key}' must be set if '{GENERATION_ENABLED}' = false.")
        elif node is not None and node["type"] != "STRUCT":
            fail(key, f"'{key}' must be a STRUCT schema")
    if generating:
        for key in (GENERATION_KEY_NAME, GENERATION_VALUE_NAME):
            if not values.get(key):
                fail(key, f"'{key}' must be set when '{GENERATION_ENABLED}' = true.")
    _check_fields(kind, key_schema, value_schema, values, fail)
    return key_schema, value_schema


def _check_fields(
    kind: Format,
    key_schema: dict[str, Any] | None,
    value_schema: dict[str, Any] | None,
    values: dict[str, Any],
    fail: Any,
) -> None:
    value_fields = {} if value_schema is None else {f.name: f for f in schemas.fields(value_schema)}
    if kind is Format.CSV:
        for node, key in ((value_schema, VALUE_SCHEMA), (key_schema, KEY_SCHEMA)):
            for field in [] if node is None else schemas.fields(node):
                if field.kind in ("NESTED", "BYTES"):
                    fail(
                        key,
                        f"'{key}': field {field.name} is {field.node['type']}, which "
                        "cannot be parsed from CSV text",
                    )
    if key_schema is not None and value_schema is not None:
        for field in schemas.fields(key_schema):
            twin = value_fields.get(field.name)
            if twin is not None and twin.node.get("type") != field.node.get("type"):
                fail(
                    KEY_SCHEMA,
                    f"'{KEY_SCHEMA}': field {field.name} has another type than the "
                    f"value field {field.name} it is copied from",
                )
    if values.get(TIMESTAMP_MODE) == TimestampMode.FIELD.value:
        name = values.get(TIMESTAMP_FIELD) or ""
        found = value_fields.get(name)
        if not name:
            fail(
                TIMESTAMP_FIELD, f"'{TIMESTAMP_FIELD}' must be set when '{TIMESTAMP_MODE}' = FIELD."
            )
        elif value_schema is not None and (
            found is None or found.kind != "TIMESTAMP" or found.optional
        ):
            fail(
                TIMESTAMP_FIELD,
                f"Field '{name}' must be present and set to a timestamp and cannot be optional.",
            )
