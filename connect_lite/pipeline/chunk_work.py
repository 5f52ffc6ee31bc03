"""The record-level work of a batch job on one chunk (the Arrow form): transforms and converters.

Runs inside Spark's Python workers. Inputs and outputs are plain lists (see transfer.py
for how chunks travel, plugin_calls.py for how each plugin call is guarded).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any, TypeVar

from connect_lite.api.data import Header, Headers
from connect_lite.api.records import R, SinkRecord, SourceRecord
from connect_lite.pipeline.chunks import (
    ChainInput,
    ChunkInput,
    ChunkResult,
    RecordsChunk,
    SerializedHeaders,
    SinkChunk,
    SinkInput,
    SourceChunk,
    SourceInput,
    sink_record,
)
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
"""confluent-kafka's timestamp type numbers; a name given as a string is kept as it is."""

SOURCE_FIELDS = ("topic", "key", "key_schema", "value", "value_schema", "headers")
"""The record fields (as columns, in this order) a source chunk without transforms carries."""
SOURCE_RECORD_FIELDS = tuple(f.name for f in dataclasses.fields(SourceRecord))
"""Every SourceRecord field: the columns of a chunk that goes through transforms."""

T = TypeVar("T")


def source_chunk(comps: Components, chunk: SourceInput) -> SourceChunk:
    """Transforms, then key, value and header converters, for one chunk of source records.

    Empty headers travel as None."""
    failures = Failures(retry_of(comps))
    dropped: list[int] = []
    destinations = None
    if chunk.full:
        kept, records = _source_transform(comps, chunk.columns, failures, dropped)
        topics = [r.topic for r in records]
        keys, key_schemas = [r.key for r in records], [r.key_schema for r in records]
        values, value_schemas = [r.value for r in records], [r.value_schema for r in records]
        headers: list[Headers | None] = [r.headers for r in records]
        destinations = [(r.topic, r.kafka_partition, r.timestamp) for r in records]
    else:
        topics, keys, key_schemas, values, value_schemas, headers = chunk.columns
        kept = list(range(len(topics)))
    out_keys = convert_column(
        comps.key.get(), KEY_CONVERTER, (topics, key_schemas, keys), kept, failures
    )
    out_values = convert_column(
        comps.value.get(), VALUE_CONVERTER, (topics, value_schemas, values), kept, failures
    )
    out_headers = _source_headers(comps, topics, headers, kept, failures)
    good = _unfailed(kept, failures)
    return SourceChunk(
        kept=_pick(kept, good),
        dropped=dropped,
        errors=failures.in_order(),
        retries=failures.retries,
        keys=_pick(out_keys, good),
        values=_pick(out_values, good),
        headers=None if out_headers is None else _pick(out_headers, good),
        destinations=None if destinations is None else _pick(destinations, good),
    )


def _unfailed(kept: list[int], failures: Failures) -> list[int] | None:
    """The positions in ``kept`` of the records that did not fail; None when none failed."""
    if not failures:
        return None
    return [p for p, i in enumerate(kept) if i not in failures]


def _pick(column: list[T], positions: list[int] | None) -> list[T]:
    return column if positions is None else [column[p] for p in positions]


def _source_transform(
    comps: Components, columns: tuple[list[Any], ...], failures: Failures, dropped: list[int]
) -> tuple[list[int], list[SourceRecord]]:
    chain = comps.transforms()
    kept, records = [], []
    for i, row in enumerate(zip(*columns, strict=True)):
        fields = dict(zip(SOURCE_RECORD_FIELDS, row, strict=True))
        fields["headers"] = fields["headers"] or _EMPTY_HEADERS
        result = apply_transforms(chain, SourceRecord(**fields), i, failures)
        if result is None:
            dropped.append(i)
        elif result is not FAILED:
            kept.append(i)
            records.append(result)
    return kept, records


def _source_headers(
    comps: Components,
    topics: list[str],
    headers: list[Headers | None],
    kept: list[int],
    failures: Failures,
) -> list[SerializedHeaders | None] | None:
    if not any(headers):
        return None
    convert = comps.header.get().from_connect_header
    out: list[SerializedHeaders | None] = [None] * len(kept)

    def one(topic: str, hs: Headers) -> SerializedHeaders:
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


def sink_chunk(comps: Components, chunk: SinkInput) -> SinkChunk | RecordsChunk[SinkRecord]:
    """Key, value and header converters, then transforms, for one chunk of consumed messages."""
    topics = chunk.topics
    failures = Failures(retry_of(comps))
    indices = list(range(len(topics)))
    keys = convert_column(comps.key.get(), KEY_CONVERTER, (topics, chunk.keys), indices, failures)
    values = convert_column(
        comps.value.get(), VALUE_CONVERTER, (topics, chunk.values), indices, failures
    )
    headers = sink_headers(comps, topics, chunk.headers, failures)
    kept = [i for i in indices if i not in failures] if failures else indices
    if not comps.has_transforms:
        if failures:
            keys, values, headers = ([col[i] for i in kept] for col in (keys, values, headers))
        return SinkChunk(
            kept=kept,
            errors=failures.in_order(),
            retries=failures.retries,
            key_schemas=[sv.schema for sv in keys],
            keys=[sv.value for sv in keys],
            value_schemas=[sv.schema for sv in values],
            values=[sv.value for sv in values],
            headers=headers,
        )

    def record(i: int) -> SinkRecord:
        r = chunk.row(i)
        return sink_record(
            r, keys[i].value, keys[i].schema, values[i].value, values[i].schema, headers[i]
        )

    return _chained(comps, ((i, record(i)) for i in kept), failures)


def sink_headers(
    comps: Components,
    topics: list[str],
    raw: list[SerializedHeaders | None],
    failures: Failures,
) -> list[Headers]:
    """The headers of consumed messages, converted; a failing one is recorded in ``failures``."""
    out: list[Headers] = [_EMPTY_HEADERS] * len(raw)
    if not any(raw):
        return out
    convert = comps.header.get().to_connect_header

    def one(topic: str, raw_headers: SerializedHeaders) -> Headers:
        items = []
        for key, value in raw_headers:
            sv = convert(topic, key, value)
            items.append(Header(key, sv.value, sv.schema))
        return Headers(tuple(items))

    for i, raw_headers in enumerate(raw):
        if not raw_headers:
            continue
        try:
            out[i] = one(topics[i], raw_headers)
        except Exception as e:
            ok, result = failures.recover(e, one, topics[i], raw_headers)
            if ok:
                out[i] = result
            else:
                failures.setdefault(i, capture(result, i, HEADER_CONVERTER, comps.header.get()))
    return out


def _chained(
    comps: Components, numbered: Iterable[tuple[int, R]], failures: Failures
) -> RecordsChunk[R]:
    """The chain over (position, record) pairs. A failed record is never kept: the chain
    skips records that failed before it, and drops those that fail in it."""
    chain = comps.transforms()
    kept, dropped, out = [], [], []
    for i, record in numbered:
        result = apply_transforms(chain, record, i, failures)
        if result is None:
            dropped.append(i)
        elif result is not FAILED:
            kept.append(i)
            out.append(result)
    return RecordsChunk(
        kept=kept,
        dropped=dropped,
        errors=failures.in_order(),
        retries=failures.retries,
        records=out,
    )


def chain_chunk(comps: Components, chunk: ChainInput[R]) -> RecordsChunk[R]:
    """Only the transform chain, record-at-a-time, for records already converted."""
    return _chained(comps, enumerate(chunk.records), Failures(retry_of(comps)))


def run_chunk(comps: Components, chunk: ChunkInput) -> ChunkResult:
    """Process one chunk; a component that cannot be built fails the chunk as a whole."""
    try:
        if isinstance(chunk, SourceInput):
            return source_chunk(comps, chunk)
        if isinstance(chunk, ChainInput):
            return chain_chunk(comps, chunk)
        return sink_chunk(comps, chunk)
    except BuildError as e:
        return ChunkResult(kept=[], errors=[e.error])
