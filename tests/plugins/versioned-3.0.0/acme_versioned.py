"""A small plugin that exists at three versions: every class reports acme_helpers.VERSION.

Version 3.0.0 adds a ``since.v3`` key to the source connector and the transformation.

The source task emits numbered string records with source offsets (``{"position": next}``)
and resumes from its committed offset; the sink task appends what it got to ``RECEIVED``
and, when ``output.file`` is set, to that file as JSON lines.
"""

from __future__ import annotations

import dataclasses
import json
import re
import threading
import time
from typing import Any

import acme_helpers
from acme_helpers import VERSION, tag, untag
from acme_pkg import describe

from connect_lite.api import (
    ConfigDef,
    Converter,
    HeaderConverter,
    Importance,
    Predicate,
    Schema,
    SchemaAndValue,
    SinkConnector,
    SinkRecord,
    SinkTask,
    SourceConnector,
    SourceRecord,
    SourceTask,
    Transformation,
    Type,
)

RECEIVED: list[dict[str, Any]] = []
_lock = threading.Lock()


def helper_version() -> str:
    """The version of the helper module this copy imported (by both import forms)."""
    assert acme_helpers.VERSION == VERSION
    return acme_helpers.VERSION


def package_description() -> str:
    return describe()


def _task_configs(config: dict[str, str], max_tasks: int) -> list[dict[str, str]]:
    count = min(max_tasks, int(config.get("tasks", "1")))
    return [{**config, "task.id": str(i)} for i in range(count)]


class VersionedSourceConnector(SourceConnector):
    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return (
            ConfigDef()
            .define("topic", Type.STRING, "versioned", None, Importance.HIGH, "Target topic.")
            .define("max.records", Type.LONG, -1, None, Importance.LOW, "-1: no limit.")
            .define("batch.size", Type.INT, 10, None, Importance.LOW, "Records per poll.")
            .define("since.v3", Type.STRING, "", None, Importance.LOW, "Only in version 3.")
        )

    def start(self, config: dict[str, str]) -> None:
        self._config = dict(config)

    def task_class(self) -> type[Any]:
        return VersionedSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return _task_configs(self._config, max_tasks)

    def stop(self) -> None:
        pass


class VersionedSourceTask(SourceTask):
    def version(self) -> str:
        return VERSION

    def start(self, config: dict[str, str]) -> None:
        self.topic = config.get("topic", "versioned")
        self.partition = {"task": config.get("task.id", "0")}
        self.limit = int(config.get("max.records", "-1"))
        self.batch = int(config.get("batch.size", "10"))
        self.position = 0
        context = getattr(self, "context", None)
        if context is not None:
            offset = context.offset_storage_reader().offset(self.partition)
            if offset:
                self.position = int(offset["position"])

    def poll(self) -> list[SourceRecord] | None:
        end = self.position + self.batch
        if self.limit >= 0:
            end = min(end, self.limit)
        if end <= self.position:
            time.sleep(0.05)  # idle: nothing left to emit
            return None
        records = [self._record(n) for n in range(self.position, end)]
        self.position = end
        return records

    def _record(self, n: int) -> SourceRecord:
        return SourceRecord(
            source_partition=self.partition,
            source_offset={"position": n + 1},
            topic=self.topic,
            key=str(n),
            key_schema=Schema.STRING_SCHEMA,
            value=f"record-{n}",
            value_schema=Schema.STRING_SCHEMA,
        )

    def stop(self) -> None:
        pass


class VersionedSinkConnector(SinkConnector):
    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return ConfigDef().define(
            "output.file", Type.STRING, None, None, Importance.LOW, "Append records here."
        )

    def start(self, config: dict[str, str]) -> None:
        self._config = dict(config)

    def task_class(self) -> type[Any]:
        return VersionedSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return _task_configs(self._config, max_tasks)

    def stop(self) -> None:
        pass


class VersionedSinkTask(SinkTask):
    def version(self) -> str:
        return VERSION

    def start(self, config: dict[str, str]) -> None:
        self.output = config.get("output.file")

    def put(self, records: list[SinkRecord]) -> None:
        rows = [self._row(r) for r in records]
        with _lock:
            RECEIVED.extend(rows)
            if self.output and rows:
                with open(self.output, "a", encoding="utf-8") as out:
                    out.writelines(json.dumps(row) + "\n" for row in rows)

    @staticmethod
    def _row(record: SinkRecord) -> dict[str, Any]:
        return {
            "topic": record.topic,
            "partition": record.kafka_partition,
            "offset": record.kafka_offset,
            "key": record.key if record.key is None else str(record.key),
            "value": record.value if record.value is None else str(record.value),
            "version": VERSION,
        }

    def stop(self) -> None:
        pass


class VersionedConverter(Converter):
    """Writes ``<version>:<str(value)>``; reads back only what the same version wrote."""

    def version(self) -> str:
        return VERSION

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        return None if value is None else tag(value).encode("utf-8")

    def to_connect_data(self, topic: str, value: bytes | None) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, None)
        return SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, untag(value.decode("utf-8")))


class VersionedHeaderConverter(HeaderConverter):
    """Writes header values as ``<version>:<str(value)>``; reads back only its own version's."""

    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return ConfigDef()

    def configure(self, config: dict[str, Any]) -> None:
        pass

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        return None if value is None else tag(value).encode("utf-8")

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, None)
        return SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, untag(value.decode("utf-8")))


class VersionedTransformation(Transformation):
    """Adds a header ``header.name`` (default ``acme.version``) holding this version."""

    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return (
            ConfigDef()
            .define(
                "header.name", Type.STRING, "acme.version", None, Importance.LOW, "Header to set."
            )
            .define("since.v3", Type.INT, 0, None, Importance.LOW, "Only in version 3.")
        )

    def configure(self, config: dict[str, str]) -> None:
        self.header = config.get("header.name", "acme.version")

    def apply(self, record: Any) -> Any:
        headers = record.headers.add(getattr(self, "header", "acme.version"), VERSION)
        return dataclasses.replace(record, headers=headers)


class VersionedPredicate(Predicate):
    """True for records whose topic matches ``pattern`` (default: every topic)."""

    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return ConfigDef().define(
            "pattern", Type.STRING, ".*", None, Importance.LOW, "Topic regex."
        )

    def configure(self, config: dict[str, str]) -> None:
        self.pattern = re.compile(config.get("pattern", ".*"))

    def test(self, record: Any) -> bool:
        pattern = getattr(self, "pattern", None) or re.compile(".*")
        return bool(pattern.fullmatch(record.topic))
