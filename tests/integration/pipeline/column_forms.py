"""The column form of a transform chain run alone, for the table of transform forms that
compares it with ``apply`` (the batch jobs run it inside their own job, with the converters)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from connect_lite.api.data import Schema
from connect_lite.api.records import SinkRecord, SourceRecord
from connect_lite.pipeline.column_plan import plan
from connect_lite.pipeline.columns import decoder
from connect_lite.pipeline.session import SparkEngine
from connect_lite.pipeline.transfer import to_arrow
from connect_lite.protocol.job_spec import Chain


def run_expressions(
    engine: SparkEngine, group_id: str, chain: Chain, records: Sequence[SourceRecord | SinkRecord]
) -> list[SourceRecord | SinkRecord | None] | None:
    """The chain alone, as Spark columns: the records after it (None where dropped), or None
    when the batch or the chain has no column form. (The batch jobs convert in the same job;
    this is the form the shared test table compares with ``apply``.)"""
    if not records:
        return []
    planned = plan(engine, chain, records)
    if planned is None:
        return None
    with engine.job_group(group_id, f"connect-lite transforms: {len(records)} records") as g:
        result = to_arrow(g, planned.selected.drop("headers", "key_raw", "value_raw"))
    return _rebuild(records, result, planned.schemas, planned.sides)


def _rebuild(
    records: Sequence[Any],  # all SourceRecords or all SinkRecords
    result: pa.Table,
    schemas: dict[str, Schema | None],
    sides: frozenset[str],
) -> list[SourceRecord | SinkRecord | None]:
    """The records after the chain, built straight from the result columns."""
    out: list[SourceRecord | SinkRecord | None] = [None] * len(records)
    n = result.num_rows
    columns = {name: result.column(name).to_pylist() for name in result.column_names}
    for side in ("key", "value"):
        schema = schemas[side]
        if side in sides and schema is not None:
            columns[side] = list(map(decoder(schema), columns[side]))
        else:  # untouched: the input's own values and schemas
            columns[side] = [getattr(records[i], side) for i in columns["idx"]]
        columns[f"{side}_schema"] = (
            [schema] * n
            if side in sides
            else [getattr(records[i], f"{side}_schema") for i in columns["idx"]]
        )
    rows = zip(
        columns["idx"],
        columns["topic"],
        columns["partition"],
        columns["timestamp"],
        columns["key"],
        columns["value"],
        columns["key_schema"],
        columns["value_schema"],
        strict=True,
    )
    if records and isinstance(records[0], SinkRecord):
        for i, topic, partition, ts, key, value, ks, vs in rows:
            r = records[i]
            out[i] = SinkRecord(
                topic,
                partition,
                r.kafka_offset,
                key,
                value,
                ks,
                vs,
                ts,
                r.timestamp_type,
                r.headers,
            )
    else:
        for i, topic, partition, ts, key, value, ks, vs in rows:
            r = records[i]
            out[i] = SourceRecord(
                r.source_partition, r.source_offset, topic, value, key, partition, ks, vs, ts,
                r.headers,
            )  # fmt: skip
    return out
