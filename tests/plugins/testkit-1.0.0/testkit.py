"""Connectors for integration tests: scripted failures, sink rewinds and too many tasks."""

from __future__ import annotations

import dataclasses
import json
import re
import threading
import time
from typing import Any

from connect_lite.api import (
    ConfigData,
    ConfigDef,
    ConfigProvider,
    Converter,
    Importance,
    Predicate,
    RecordMetadata,
    RetriableError,
    Schema,
    SchemaAndValue,
    SinkConnector,
    SinkRecord,
    SinkTask,
    SourceConnector,
    SourceRecord,
    SourceTask,
    TopicPartition,
    Transformation,
    Type,
)

VERSION = "1.0.0"


def _define_alter_keys(config: ConfigDef) -> ConfigDef:
    return config.define(
        "alter.offsets",
        Type.STRING,
        "false",
        doc="What alter_offsets does: true, false, unsupported (NotImplementedError), error.",
    ).define("alter.log", Type.STRING, None, doc="File each alter_offsets call is logged to.")


def scripted_alter_offsets(config: dict[str, str], offsets: dict[Any, Any]) -> bool:
    """The KIP-875 hook of both test connectors, scripted by ``alter.offsets``."""
    if config.get("alter.log"):
        rows = [{"partition": _jsonable(p), "offset": o} for p, o in offsets.items()]
        rows.sort(key=lambda row: json.dumps(row, sort_keys=True))
        with open(config["alter.log"], "a", encoding="utf-8") as out:
            out.write(json.dumps(rows) + "\n")
    mode = config.get("alter.offsets", "false")
    if mode == "unsupported":
        raise NotImplementedError("scripted: no external offsets")
    if mode == "error":
        raise RuntimeError("scripted alter_offsets failure")
    return mode == "true"


def _jsonable(partition: Any) -> Any:
    if isinstance(partition, TopicPartition):
        return [partition.topic, partition.partition]
    return dict(partition)


class ScriptedSourceConnector(SourceConnector):
    """Emits ``value-N`` records; ``fail.on.start`` / ``task.fail.after`` script failures."""

    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return _define_alter_keys(
            ConfigDef()
            .define("topic", Type.STRING, doc="Target topic.", importance=Importance.HIGH)
            .define("max.records", Type.LONG, -1, doc="Stop emitting after this many; -1: never.")
            .define("task.fail.after", Type.LONG, -1, doc="poll() raises after this many records.")
            .define("fail.on.start", Type.BOOLEAN, False, doc="start() raises.")
            .define("tasks", Type.INT, 1, doc="How many task configs to generate.")
            .define("commit.log", Type.STRING, None, doc="File that commit calls are logged to.")
            .define("poll.interval.ms", Type.LONG, 0, doc="Pause before each poll() returns.")
            .define("value.prefix", Type.STRING, "value-", doc="Record values are prefix + N.")
            .define("secret", Type.PASSWORD, None, doc="A password; unused.")
            .define("validate.delay.ms", Type.LONG, 0, doc="validate() sleeps this long first.")
            .define("validate.log", Type.STRING, None, doc="File validate() appends a line to.")
        )

    def validate(self, config: dict[str, str]) -> None:
        """Slow when asked, as a plugin that checks a host that does not answer."""
        if config.get("validate.log"):
            with open(config["validate.log"], "a", encoding="utf-8") as log:
                log.write("validating\n")
        time.sleep(int(config.get("validate.delay.ms", "0")) / 1000)

    def alter_offsets(self, connector_config: dict[str, str], offsets: dict[Any, Any]) -> bool:
        return scripted_alter_offsets(connector_config, offsets)

    def start(self, config: dict[str, str]) -> None:
        if config.get("fail.on.start", "false") == "true":
            raise RuntimeError("scripted connector start failure")
        self._config = dict(config)

    def task_class(self) -> type[Any]:
        return ScriptedSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        count = int(self._config.get("tasks", "1"))
        return [{**self._config, "task.index": str(i)} for i in range(count)]

    def stop(self) -> None:
        pass


class ScriptedSourceTask(SourceTask):
    def version(self) -> str:
        return VERSION

    def start(self, config: dict[str, str]) -> None:
        self.topic = config["topic"]
        self.partition = {"task": config.get("task.index", "0")}
        self.limit = int(config.get("max.records", "-1"))
        self.fail_after = int(config.get("task.fail.after", "-1"))
        self._stopped = threading.Event()
        stored = self.context.offset_storage_reader().offset(self.partition)
        self.next = int(stored["next"]) if stored else 0
        self.commit_log = config.get("commit.log")
        self.interval = int(config.get("poll.interval.ms", "0")) / 1000
        self.prefix = config.get("value.prefix", "value-")

    def _log(self, line: str) -> None:
        if self.commit_log:
            with open(self.commit_log, "a", encoding="utf-8") as out:
                out.write(line + "\n")

    def commit(self) -> None:
        self._log("commit")

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        where = (
            "filtered"
            if metadata is None
            else f"{metadata.topic}/{metadata.partition}/{metadata.offset}"
        )
        self._log(f"record {record.value} {where}")

    def poll(self) -> list[SourceRecord] | None:
        if 0 <= self.fail_after <= self.next:
            raise RuntimeError(f"scripted task failure after {self.next} records")
        end = self.next + 100
        if self.limit >= 0:
            end = min(end, self.limit)
        if self.fail_after >= 0:
            end = min(end, self.fail_after)
        if end <= self.next:
            self._stopped.wait(0.1)
            return None
        if self.interval:
            self._stopped.wait(self.interval)
        records = [
            SourceRecord(
                self.partition,
                {"next": n + 1},
                self.topic,
                f"{self.prefix}{n}",
                key=str(n),
                kafka_partition=0,
                key_schema=Schema.STRING_SCHEMA,
                value_schema=Schema.STRING_SCHEMA,
            )
            for n in range(self.next, end)
        ]
        self.next = end
        return records

    def stop(self) -> None:
        self._stopped.set()


class DataFrameSourceConnector(ScriptedSourceConnector):
    """ScriptedSource's keys, with a task that implements only poll_dataframe."""

    def task_class(self) -> type[Any]:
        return DataFrameSourceTask


class DataFrameSourceTask(ScriptedSourceTask):
    """Each poll_dataframe is a frame of up to 100 rows (``max.records`` in all): a struct
    value {id, name}, the id as key, ``{"next": n + 1}`` as offset; ``retriable.once``
    raises RetriableError from its first poll."""

    poll = SourceTask.poll  # only poll_dataframe

    def start(self, config: dict[str, str]) -> None:
        super().start(config)
        self.retry_once = config.get("retriable.once") == "true"

    def poll_dataframe(self, spark: Any) -> Any:
        if self.retry_once:
            self.retry_once = False
            self._log("retriable")
            raise RetriableError("scripted: try again")
        end = self.next + 100 if self.limit < 0 else min(self.next + 100, self.limit)
        if end <= self.next:
            self._stopped.wait(0.1)
            return None
        partition = json.dumps(self.partition)
        rows = [
            (str(n), (n, f"{self.prefix}{n}"), partition, json.dumps({"next": n + 1}))
            for n in range(self.next, end)
        ]
        self.next = end
        return spark.createDataFrame(
            rows,
            "key string, value struct<id: bigint, name: string>, "
            "source_partition string, source_offset string",
        )


class RecordingSinkConnector(SinkConnector):
    """Writes every record it gets to ``output.file`` as a JSON line; can rewind on open."""

    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return _define_alter_keys(
            ConfigDef()
            .define("output.file", Type.STRING, doc="JSON lines file.", importance=Importance.HIGH)
            .define("rewind.to", Type.LONG, -1, doc="On first open, rewind partitions here.")
            .define("fail.on.put", Type.BOOLEAN, False, doc="put() raises.")
            .define(
                "replay.once.at", Type.LONG, -1, doc="Once an offset >= this is put, rewind to 0."
            )
            .define("retriable.failures", Type.INT, 0, doc="The first N puts raise RetriableError.")
            .define("retry.timeout.ms", Type.LONG, -1, doc="context.timeout before retrying.")
            .define("put.log", Type.STRING, None, doc="File each put call is logged to.")
        )

    def start(self, config: dict[str, str]) -> None:
        self._config = dict(config)

    def task_class(self) -> type[Any]:
        return RecordingSinkTask

    def alter_offsets(self, connector_config: dict[str, str], offsets: dict[Any, Any]) -> bool:
        return scripted_alter_offsets(connector_config, offsets)

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._config) for _ in range(max_tasks)]

    def stop(self) -> None:
        pass


class RecordingSinkTask(SinkTask):
    def version(self) -> str:
        return VERSION

    def start(self, config: dict[str, str]) -> None:
        self.path = config["output.file"]
        self.rewind_to = int(config.get("rewind.to", "-1"))
        self.fail = config.get("fail.on.put", "false") == "true"
        self.rewound: set[TopicPartition] = set()
        self.replay_at = int(config.get("replay.once.at", "-1"))
        self.retriable_failures = int(config.get("retriable.failures", "0"))
        self.retry_timeout_ms = int(config.get("retry.timeout.ms", "-1"))
        self.put_log = config.get("put.log")

    def _attempt(self, offsets: list[int]) -> None:
        """Log the call; raise the scripted failures."""
        if self.put_log and offsets:
            with open(self.put_log, "a", encoding="utf-8") as out:
                out.write(json.dumps(offsets) + "\n")
        if self.fail and offsets:
            raise RuntimeError("scripted put failure")
        if self.retriable_failures > 0 and offsets:
            self.retriable_failures -= 1
            if self.retry_timeout_ms >= 0:
                self.context.timeout(self.retry_timeout_ms)
            raise RetriableError("scripted retriable put failure")

    def open(self, partitions: list[TopicPartition]) -> None:
        if self.rewind_to < 0:
            return
        for tp in partitions:
            if tp not in self.rewound:
                self.rewound.add(tp)
                self.context.offset(tp, self.rewind_to)

    def put(self, records: list[SinkRecord]) -> None:
        self._attempt([r.kafka_offset for r in records])
        with open(self.path, "a", encoding="utf-8") as out:
            for r in records:
                row = {"topic": r.topic, "partition": r.kafka_partition, "offset": r.kafka_offset}
                out.write(json.dumps({**row, "key": r.key, "value": r.value}) + "\n")
        if self.replay_at >= 0 and any(r.kafka_offset >= self.replay_at for r in records):
            self.replay_at = -1
            for tp in {TopicPartition(r.topic, r.kafka_partition) for r in records}:
                self.context.offset(tp, 0)

    def stop(self) -> None:
        pass


class DataFrameSinkConnector(RecordingSinkConnector):
    """RecordingSink's keys, with a task that implements only put_dataframe."""

    def task_class(self) -> type[Any]:
        return DataFrameSinkTask


class DataFrameSinkTask(RecordingSinkTask):
    """Writes each row of the DataFrames it gets as a JSON line, with the columns' types."""

    put = SinkTask.put  # only put_dataframe

    def put_dataframe(self, df: Any) -> None:
        rows = df.orderBy("offset").collect()
        self._attempt([row["offset"] for row in rows])
        types = dict(df.dtypes)
        with open(self.path, "a", encoding="utf-8") as out:
            for row in rows:
                line = {name: row[name] for name in ("topic", "partition", "offset", "key")}
                line["value"] = _plain(row["value"])
                line["types"] = {"key": types["key"], "value": types["value"]}
                if "value_struct" in types:
                    line["value_struct"] = _plain(row["value_struct"])
                line["headers"] = {h["key"]: bytes(h["value"]).decode() for h in row["headers"]}
                line["timestamp"] = None if row["timestamp"] is None else str(row["timestamp"])
                out.write(json.dumps(line, default=str) + "\n")


def _plain(value: Any) -> Any:
    """A Spark Row as a dict, recursively."""
    if hasattr(value, "asDict"):
        return {k: _plain(v) for k, v in value.asDict().items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


class TooManyTasksConnector(ScriptedSourceConnector):
    """Generates one task config more than tasks.max."""

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._config) for _ in range(max_tasks + 1)]


class UppercaseTransformation(Transformation[Any]):
    """Upper-cases string values. (``api.key`` is a PASSWORD key it never uses.)"""

    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return ConfigDef().define("api.key", Type.PASSWORD, None, doc="Unused.")

    def apply(self, record: Any) -> Any:
        if isinstance(record.value, str):
            return dataclasses.replace(record, value=record.value.upper())
        return record


class DropAllTransformation(Transformation[Any]):
    """Drops every record it is applied to (use with a predicate)."""

    def version(self) -> str:
        return VERSION

    def apply(self, record: Any) -> Any:
        return None


class ValueMatchesPredicate(Predicate[Any]):
    """True when the string value fully matches ``pattern``."""

    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return ConfigDef().define("pattern", Type.STRING, doc="A regular expression.")

    def configure(self, config: dict[str, str]) -> None:
        self.pattern = re.compile(config["pattern"])

    def test(self, record: Any) -> bool:
        return isinstance(record.value, str) and self.pattern.fullmatch(record.value) is not None


class ErrantReportingSinkConnector(RecordingSinkConnector):
    """A RecordingSink whose task reports records whose value equals ``errant.marker``."""

    def config(self) -> ConfigDef:
        return (
            super()
            .config()
            .define("errant.marker", Type.STRING, "bad", doc="Values reported as errant.")
        )

    def task_class(self) -> type[Any]:
        return ErrantReportingSinkTask


class ErrantReportingSinkTask(RecordingSinkTask):
    """Writes good records like RecordingSinkTask; hands marked ones to the errant reporter.

    Without a reporter (no DLQ and no error log configured) a marked record raises."""

    def start(self, config: dict[str, str]) -> None:
        super().start(config)
        self.marker = config.get("errant.marker", "bad")

    def put(self, records: list[SinkRecord]) -> None:
        reporter = self.context.errant_record_reporter()
        good = []
        for record in records:
            if record.value != self.marker:
                good.append(record)
            elif reporter is None:
                raise RuntimeError(f"no errant record reporter for {record.kafka_offset}")
            else:
                error = ValueError(f"marked errant at offset {record.kafka_offset}")
                reporter.report(record, error)
        super().put(good)


class FlakyStringConverter(Converter):
    """UTF-8 strings; reading a value fails with RetriableError on its first try per process.

    Exercises ``errors.retry.timeout``: with retries every record arrives, without them the
    first record fails."""

    _seen: set[bytes | None] = set()
    _lock = threading.Lock()

    def version(self) -> str:
        return VERSION

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        return None if value is None else str(value).encode()

    def to_connect_data(self, topic: str, value: bytes | None) -> SchemaAndValue:
        with self._lock:
            first = value not in self._seen
            self._seen.add(value)
        if first:
            raise RetriableError(f"not ready for {value!r} yet")
        return SchemaAndValue(
            Schema.OPTIONAL_STRING_SCHEMA, None if value is None else value.decode()
        )


class CountingConfigProvider(ConfigProvider):
    """``${counting:name}`` is ``name-N``: N counts this instance's get() calls, so a
    re-resolution shows. ``ttl.ms`` gives the values that time to live."""

    def version(self) -> str:
        return VERSION

    def configure(self, config: dict[str, str]) -> None:
        self.ttl_ms = int(config["ttl.ms"]) if "ttl.ms" in config else None
        self.calls = 0

    def get(self, path: str, keys: set[str] | None = None) -> ConfigData:
        self.calls += 1
        return ConfigData({key: f"{key}-{self.calls}" for key in keys or ()}, self.ttl_ms)
