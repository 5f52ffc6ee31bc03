"""A sink batch as the DataFrames ``put_dataframe`` receives, on a real SparkSession."""

from __future__ import annotations

import datetime as dt
import decimal
import json
from collections.abc import Sequence
from dataclasses import dataclass

import pytest
from pyspark.sql import DataFrame

from connect_lite.api import (
    Header,
    HeaderConverter,
    Headers,
    Schema,
    SchemaBuilder,
    SinkRecord,
    Struct,
    logical,
)
from connect_lite.converters.simple_header import SimpleHeaderConverter
from connect_lite.pipeline import SparkEngine
from connect_lite.pipeline.sink_frames import schema_runs, sink_frame


@dataclass(frozen=True)
class SinkFrame:
    """One run of a batch as a DataFrame: ``positions`` are the records' places in the
    batch handed to :func:`sink_frames`."""

    positions: list[int]
    frame: DataFrame


def sink_frames(
    engine: SparkEngine,
    records: Sequence[SinkRecord],
    header_converter: HeaderConverter | None,
) -> list[SinkFrame]:
    """The batch as DataFrames, one per run of records with the same schemas, in order."""
    return [
        SinkFrame(run, sink_frame(engine, [records[i] for i in run], header_converter))
        for run in schema_runs(records)
    ]


pytestmark = pytest.mark.integration

ORDER = (
    SchemaBuilder.struct()
    .name("Order")
    .field("id", Schema.INT64_SCHEMA)
    .field("item", Schema.OPTIONAL_STRING_SCHEMA)
    .field("price", logical.decimal_schema(2))
    .field("at", logical.timestamp_schema())
    .field("day", logical.date_schema(optional=True))
    .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).optional().build())
    .build()
)
AT = dt.datetime(2026, 11, 24, 8, 30, tzinfo=dt.UTC)


def order(offset: int, schema: Schema = ORDER) -> SinkRecord:
    value = Struct(schema)
    for name, v in {
        "id": offset,
        "item": f"item-{offset}",
        "price": decimal.Decimal("12.50"),
        "at": AT,
        "day": dt.date(2026, 11, 24),
        "tags": ["a", "b"],
    }.items():
        if schema.field(name) is not None:
            value.put(name, v)
    return SinkRecord(
        "orders", 1, offset, f"k{offset}", value, Schema.STRING_SCHEMA, schema, 1_700_000_000_000,
        "CreateTime", Headers((Header("h", "v", Schema.STRING_SCHEMA),)),
    )  # fmt: skip


def test_a_typed_batch_is_one_frame_with_typed_columns(engine: SparkEngine) -> None:
    records = [order(i) for i in range(3)]
    frames = sink_frames(engine, records, SimpleHeaderConverter())
    assert [f.positions for f in frames] == [[0, 1, 2]]
    df = frames[0].frame
    types = dict(df.dtypes)
    assert types["topic"] == "string" and types["partition"] == "int"
    assert types["offset"] == "bigint" and types["timestamp"] == "timestamp"
    assert types["key"] == "string"
    assert types["value"] == (
        "struct<id:bigint,item:string,price:decimal(38,2),at:timestamp,day:date,tags:array<string>>"
    )
    assert types["headers"] == "array<struct<key:string,value:binary>>"
    rows = df.orderBy("offset").collect()
    assert [r.offset for r in rows] == [0, 1, 2]
    first = rows[0]
    assert first.key == "k0" and first.topic == "orders" and first.partition == 1
    assert first.value.price == decimal.Decimal("12.50")
    assert first.value.at.replace(tzinfo=dt.UTC) == AT  # the session's time zone is UTC
    assert first.value.day == dt.date(2026, 11, 24) and first.value.tags == ["a", "b"]
    assert [(h.key, bytes(h.value)) for h in first.headers] == [("h", b"v")]


def test_a_schema_change_starts_a_new_frame_in_order(engine: SparkEngine) -> None:
    smaller = SchemaBuilder.struct().name("Order").field("id", Schema.INT64_SCHEMA).build()
    records = [order(0), order(1), order(2, smaller), order(3)]
    frames = sink_frames(engine, records, None)
    assert [f.positions for f in frames] == [[0, 1], [2], [3]]
    assert dict(frames[1].frame.dtypes)["value"] == "struct<id:bigint>"


def test_schemaless_values_are_json_text_plus_an_inferred_struct(engine: SparkEngine) -> None:
    values = [{"id": 1, "name": "a"}, {"id": 2, "extra": [1, 2]}, {"id": 3, "none": None}]
    records = [
        SinkRecord("t", 0, i, None, v, None, None, None, "NoTimestampType", Headers())
        for i, v in enumerate(values)
    ]
    (frame,) = sink_frames(engine, records, None)
    types = dict(frame.frame.dtypes)
    assert types["value"] == "string" and types["key"] == "string"
    assert types["value_struct"] == (
        "struct<id:bigint,name:string,extra:array<bigint>,none:string>"
    )
    assert "key_struct" not in types  # every key is null: nothing to infer
    rows = frame.frame.orderBy("offset").collect()
    assert [json.loads(r.value) for r in rows] == values
    assert [r.value_struct.id for r in rows] == [1, 2, 3]
    assert rows[1].value_struct.extra == [1, 2] and rows[0].key is None
    assert rows[0].timestamp is None


def test_schemaless_values_of_clashing_types_are_only_json_text(engine: SparkEngine) -> None:
    records = [
        SinkRecord("t", 0, i, None, v, None, None, None, "NoTimestampType", Headers())
        for i, v in enumerate([{"a": 1}, {"a": "x"}])
    ]
    (frame,) = sink_frames(engine, records, None)
    assert "value_struct" not in frame.frame.columns
    assert [r.value for r in frame.frame.orderBy("offset").collect()] == ['{"a":1}', '{"a":"x"}']
