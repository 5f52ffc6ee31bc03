"""The column form's Python side: chunks as typed rows for a chain's select, converters around it.

Runs inside Spark's Python workers (see column_plan.py for the select and transfer.py for
the mapInArrow functions that call these).
"""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from connect_lite.api.data import Schema
from connect_lite.pipeline.chunk_work import sink_headers, source_chunk
from connect_lite.pipeline.chunks import RecordColumns, SinkInput, SourceChunk, SourceInput
from connect_lite.pipeline.columns import decoder, to_plain
from connect_lite.pipeline.executor import Components
from connect_lite.pipeline.plugin_calls import Failures, convert_column, retry_of
from connect_lite.pipeline.record_errors import KEY_CONVERTER, VALUE_CONVERTER


@dataclass(frozen=True)
class RowLayout:
    """How a batch travels as typed rows for a chain of column expressions: the key and
    value schemas, which sides have a typed column, which sides the chain changes, and the
    Arrow schema of the rows."""

    key_schema: Schema | None
    value_schema: Schema | None
    typed: frozenset[str]
    sides: frozenset[str]
    arrow_schema: pa.Schema

    def schema(self, side: str) -> Schema | None:
        return self.key_schema if side == "key" else self.value_schema

    def typed_schemas(self) -> dict[str, Schema]:
        """The schema of each side that travels as a typed column."""
        return {s: schema for s in self.typed if (schema := self.schema(s)) is not None}


def typed_rows(columns: RecordColumns, layout: RowLayout) -> dict[str, list[Any]]:
    """Typed columns for a chunk of records, the input of the chain's select, by Arrow
    column name. Rows are numbered from ``columns.base``."""
    n = len(columns.topic)
    out: dict[str, list[Any]] = {
        "idx": list(range(columns.base, columns.base + n)),
        "topic": columns.topic,
        "partition": columns.kafka_partition,
        "offset": columns.kafka_offset or [None] * n,
        "timestamp": columns.timestamp,
        "value_null": [v is None for v in columns.value],
        "header_keys": [[h.key for h in hs] if hs else [] for hs in columns.headers],
        "headers": [pickle.dumps(hs) if hs else None for hs in columns.headers],
    }
    typed = layout.typed_schemas()
    for side, values in (("key", columns.key), ("value", columns.value)):
        if side in typed:
            schema = typed[side]
            out[side] = [to_plain(v, schema) for v in values]
        else:  # no column form: the values ride along, pickled
            out[f"{side}_raw"] = [None if v is None else pickle.dumps(v) for v in values]
    return out


def sink_rows(comps: Components, chunk: SinkInput, layout: RowLayout) -> dict[str, list[Any]]:
    """Converters for consumed messages, emitting typed columns for the chain's select, by
    Arrow column name.

    Rows are numbered from ``chunk.base``. A row that does not fit the layout (a converter
    error, other schemas, or a null where the chain changes the key or value) travels in
    ``rest``, pickled (its RecordError, or its converted key, value and headers), and the
    driver handles it in the Arrow form; its typed columns are null."""
    base, topics = chunk.base, chunk.topics
    n = len(topics)
    failures = Failures(retry_of(comps))
    positions = list(range(n))
    key_conv, value_conv = comps.key.get(), comps.value.get()
    keys = convert_column(key_conv, KEY_CONVERTER, (topics, chunk.keys), positions, failures)
    values = convert_column(
        value_conv, VALUE_CONVERTER, (topics, chunk.values), positions, failures
    )
    headers = sink_headers(comps, topics, chunk.headers, failures)
    out: dict[str, list[Any]] = {name: [] for name in layout.arrow_schema.names}
    typed = layout.typed_schemas()
    for i in range(n):
        row = chunk.row(i)
        pair = {"key": keys[i], "value": values[i]}
        rest = None
        if i in failures:
            rest = pickle.dumps(dataclasses.replace(failures[i], index=base + i))
        elif not all(
            (pair[side].schema is layout.schema(side) or pair[side].schema == layout.schema(side))
            for side in ("key", "value")
        ) or any(pair[side].value is None for side in layout.sides):
            rest = pickle.dumps((pair["key"], pair["value"], headers[i]))
        fits = rest is None
        for side in ("key", "value"):
            value = pair[side].value if fits else None
            if side in typed:
                out[side].append(None if value is None else to_plain(value, typed[side]))
            else:
                out[f"{side}_raw"].append(pickle.dumps(value) if value is not None else None)
        out["idx"].append(base + i)
        out["topic"].append(row.topic)
        out["partition"].append(row.partition)
        out["offset"].append(row.offset)
        out["timestamp"].append(row.timestamp)
        out["headers"].append(pickle.dumps(headers[i]) if fits and headers[i] else None)
        out["header_keys"].append([h.key for h in headers[i]] if fits else [])
        out["value_null"].append(fits and pair["value"].value is None)
        out["rest"].append(rest)
        out["retries"].append(failures.retries if i == 0 else 0)
    return out


def source_rows(
    comps: Components, columns: dict[str, list[Any]], schemas: dict[str, Schema | None]
) -> SourceChunk:
    """Converters for rows a chain of column expressions kept: ``columns`` (by Arrow column
    name) hold the input position (idx), topic, partition, timestamp, the typed key and/or
    value, and pickled headers; a side without a typed column comes pickled. Positions in
    the result (kept, errors, selected) are input positions."""
    idx = columns["idx"]
    n = len(idx)

    def side(name: str) -> list[Any]:
        schema = schemas[name]
        if name in columns and schema is not None:
            return list(map(decoder(schema), columns[name]))
        return [None if b is None else pickle.loads(b) for b in columns[f"{name}_raw"]]

    blobs = columns.get("headers") or [None] * n
    headers = [None if b is None else pickle.loads(b) for b in blobs]
    key_schemas, value_schemas = [schemas["key"]] * n, [schemas["value"]] * n
    result = source_chunk(
        comps,
        SourceInput(
            False,
            (columns["topic"], side("key"), key_schemas, side("value"), value_schemas, headers),
        ),
    )
    meta = list(zip(columns["topic"], columns["partition"], columns["timestamp"], strict=True))
    return dataclasses.replace(
        result,
        kept=[idx[i] for i in result.kept],
        errors=[
            e if e.index is None else dataclasses.replace(e, index=idx[e.index])
            for e in result.errors
        ],
        destinations=[meta[i] for i in result.kept],
        selected=idx,
    )
