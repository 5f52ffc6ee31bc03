"""The SpoolDir connectors' keys and checks: jcustenborder's defaults and rules, and a clear
error naming each key connect-lite cannot honour."""

from __future__ import annotations

import json
from typing import Any

import pytest

from connect_lite.api import ConfigError
from connect_lite.connectors.spooldir import schemas
from connect_lite.connectors.spooldir.config import Format, SpoolConfig
from connect_lite.connectors.spooldir.source import (
    SpoolDirCsvSourceConnector,
    SpoolDirLineDelimitedSourceConnector,
)

VALUE = {
    "name": "com.example.User",
    "type": "STRUCT",
    "isOptional": False,
    "fieldSchemas": {
        "id": {"type": "INT64", "isOptional": False},
        "at": {"name": schemas.TIMESTAMP, "type": "INT64", "version": 1, "isOptional": False},
        "maybe": {"name": schemas.TIMESTAMP, "type": "INT64", "isOptional": True},
    },
}
KEY = {"type": "STRUCT", "fieldSchemas": {"id": {"type": "INT64"}}}


def csv(**extra: Any) -> dict[str, str]:
    return {
        "topic": "t",
        "input.path": "/tmp/in",
        "finished.path": "/tmp/done",
        "error.path": "/tmp/err",
        "input.file.pattern": r".*\.csv",
        "key.schema": json.dumps(KEY),
        "value.schema": json.dumps(VALUE),
        **{k: str(v) for k, v in extra.items()},
    }


def errors_of(props: dict[str, str], connector: Any = SpoolDirCsvSourceConnector) -> dict[str, Any]:
    """Each key's own errors (the ConfigDef), then the connector's checks across keys, as
    the worker's validate runs them."""
    plugin = connector()
    errors = {k: cv.errors for k, cv in plugin.config().validate(props).items() if cv.errors}
    try:
        plugin.validate(props)
    except ConfigError as error:
        for key, messages in error.errors.items():
            errors.setdefault(key, []).extend(messages)
    return errors


def test_jcustenborders_defaults() -> None:
    config = SpoolConfig.parse(Format.CSV, csv())
    assert config["batch.size"] == 1000 and config["cleanup.policy"] == "MOVE"
    assert config["halt.on.error"] is True and config["processing.file.extension"] == ".PROCESSING"
    assert config["csv.separator.char"] == 44 and config["csv.quote.char"] == 34
    assert config["files.sort.attributes"] == ["NameAsc"]
    assert config["parser.timestamp.date.formats"] == [
        "yyyy-MM-dd'T'HH:mm:ss",
        "yyyy-MM-dd' 'HH:mm:ss",
    ]
    assert config.timestamp_mode.value == "PROCESS_TIME"
    assert config.value_schema == VALUE and not config.generates


def test_a_complete_config_validates() -> None:
    assert errors_of(csv()) == {}


@pytest.mark.parametrize(
    ("extra", "key", "message"),
    [
        ({"finished.path": ""}, "finished.path", "Must be an absolute path"),
        ({"cleanup.policy": "MOVEBYDATE", "finished.path": "rel"}, "finished.path", "absolute"),
        ({"cleanup.policy": "SOMETIMES"}, "cleanup.policy", "String must be one of"),
        ({"input.path": "relative/dir"}, "input.path", "must be an absolute path"),
        ({"key.schema": ""}, "key.schema", "'key.schema' must be set if"),
        ({"value.schema": "{"}, "value.schema", "Could not read schema from 'value.schema'"),
        (
            {"value.schema": json.dumps({"type": "STRUCT", "optional": True})},
            "value.schema",
            "unknown property optional",
        ),
        (
            {"value.schema": json.dumps({"type": "STRING"})},
            "value.schema",
            "must be a STRUCT schema",
        ),
        (
            {
                "value.schema": json.dumps(
                    {
                        "type": "STRUCT",
                        "fieldSchemas": {
                            "p": {"name": schemas.DECIMAL, "type": "BYTES", "parameters": {}}
                        },
                    }
                )
            },
            "value.schema",
            "is a Decimal, which connect-lite's SpoolDir source does not support yet",
        ),
        (
            {
                "value.schema": json.dumps(
                    {
                        "type": "STRUCT",
                        "fieldSchemas": {"b": {"type": "ARRAY", "valueSchema": {"type": "STRING"}}},
                    }
                )
            },
            "value.schema",
            "cannot be parsed from CSV text",
        ),
        (
            {
                "key.schema": json.dumps(
                    {"type": "STRUCT", "fieldSchemas": {"id": {"type": "STRING"}}}
                )
            },
            "key.schema",
            "has another type than the value field id",
        ),
        ({"timestamp.mode": "FIELD"}, "timestamp.field", "must be set when"),
        (
            {"timestamp.mode": "FIELD", "timestamp.field": "maybe"},
            "timestamp.field",
            "Field 'maybe' must be present and set to a timestamp and cannot be optional.",
        ),
        ({"csv.skip.lines": "1"}, "csv.skip.lines", "csv.skip.lines=1 is not supported"),
        ({"csv.strict.quotes": "true"}, "csv.strict.quotes", "is not supported"),
        ({"csv.file.charset": "klingon"}, "csv.file.charset", "not a known charset"),
        ({"input.file.pattern": "(["}, "input.file.pattern", "not a regular expression"),
        ({"processing.file.extension": "PROCESSING"}, "processing.file.extension", r"\..+"),
        ({"files.sort.attributes": "NameAsc,Size"}, "files.sort.attributes", "Size"),
        ({"parser.timestamp.timezone": "Mars/Base"}, "parser.timestamp.timezone", "time zone"),
    ],
)
def test_each_bad_setting_is_an_error_on_its_key(
    extra: dict[str, str], key: str, message: str
) -> None:
    errors = errors_of(csv(**extra))
    assert key in errors, errors
    assert any(message in m for m in errors[key]), errors[key]


def test_a_task_needs_both_schemas_but_the_connector_may_generate_them() -> None:
    props = csv(**{"schema.generation.enabled": "true", "key.schema": "", "value.schema": ""})
    assert errors_of(props) == {}
    config = SpoolConfig.parse(Format.CSV, props, schemas_needed=False)
    assert config.generates
    with pytest.raises(ConfigError, match=r"'key\.schema' must be set"):
        SpoolConfig.parse(Format.CSV, props)


def test_generated_schemas_are_optional_strings_with_jcustenborders_names() -> None:
    key, value = schemas.generated("K", "V", ["id", "name"], ["id", "absent"])
    assert json.loads(value) == {
        "name": "V",
        "type": "STRUCT",
        "isOptional": False,
        "fieldSchemas": {
            "id": {"type": "STRING", "isOptional": True},
            "name": {"type": "STRING", "isOptional": True},
        },
    }
    assert json.loads(key)["fieldSchemas"] == {"id": {"type": "STRING", "isOptional": True}}


def test_line_delimited_reads_utf8_only() -> None:
    props = {k: v for k, v in csv().items() if k not in ("key.schema", "value.schema")}
    assert errors_of(props, SpoolDirLineDelimitedSourceConnector) == {}
    errors = errors_of({**props, "file.charset": "latin-1"}, SpoolDirLineDelimitedSourceConnector)
    assert "Spark's text reader reads UTF-8 only" in errors["file.charset"][0]


def test_schemas_become_spark_types_and_jsonconverter_declarations() -> None:
    assert schemas.spark_type(VALUE) == "struct<`id`:bigint,`at`:timestamp,`maybe`:timestamp>"
    declared = schemas.declaration(VALUE)
    assert declared["type"] == "struct" and declared["name"] == "com.example.User"
    assert declared["fields"][1] == {
        "type": "int64",
        "optional": False,
        "name": schemas.TIMESTAMP,
        "version": 1,
        "field": "at",
    }
    nested = {"type": "MAP", "keySchema": {"type": "STRING"}, "valueSchema": {"type": "INT32"}}
    assert schemas.spark_type(nested) == "map<string,int>"
    assert schemas.declaration(nested)["values"] == {"type": "int32", "optional": False}
