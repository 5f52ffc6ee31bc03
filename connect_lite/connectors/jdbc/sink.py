"""The JDBC sink connector, under Confluent's class name: each batch is written by the Spark
executors (``put_dataframe``), one Kafka partition's rows in one transaction, in offset order;
offsets are committed only once every transaction of the batch committed."""

from __future__ import annotations

import functools
import json
import logging
from typing import Any

from connect_lite.api import (
    FRAME_SCHEMA_METADATA,
    ConfigDef,
    ConnectError,
    DataError,
    RetriableError,
    SinkConnector,
    SinkRecord,
    SinkTask,
    TopicPartition,
)

from .config import (
    SinkSettings,
    check_across,
    cross_field_errors,
    sink_config_def,
    warn_confluent_keys,
)
from .dialects import EPOCH_UNIT, TIMESTAMP
from .fields import Layout, layout
from .writer import DATA, RECORD, RESULT_DDL, TRANSIENT, WritePlan, write_batches

log = logging.getLogger(__name__)

VERSION = "1.0.0"
"""This connector's version; its keys and behaviour follow Confluent's 10.9."""

_DEF = sink_config_def()


class JdbcSinkConnector(SinkConnector):
    """Kafka topics into database tables, with Confluent's JDBC sink keys and semantics."""

    __connect_class_name__ = "io.confluent.connect.jdbc.JdbcSinkConnector"

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return _DEF

    def validate(self, config: dict[str, str]) -> None:
        check_across(_DEF, config, cross_field_errors)

    def start(self, config: dict[str, str]) -> None:
        SinkSettings.parse(config)
        warn_confluent_keys(config, config.get("name", "jdbc-sink"))
        self._props = dict(config)

    def task_class(self) -> type[SinkTask]:
        return JdbcSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def stop(self) -> None:
        """Nothing runs in the connector itself."""

    def alter_offsets(self, connector_config: dict[str, str], offsets: dict[Any, Any]) -> bool:
        """The offsets live in the consumer group only (Kafka's default for sinks)."""
        return False


class JdbcSinkTask(SinkTask):
    """Writes each batch from the executors; see the module's docstring."""

    __connect_class_name__ = "io.confluent.connect.jdbc.sink.JdbcSinkTask"

    def __init__(self) -> None:
        self._settings: SinkSettings | None = None
        self._written: dict[tuple[str, int], int] = {}
        self._failures = 0

    def version(self) -> str:
        return VERSION

    def start(self, config: dict[str, str]) -> None:
        self._settings = SinkSettings.parse(config)

    def open(self, partitions: list[TopicPartition]) -> None:
        self._written.clear()  # a new assignment starts from the group's offsets

    def put(self, records: list[Any]) -> None:
        raise NotImplementedError("JdbcSinkTask writes DataFrames (put_dataframe)")

    def put_dataframe(self, df: Any) -> None:
        settings = self._settings
        assert settings is not None
        forms = _column_forms(df.schema.jsonValue())
        key_form, value_form = forms.get("key"), forms.get("value")
        value_schemaless = value_form is None or value_form.get("type") not in ("struct", "string")
        if not value_schemaless and value_form is not None and value_form["type"] == "string":
            _check_string_value(settings)
        if value_form is not None and settings.timestamp_fields:
            value_form = _epoch_fields(value_form, settings)
        if value_schemaless and not settings.delete_enabled:  # each record is refused
            columns = Layout((), (), ())
        else:
            columns = self._layout(key_form, None if value_schemaless else value_form)
        reporter = self.context.errant_record_reporter()
        plan = WritePlan(
            settings,
            columns,
            value_schemaless,
            key_form is None,
            dict(self._written),
            tolerate=reporter is not None,
        )
        results = df.mapInArrow(functools.partial(write_batches, plan), RESULT_DDL).collect()
        transient = [r for r in results if r["kind"] == TRANSIENT]
        failed = [r for r in results if r["kind"] == DATA]
        for r in results:
            if not r["kind"]:
                self._written[(r["topic"], r["partition"])] = r["last"]
            elif r["kind"] == RECORD and reporter is not None:  # refused alone: reported
                record = SinkRecord(r["topic"], r["partition"], r["last"], None, None)
                reporter.report(record, DataError(r["message"]))
        if failed:
            first = failed[0]
            raise DataError(
                f"Failed to write to the database (topic {first['topic']}, partition "
                f"{first['partition']}): {first['message']}"
            )
        if transient:
            self._failures += 1
            first = transient[0]
            self.context.timeout(settings.retry_backoff_ms)
            log.warning(
                "Write of %d partition(s) failed (%d in a row, max.retries=%d); the batch comes "
                "again in %d ms: %s",
                len(transient), self._failures, settings.max_retries, settings.retry_backoff_ms,
                first["message"],
            )  # fmt: skip
            raise RetriableError(f"The database did not take the batch: {first['message']}")
        self._failures = 0
        self._written.clear()  # only a redelivery of this call may skip what it wrote

    def _layout(self, key_form: dict[str, Any] | None, value_form: dict[str, Any] | None) -> Layout:
        settings = self._settings
        assert settings is not None
        try:
            return layout(
                settings.pk_mode,
                settings.pk_fields,
                settings.fields_whitelist,
                key_form,
                value_form,
                settings.table_format,
                settings.string_column,
            )
        except ConnectError as error:
            raise DataError(str(error)) from error

    def stop(self) -> None:
        """Connections live only as long as each write."""


def _column_forms(schema_json: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The ``connect.schema`` forms of the frame's key and value columns, where given."""
    forms = {}
    for field in schema_json.get("fields", []):
        text = (field.get("metadata") or {}).get(FRAME_SCHEMA_METADATA)
        if field.get("name") in ("key", "value") and text:
            forms[field["name"]] = json.loads(text) if isinstance(text, str) else text
    return forms


def _check_string_value(settings: SinkSettings) -> None:
    options = [
        name
        for name, given in (
            ("fields.whitelist", settings.fields_whitelist),
            ("timestamp.fields.list", settings.timestamp_fields),
        )
        if given
    ]
    if options:
        raise DataError(
            f"Sink connector '{settings.connector}' is configured with field-level options that "
            f"are not applicable to String values: {', '.join(options)}. Remove these options, "
            "or have the upstream producer emit Struct values instead."
        )


def _epoch_fields(form: dict[str, Any], settings: SinkSettings) -> dict[str, Any]:
    """The value's form with each ``timestamp.fields.list`` field (INT64, or STRING holding a
    number) written as a Timestamp of epoch micro- or nanoseconds."""
    unit = "ns" if settings.timestamp_nanos else "us"
    fields = []
    for field in form.get("fields") or []:
        if field.get("field") in settings.timestamp_fields and field.get("type") in (
            "int64",
            "string",
        ):
            field = {**field, "name": TIMESTAMP, EPOCH_UNIT: unit}
        fields.append(field)
    return {**form, "fields": fields}
