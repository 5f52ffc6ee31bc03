"""The SQL a batch is buffered with, from its schema: value, record time, directory."""

from __future__ import annotations

from typing import Any

import pytest

from connect_lite.api import DataError
from connect_lite.connectors.lake.config import LakeConfig
from connect_lite.connectors.lake.partitioning import (
    FILE_COLUMN,
    canonical_type,
    ident,
    plan_batch,
    sql_string,
)

BASE = {"store.url": "file:///lake", "flush.size": "10"}
NOW = 1_700_000_000_000


def field(name: str, kind: Any, nullable: bool = True) -> dict[str, Any]:
    return {"name": name, "type": kind, "nullable": nullable, "metadata": {}}


def struct(*fields: dict[str, Any]) -> dict[str, Any]:
    return {"type": "struct", "fields": list(fields)}


def batch_schema(value: Any, value_struct: Any = None) -> dict[str, Any]:
    fields = [
        field("topic", "string", False),
        field("partition", "integer", False),
        field("offset", "long", False),
        field("timestamp", "timestamp"),
        field("key", "string"),
        field("value", value),
        field("headers", {"type": "array", "elementType": "string", "containsNull": True}),
    ]
    if value_struct is not None:
        fields.append(field("value_struct", value_struct))
    return struct(*fields)


PERSON = struct(field("id", "long"), field("name", "string"), field("ts", "long"))


def plan(value: Any, value_struct: Any = None, tz: str = "UTC", **props: str) -> Any:
    config = LakeConfig.parse({**BASE, **props})
    return plan_batch(config, batch_schema(value, value_struct), NOW, tz)


def test_a_struct_value_is_written_by_its_fields() -> None:
    planned = plan(PERSON)
    assert (planned.value_sql, planned.value_is_struct) == ("`value`", True)
    assert planned.dir_sql == "concat('partition=', `partition`)"
    assert planned.time_sql == f"unix_millis(timestamp_millis({NOW}))"  # Wallclock


def test_schemaless_uses_the_inferred_struct_else_the_json_text() -> None:
    inferred = plan("string", value_struct=struct(field("a", "long")))
    assert (inferred.value_sql, inferred.value_is_struct) == ("`value_struct`", True)
    text = plan("string")
    assert (text.value_sql, text.value_is_struct) == ("`value`", False)


def test_the_type_key_ignores_nullability_only() -> None:
    nullable = plan(
        struct(
            field("id", "long", True),
            field("tags", {"type": "array", "elementType": "string", "containsNull": True}),
        )
    )
    required = plan(
        struct(
            field("id", "long", False),
            field("tags", {"type": "array", "elementType": "string", "containsNull": False}),
        )
    )
    assert nullable.type_key == required.type_key
    assert (
        plan(struct(field("id", "integer"))).type_key != plan(struct(field("id", "long"))).type_key
    )
    assert canonical_type(
        {"type": "map", "keyType": "string", "valueType": "long", "valueContainsNull": True}
    ) == {
        "type": "map",
        "keyType": "string",
        "valueType": "long",
    }


def test_field_partitioner_directories() -> None:
    planned = plan(
        PERSON, **{"partitioner.class": "FieldPartitioner", "partition.field.name": "name,id"}
    )
    assert planned.dir_sql.startswith("concat_ws('/', concat('name=', coalesce(replace(")
    assert "'%', '%25'), '/', '%2F'), ':', '%3A')" in planned.dir_sql
    assert "CAST(`value`.`id` AS STRING)" in planned.dir_sql
    assert "'__HIVE_DEFAULT_PARTITION__'" in planned.dir_sql


@pytest.mark.parametrize(
    ("value", "fields", "message"),
    [
        ("string", "a", "FieldPartitioner needs struct values; the record value is string"),
        (PERSON, "nope", "partition.field.name: the record value has no field 'nope'"),
        (
            struct(field("tags", {"type": "array", "elementType": "string", "containsNull": True})),
            "tags",
            "partition.field.name: field 'tags' is of type array; a directory needs a string",
        ),
    ],
)
def test_field_partitioner_errors(value: Any, fields: str, message: str) -> None:
    props = {"partitioner.class": "FieldPartitioner", "partition.field.name": fields}
    with pytest.raises(DataError, match="^" + message):
        plan(value, **props)


def test_record_field_times() -> None:
    props = {
        "timestamp.extractor": "RecordField",
        "timestamp.field": "ts",
        "rotate.interval.ms": "1000",
    }
    assert plan(PERSON, **props).time_sql == (
        "unix_millis(timestamp_millis(CAST(`value`.`ts` AS BIGINT)))"
    )
    nested = struct(field("meta", struct(field("at", "timestamp"))))
    props["timestamp.field"] = "meta.at"
    assert plan(nested, **props).time_sql == "unix_millis(CAST(`value`.`meta`.`at` AS TIMESTAMP))"
    with pytest.raises(DataError, match=r"meta\.at: the record value has no field 'meta'"):
        plan(PERSON, **props)
    props["timestamp.field"] = "name"
    assert "CAST(`value`.`name` AS TIMESTAMP)" in plan(PERSON, **props).time_sql
    props["timestamp.field"] = "flag"
    with pytest.raises(DataError, match="is of type boolean"):
        plan(struct(field("flag", "boolean")), **props)


def test_record_times_are_read_only_where_used() -> None:
    props = {"timestamp.extractor": "RecordField", "timestamp.field": "missing"}
    assert plan(PERSON, **props).time_sql == f"unix_millis(timestamp_millis({NOW}))"
    props["timestamp.extractor"] = "Record"
    props["rotate.interval.ms"] = "60000"
    assert plan(PERSON, **props).time_sql == "unix_millis(`timestamp`)"


def test_time_based_directories() -> None:
    props = {
        "partitioner.class": "HourlyPartitioner",
        "timestamp.extractor": "Record",
        "timezone": "Europe/Paris",
    }
    planned = plan(PERSON, **props)
    local = "unix_millis(from_utc_timestamp(`timestamp`, 'Europe/Paris'))"
    assert planned.dir_sql == (
        f"date_format(timestamp_millis({local} - pmod({local}, 3600000)), "
        "'\\'year=\\'yyyy\\'/month=\\'MM\\'/day=\\'dd\\'/hour=\\'HH')"
    )
    assert "to_utc_timestamp(" in plan(PERSON, tz="America/New_York", **props).dir_sql


def test_csv_needs_flat_values() -> None:
    nested = struct(field("id", "long"), field("inner", struct(field("a", "long"))))
    with pytest.raises(DataError, match=r"^The csv format holds only flat values"):
        plan(nested, **{"format.class": "csv"})
    with pytest.raises(DataError, match=r"^The csv format holds only flat values"):
        plan("binary", **{"format.class": "csv"})
    assert plan(PERSON, **{"format.class": "csv"}).value_is_struct


def test_a_field_named_like_the_file_column_is_refused() -> None:
    with pytest.raises(DataError, match=FILE_COLUMN):
        plan(struct(field(FILE_COLUMN, "long")))


def test_quoting() -> None:
    assert ident("a`b") == "`a``b`"
    assert sql_string("it's a \\ path") == "'it\\'s a \\\\ path'"
