"""The record-level work of a stage on one chunk (the Arrow form): transforms and converters.

Runs inside Spark's Python workers. Inputs and outputs are plain lists (see transfer.py
for how chunks travel, plugin_calls.py for how each plugin call is guarded).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from connect_lite.api.data import Header, Headers
from connect_lite.api.records import SinkRecord, SourceRecord
from connect_lite.pipeline.executor import BuildError, Components
from connect_lite.pipeline.plugin_calls import (
    FAILED,
    Failures,
    apply_transforms,
    convert_column,
    retry_of,
)
from connect_lite.pipeline.record_errors import (
    HEADER_CONVERTER,
    KEY_CONVERTER,
    VALUE_CONVERTER,
    capture,
)

_EMPTY_HEADERS = Headers()
TIMESTAMP_TYPES: dict[Any, str] = {0: "NoTimestampType", 1: "CreateTime", 2: "LogAppendTime"}
"""confluent-kafka's timestamp type numbers; a name given as a string is kept as it is."""

SOURCE_FIELDS = ("topic", "key", "key_schema", "value", "value_schema", "headers")
"""The record fields (as columns, in this order) a source chunk without transforms carries."""
SOURCE_RECORD_FIELDS = tuple(f.name for f in dataclasses.fields(SourceRecord))
"""Every SourceRecord field: the columns of a chunk that goes through transforms."""


def source_chunk(comps: Components, full: bool, columns: tuple[list[Any], ...]) -> dict[str, Any]:
    """Transforms, then key, value and header converters, for one chunk of source records.

    ``columns`` are SOURCE_FIELDS, or with ``full`` every SourceRecord field in declaration
    order (transforms need whole records); empty headers travel as None.
    """
    failures = Failures(retry_of(comps))
    dropped: list[int] = []
    meta = None
    if full:
        kept, records = _source_transform(comps, columns, failures, dropped)
        topics = [r.topic for r in records]
        keys, key_schemas = [r.key for r in records], [r.key_schema for r in records]
        values, value_schemas = [r.value for r in records], [r.value_schema for r in records]
        headers = [r.headers for r in records]
        meta = [(r.topic, r.kafka_partition, r.timestamp) for r in records]
    else:
        topics, keys, key_schemas, values, value_schemas, headers = columns
        kept = list(range(len(topics)))
    out_keys = convert_column(
        comps.key.get(), KEY_CONVERTER, (topics, key_schemas, keys), kept, failures
    )
    out_values = convert_column(
        comps.value.get(), VALUE_CONVERTER, (topics, value_schemas, values), kept, failures
    )
    out_headers = _source_headers(comps, topics, headers, kept, failures)
    return _pack(
        kept, dropped, failures, keys=out_keys, values=out_values, headers=out_headers, meta=meta
    )


def _source_transform(
    comps: Components, columns: tuple[list[Any], ...], failures: Failures, dropped: list[int]
) -> tuple[list[int], list[SourceRecord]]:
    chain = comps.transforms()
    kept, records = [], []
    for i, row in enumerate(zip(*columns, strict=True)):
        fields = dict(zip(SOURCE_RECORD_FIELDS, row, strict=True))
        fields["headers"] = fields["headers"] or _EMPTY_HEADERS
        record = SourceRecord(**fields)
        record = apply_transforms(chain, record, i, failures)
        if record is None:
            dropped.append(i)
        elif record is not FAILED:
            kept.append(i)
            records.append(record)
    return kept, records


def _source_headers(
    comps: Components, topics: list[str], headers: list[Any], kept: list[int], failures: Failures
) -> list[Any] | None:
    if not any(headers):
        return None
    convert = comps.header.get().from_connect_header
    out: list[Any] = [None] * len(kept)

    def one(topic: str, hs: Any) -> list[tuple[str, Any]]:
        return [(h.key, convert(topic, h.key, h.schema, h.value)) for h in hs]

    for i, hs in enumerate(headers):
        if not hs:
            continue
        try:
            out[i] = one(topics[i], hs)
        except Exception as e:
            ok, result = failures.recover(e, one, topics[i], hs)
            if ok:
                out[i] = result
            else:
                error = capture(result, kept[i], HEADER_CONVERTER, comps.header.get())
                failures.setdefault(kept[i], error)
    return out


def sink_chunk(comps: Components, rows: list[tuple[Any, ...]]) -> dict[str, Any]:
    """Key, value and header converters, then transforms, for one chunk of consumed messages.

    A row is (topic, partition, offset, key, value, headers, timestamp, timestamp_type).
    """
    failures = Failures(retry_of(comps))
    indices = list(range(len(rows)))
    topics = [r[0] for r in rows]
    keys = convert_column(
        comps.key.get(), KEY_CONVERTER, (topics, [r[3] for r in rows]), indices, failures
    )
    values = convert_column(
        comps.value.get(), VALUE_CONVERTER, (topics, [r[4] for r in rows]), indices, failures
    )
    headers = sink_headers(comps, rows, failures)
    kept = [i for i in indices if i not in failures] if failures else indices
    if not comps.has_transforms:
        if failures:
            keys, values, headers = ([col[i] for i in kept] for col in (keys, values, headers))
        columns = {  # columns pickle faster than per-record tuples
            "key_schemas": [sv.schema for sv in keys],
            "keys": [sv.value for sv in keys],
            "value_schemas": [sv.schema for sv in values],
            "values": [sv.value for sv in values],
            "headers": headers,
        }
        return {
            "kept": kept,
            "dropped": [],
            "errors": [failures[i] for i in sorted(failures)],
            "retries": failures.retries,
            **columns,
        }

    def record(i: int) -> SinkRecord:
        r = rows[i]
        return SinkRecord(
            r[0], r[1], r[2], keys[i].value, values[i].value, keys[i].schema, values[i].schema,
            r[6], TIMESTAMP_TYPES.get(r[7], r[7]), headers[i],
        )  # fmt: skip

    out_kept, dropped, records = _run_chain(comps, ((i, record(i)) for i in kept), failures)
    return _pack(out_kept, dropped, failures, records=records)


def sink_headers(comps: Components, rows: list[tuple[Any, ...]], failures: Failures) -> list[Any]:
    out: list[Any] = [_EMPTY_HEADERS] * len(rows)
    if not any(r[5] for r in rows):
        return out
    convert = comps.header.get().to_connect_header

    def one(topic: str, raw_headers: Any) -> Headers:
        items = []
        for key, raw in raw_headers:
            sv = convert(topic, key, raw)
            items.append(Header(key, sv.value, sv.schema))
        return Headers(tuple(items))

    for i, r in enumerate(rows):
        if not r[5]:
            continue
        try:
            out[i] = one(r[0], r[5])
        except Exception as e:
            ok, result = failures.recover(e, one, r[0], r[5])
            if ok:
                out[i] = result
            else:
                failures.setdefault(i, capture(result, i, HEADER_CONVERTER, comps.header.get()))
    return out


def _pack(
    kept: list[int], dropped: list[int], failures: Failures, **columns: Any
) -> dict[str, Any]:
    """The chunk result: kept local indices, the columns aligned with them, drops, errors."""
    if failures:
        bad = set(failures)
        keep_pos = [p for p, i in enumerate(kept) if i not in bad]
        kept = [kept[p] for p in keep_pos]
        columns = {
            name: (col if col is None else [col[p] for p in keep_pos])
            for name, col in columns.items()
        }
    errors = [failures[i] for i in sorted(failures)]
    return {
        "kept": kept,
        "dropped": dropped,
        "errors": errors,
        "retries": failures.retries,
        **columns,
    }


def _run_chain(
    comps: Components, numbered: Iterable[tuple[int, Any]], failures: Failures
) -> tuple[list[int], list[int], list[Any]]:
    """The chain over (position, record) pairs: kept positions, dropped ones, new records."""
    chain = comps.transforms()
    kept, dropped, out = [], [], []
    for i, record in numbered:
        result = apply_transforms(chain, record, i, failures)
        if result is None:
            dropped.append(i)
        elif result is not FAILED:
            kept.append(i)
            out.append(result)
    return kept, dropped, out


def chain_chunk(comps: Components, records: list[Any]) -> dict[str, Any]:
    """Only the transform chain, record-at-a-time, for records already converted."""
    failures = Failures(retry_of(comps))
    kept, dropped, out = _run_chain(comps, enumerate(records), failures)
    return _pack(kept, dropped, failures, records=out)


def run_chunk(kind: str, comps: Components, payload: tuple[Any, ...]) -> dict[str, Any]:
    """Process one chunk; a component that cannot be built fails the chunk as a whole."""
    try:
        if kind == "source":
            return source_chunk(comps, *payload)
        if kind == "chain":
            return chain_chunk(comps, *payload)
        return sink_chunk(comps, *payload)
    except BuildError as e:
        return {"kept": [], "dropped": [], "errors": [e.error]}
