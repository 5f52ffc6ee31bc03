"""One spool file as a frame of records, read and parsed by Spark's own readers: only
DataFrame methods and Spark SQL text (no pyspark import), as any plugin would.

``FileFrames.frame`` gives a file's rows with the columns ``poll_dataframe`` returns (key,
value, timestamp, headers, source_partition, source_offset) and ``_offset``, the record's
``offset``: CSV and lines count from 1, JSON and Parquet from 0. A CSV or JSON field is read
as text and parsed as connect-utils' parser parses it (``parser.timestamp.date.formats``
in ``parser.timestamp.timezone``, ``true`` in any case is true); a value that does not parse
or a missing required value raises in the job that reads the file (``raise_error``), so a bad
file is known before any of its records is produced.
"""

from __future__ import annotations

import codecs
import csv
import datetime as dt
import json
import os
from typing import Any

from connect_lite.api import FRAME_SCHEMA_METADATA

from . import schemas
from .config import (
    CSV_CHARSET,
    CSV_ESCAPE,
    CSV_HEADER,
    CSV_IGNORE_LEADING_WHITESPACE,
    CSV_NULL_INDICATOR,
    CSV_QUOTE,
    CSV_RFC_4180,
    CSV_SEPARATOR,
    TIMESTAMP_FIELD,
    TIMESTAMP_FORMATS,
    TIMESTAMP_TIMEZONE,
    Format,
    SpoolConfig,
    TimestampMode,
)
from .files import InputFile

QUOTED_EMPTY = "\u0001"
"""What Spark's CSV reader gives for a quoted empty field (its ``emptyValue``), so that it
can be told from an unquoted one (null)."""

_NULLS = {
    # csv.null.field.indicator: (unquoted empty, quoted empty) -> null?
    "NEITHER": (False, False),
    "EMPTY_SEPARATORS": (True, False),
    "EMPTY_QUOTES": (False, True),
    "BOTH": (True, True),
}

_NAMES = {
    "INT8": "Byte",
    "INT16": "Short",
    "INT32": "Integer",
    "INT64": "Long",
    "FLOAT32": "Float",
    "FLOAT64": "Double",
    "TIMESTAMP": "java.util.Date",
    "DATE": "java.util.Date",
}


class FileFrames:
    """Builds the frames of a connector's files."""

    def __init__(self, config: SpoolConfig) -> None:
        self.config = config
        self.kind = config.kind

    def frame(self, spark: Any, file: InputFile, index: int = 0) -> Any:
        """The file's parsed rows (lazy: nothing is read until a job runs): key, value, the
        timestamp if the records take one from the file, ``_file`` (``index``) and
        ``_offset``; ``records`` makes records of them."""
        raw, columns = self._read(spark, file)
        first = self.kind.first_offset
        if self.kind is Format.CSV and self.config[CSV_HEADER]:  # the header row is offset 0
            numbered = _numbered(raw, first - 1).filter(f"_offset >= {first}")
        else:
            numbered = _numbered(raw, first)
        if self.kind.schemas:
            return self._typed(numbered, columns, file, index)
        if self.kind is Format.LINES:
            value, declared = "value", {"type": "string", "optional": False}
        else:  # Parquet: its columns are the value's fields
            names = list(raw.columns)
            if not names:
                raise ValueError(f"{file.path} has no columns")
            value = (
                "named_struct("
                + ", ".join(f"{schemas.literal(n)}, {schemas.quote(n)}" for n in names)
                + ")"
            )
            declared = {"type": "struct", "optional": False}
        frame = numbered.selectExpr(
            "NULL AS key",  # no schema, as jcustenborder's schemaless records
            f"{value} AS value",
            *_parsed_columns(index, None),
        )
        return frame.withMetadata("value", {FRAME_SCHEMA_METADATA: declared})

    def records(self, parsed: Any, file: InputFile) -> Any:
        """Records of the file's parsed rows: with their headers, source partition and offset
        (built after the cache, which then holds only the parsed values)."""
        timestamp = ["timestamp"] if "timestamp" in parsed.columns else []
        return parsed.selectExpr(
            "key",
            "value",
            *timestamp,
            f"{_headers(file)} AS headers",
            f"{schemas.literal(json.dumps({'fileName': file.name}))} AS source_partition",
            "concat('{\"offset\":', _offset, '}') AS source_offset",
            "_offset",
        )

    # -- reading -------------------------------------------------------------------------

    def _read(self, spark: Any, file: InputFile) -> tuple[Any, dict[str, str | None]]:
        """The file as Spark reads it, and per value field the column that holds its text."""
        path = _glob_escaped(file.path)
        if self.kind is Format.LINES:
            return spark.read.text(path), {}
        if self.kind is Format.PARQUET:
            return spark.read.parquet(path), {}
        value_fields = schemas.fields(self.config.value_schema or {})
        if self.kind is Format.JSON:
            ddl = ", ".join(
                f"{schemas.quote(f.name)} "
                f"{schemas.spark_type(f.node) if f.kind == 'NESTED' else 'string'}"
                for f in value_fields
            )
            reader = spark.read.options(mode="FAILFAST")
            frame = reader.schema(ddl or "_empty string").json(path)
            return frame, {f.name: schemas.quote(f.name) for f in value_fields}
        return self._read_csv(spark, file, path, value_fields)

    def _read_csv(
        self, spark: Any, file: InputFile, path: str, value_fields: list[schemas.FieldSpec]
    ) -> tuple[Any, dict[str, str | None]]:
        config = self.config
        separator, quote = chr(config[CSV_SEPARATOR]), chr(config[CSV_QUOTE])
        escape = quote if config[CSV_RFC_4180] else chr(config[CSV_ESCAPE])
        header = config[CSV_HEADER]
        if header:
            names = header_row(file.path, separator, quote, config[CSV_CHARSET])
        else:
            names = [f.name for f in value_fields]
        width = max(1, len(names))
        ddl = ", ".join(f"_c{i} string" for i in range(width))
        reader = spark.read.options(
            sep=separator,
            quote=quote,
            escape=escape,
            header=False,  # read as row 0, then left out: Spark would check its names
            multiLine=True,  # quoted line breaks, as opencsv; a file is then one Spark task
            mode="FAILFAST",
            nullValue="\u0000",
            emptyValue=QUOTED_EMPTY,
            ignoreLeadingWhiteSpace=config[CSV_IGNORE_LEADING_WHITESPACE],
            ignoreTrailingWhiteSpace=False,
            encoding=config[CSV_CHARSET],
        )
        frame = reader.schema(ddl).csv(path)
        index: dict[str, str] = {}
        for i, name in enumerate(names):
            index.setdefault(name, f"_c{i}")
        nulls = _NULLS[config[CSV_NULL_INDICATOR]]
        columns: dict[str, str | None] = {}
        for field in value_fields:
            column = index.get(field.name)
            columns[field.name] = None if column is None else _csv_text(column, nulls)
        return frame, columns

    # -- typing --------------------------------------------------------------------------

    def _typed(
        self, numbered: Any, columns: dict[str, str | None], file: InputFile, index: int
    ) -> Any:
        config = self.config
        assert config.key_schema is not None and config.value_schema is not None
        value_fields = schemas.fields(config.value_schema)
        key_fields = schemas.fields(config.key_schema)
        typed = [
            f"{self._parsed(columns.get(f.name), f)} AS _v{i}" for i, f in enumerate(value_fields)
        ]
        stage = numbered.selectExpr("_offset", *typed)
        position = {f.name: i for i, f in enumerate(value_fields)}
        value = _struct([(f.name, f"_v{i}") for i, f in enumerate(value_fields)])
        key = _struct(
            [
                (
                    f.name,
                    f"_v{position[f.name]}"
                    if f.name in position
                    else f"CAST(NULL AS {schemas.spark_type(f.node)})",
                )
                for f in key_fields
            ]
        )
        timestamp = None
        mode = config.timestamp_mode
        if mode is TimestampMode.FIELD:
            timestamp = f"_v{position[config[TIMESTAMP_FIELD]]}"
        elif mode is TimestampMode.FILE_TIME:
            timestamp = f"timestamp_millis({file.modified_ms})"
        frame = stage.selectExpr(
            f"{key} AS key", f"{value} AS value", *_parsed_columns(index, timestamp)
        )
        return frame.withMetadata(
            "key", {FRAME_SCHEMA_METADATA: schemas.declaration(config.key_schema)}
        ).withMetadata("value", {FRAME_SCHEMA_METADATA: schemas.declaration(config.value_schema)})

    def _parsed(self, text: str | None, field: schemas.FieldSpec) -> str:
        """The SQL of a field's typed value, from the SQL of its text (None: no column)."""
        spark_type = schemas.spark_type(field.node)
        if text is None:
            text = "CAST(NULL AS STRING)"
        if field.kind == "NESTED":
            typed = text  # JSON: read typed by Spark's reader
        elif field.kind == "STRING":
            typed = text
        elif field.kind == "BOOLEAN":
            typed = f"(lower({text}) = 'true')"
        elif field.kind in ("TIMESTAMP", "DATE"):
            typed = self._time(text, field.kind)
        else:
            typed = f"try_cast({text} AS {spark_type})"
        where = f"field '{field.name}'"
        if field.optional:
            on_null = f"CAST(NULL AS {spark_type})"
        else:
            on_null = (
                "raise_error(concat("
                + schemas.literal(f"{where}: schema is not optional so input cannot be null ")
                + ", '(offset ', _offset, ')'))"
            )
        if field.kind in ("STRING", "BOOLEAN", "NESTED"):
            return f"CASE WHEN {text} IS NULL THEN {on_null} ELSE {typed} END"
        failure = (
            "raise_error(concat('Exception thrown while parsing data for ', "
            + schemas.literal(f"'{field.name}'")
            + ", '. linenumber=', _offset, ': Could not parse ''', "
            + text
            + ", ''' to ', "
            + schemas.literal(f"'{_NAMES.get(field.kind, field.kind)}'")
            + "))"
        )
        return (
            f"CASE WHEN {text} IS NULL THEN {on_null} "
            f"WHEN {typed} IS NULL THEN {failure} ELSE {typed} END"
        )

    def _time(self, text: str, kind: str) -> str:
        formats = self.config[TIMESTAMP_FORMATS] or []
        parsed = [f"try_to_timestamp({text}, {schemas.literal(f)})" for f in formats]
        if not parsed:
            wall = "CAST(NULL AS TIMESTAMP)"
        else:
            wall = parsed[0] if len(parsed) == 1 else f"coalesce({', '.join(parsed)})"
        if kind == "DATE":
            return f"to_date({wall})"
        zone = schemas.literal(self.config[TIMESTAMP_TIMEZONE])
        stamp = f"to_utc_timestamp({wall}, {zone})"
        if self.kind is Format.JSON:  # a JSON number is epoch milliseconds
            return (
                f"CASE WHEN {text} RLIKE '^-?[0-9]+$' "
                f"THEN timestamp_millis(CAST({text} AS BIGINT)) ELSE {stamp} END"
            )
        return stamp


def _parsed_columns(index: int, timestamp: str | None) -> list[str]:
    columns = [f"{index} AS _file", "_offset"]
    if timestamp is not None:
        columns.insert(0, f"{timestamp} AS timestamp")
    return columns


def _numbered(raw: Any, first: int) -> Any:
    """The rows with ``_offset``, counted from ``first`` in file order."""
    if raw.rdd.getNumPartitions() <= 1:
        return raw.selectExpr("*", f"monotonically_increasing_id() + {first} AS _offset")
    return (
        raw.selectExpr("*", "monotonically_increasing_id() AS _seq")
        .selectExpr("*", f"row_number() OVER (ORDER BY _seq) + {first - 1} AS _offset")
        .drop("_seq")
    )


def _struct(fields: list[tuple[str, str]]) -> str:
    if not fields:
        return "struct()"
    return "named_struct(" + ", ".join(f"{schemas.literal(n)}, {e}" for n, e in fields) + ")"


def _csv_text(column: str, nulls: tuple[bool, bool]) -> str:
    """A CSV field's text with csv.null.field.indicator applied: Spark gives null for an
    unquoted empty field and QUOTED_EMPTY for a quoted one."""
    unquoted = "CAST(NULL AS STRING)" if nulls[0] else "''"
    quoted = "CAST(NULL AS STRING)" if nulls[1] else "''"
    return (
        f"(CASE WHEN {column} IS NULL THEN {unquoted} "
        f"WHEN {column} = {schemas.literal(QUOTED_EMPTY)} THEN {quoted} ELSE {column} END)"
    )


def header_row(path: str, separator: str, quote: str, charset: str) -> list[str]:
    """A CSV file's first row (read by Python: its field names); [] for an empty file."""
    opener: Any = open
    if path.endswith(".gz"):
        import gzip

        opener = gzip.open
    elif path.endswith(".bz2"):
        import bz2

        opener = bz2.open
    with opener(path, "rt", encoding=codecs.lookup(charset).name, newline="") as stream:
        row = next(csv.reader(stream, delimiter=separator, quotechar=quote), None)
    return list(row or [])


def header_bytes(file: InputFile) -> dict[str, str | None]:
    """The file's header values as text (SimpleHeaderConverter's form), all but file.offset."""
    name = file.name
    dot = name.rfind(".")
    modified = dt.datetime.fromtimestamp(file.modified_ms / 1000, dt.UTC)
    parent = os.path.basename(os.path.dirname(file.path)) or None
    return {
        "file.name": name,
        "file.name.without.extension": name if dot < 0 else name[:dot],
        "file.path": os.path.abspath(file.path),
        "file.parent.dir.name": parent,
        "file.length": str(file.length),
        "file.last.modified": modified.strftime("%Y-%m-%dT%H:%M:%S.")
        + f"{modified.microsecond // 1000:03d}Z",
        "file.relative.path": file.relative,
    }


def _headers(file: InputFile) -> str:
    entries = []
    for key, text in header_bytes(file).items():
        entries.append(_header(key, "NULL" if text is None else schemas.literal(text)))
        if key == "file.length":
            entries.append(_header("file.offset", "CAST(_offset AS STRING)"))
    return "array(" + ", ".join(entries) + ")"


def _header(key: str, text: str) -> str:
    """A header entry: its key, and the SQL of its text, as bytes."""
    return f"named_struct('key', {schemas.literal(key)}, 'value', CAST({text} AS BINARY))"


def _glob_escaped(path: str) -> str:
    """A path Hadoop reads as itself, not as a glob."""
    return "".join("\\" + c if c in "\\*?[]{}" else c for c in path)
