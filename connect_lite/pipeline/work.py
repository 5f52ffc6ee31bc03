"""The record-level work of a stage on one chunk: transforms, predicates and converters.

Runs inside Spark's Python workers. Inputs and outputs are plain lists (see transfer.py
for how chunks travel). Each plugin call is guarded per record: a failing record becomes
a RecordError and the chunk goes on. A converter that offers a vectorized form
(``from_connect_batch(topic, schema, values)`` or ``to_connect_batch(topic, values)``) is
called once per run of records with the same topic and schema; if that call raises, the
run is redone record by record to find the culprit.

A call that raises RetriableError is retried (``errors.retry.timeout``) only in the except
branch, so records that do not fail pay nothing for it.
"""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from connect_lite.api.data import Header, Headers
from connect_lite.api.errors import RetriableError
from connect_lite.api.records import SinkRecord, SourceRecord
from connect_lite.pipeline.columns import decoder, to_plain
from connect_lite.pipeline.executor import BuildError, Components
from connect_lite.pipeline.record_errors import (
    HEADER_CONVERTER,
    KEY_CONVERTER,
    PREDICATE,
    TRANSFORMATION,
    VALUE_CONVERTER,
    RecordError,
    Retry,
    capture,
)

_EMPTY_HEADERS = Headers()
TIMESTAMP_TYPES: dict[Any, str] = {0: "NoTimestampType", 1: "CreateTime", 2: "LogAppendTime"}
"""confluent-kafka's timestamp type numbers; a name given as a string is kept as it is."""
_FAILED = object()


class Failures(dict[int, RecordError]):
    """Local index -> its first error, plus the chunk's retry policy and its retry count."""

    def __init__(self, retry: Retry | None = None) -> None:
        super().__init__()
        self.retry = retry

    @property
    def retries(self) -> int:
        return self.retry.retries if self.retry is not None else 0

    def recover(self, error: Exception, call: Callable[..., Any], *args: Any) -> tuple[bool, Any]:
        """(True, result) if retrying ``call`` succeeded, else (False, the final error)."""
        retry = self.retry
        if retry is None or not retry.enabled or not isinstance(error, RetriableError):
            return False, error
        try:
            return True, retry.recover(error, call, *args)
        except Exception as final:
            return False, final


def retry_of(comps: Any) -> Retry | None:
    """The stage's retry policy (StageSpec.retry_*), or None when retries are off."""
    spec = getattr(comps, "spec", None)
    timeout = int(getattr(spec, "retry_timeout_ms", 0) or 0)
    if not timeout:
        return None
    return Retry(timeout, int(getattr(spec, "retry_delay_max_ms", 60000)))


def apply_transforms(
    chain: Sequence[tuple[Any, Any, bool]], record: Any, index: int, failures: Failures
) -> Any:
    """Run the transform chain on one record: the new record, None (dropped) or _FAILED."""
    for transform, predicate, negate in chain:
        if predicate is not None:
            try:
                applies = bool(predicate.test(record)) != negate
            except Exception as e:
                ok, out = failures.recover(e, predicate.test, record)
                if not ok:
                    failures[index] = capture(out, index, PREDICATE, predicate)
                    return _FAILED
                applies = bool(out) != negate
            if not applies:
                continue
        try:
            record = transform.apply(record)
        except Exception as e:
            ok, out = failures.recover(e, transform.apply, record)
            if not ok:
                failures[index] = capture(out, index, TRANSFORMATION, transform)
                return _FAILED
            record = out
        if record is None:
            return None
    return record


def _runs(topics: Sequence[str], schemas: Sequence[Any] | None) -> list[tuple[int, int]]:
    """[start, end) runs of equal topic (and schema, when given)."""
    runs, start, n = [], 0, len(topics)
    for i in range(1, n):
        if topics[i] != topics[start] or (
            schemas is not None
            and schemas[i] is not schemas[start]
            and schemas[i] != schemas[start]
        ):
            runs.append((start, i))
            start = i
    if n:
        runs.append((start, n))
    return runs


def convert_column(
    converter: Any,
    stage: str,
    args: tuple[Sequence[Any], ...],
    indices: Sequence[int],
    failures: Failures,
) -> list[Any]:
    """Convert one column: ``args`` are (topics, [schemas,] values), aligned with ``indices``."""
    batch_name = "from_connect_batch" if len(args) == 3 else "to_connect_batch"
    one: Callable[..., Any] = getattr(
        converter, "from_connect_data" if len(args) == 3 else "to_connect_data"
    )
    batch = getattr(converter, batch_name, None)
    out: list[Any] = [None] * len(indices)
    if batch is None:
        _convert_each(one, converter, stage, args, indices, 0, len(indices), out, failures)
        return out
    for start, end in _runs(args[0], args[1] if len(args) == 3 else None):
        head = tuple(col[start] for col in args[:-1])
        try:
            result = batch(*head, args[-1][start:end])
            if len(result) != end - start:
                raise ValueError(f"{batch_name} returned {len(result)} results for {end - start}")
            out[start:end] = result
        except Exception:
            _convert_each(one, converter, stage, args, indices, start, end, out, failures)
    return out


def _convert_each(
    one: Callable[..., Any],
    converter: Any,
    stage: str,
    args: tuple[Sequence[Any], ...],
    indices: Sequence[int],
    start: int,
    end: int,
    out: list[Any],
    failures: Failures,
) -> None:
    i = start
    cols = zip(*(col[start:end] for col in args), strict=True)
    while True:  # resumes after a failing record; the loop body stays a plain call
        try:
            for call_args in cols:
                out[i] = one(*call_args)
                i += 1
            return
        except Exception as e:
            ok, result = failures.recover(e, one, *call_args)
            if ok:
                out[i] = result
            else:
                failures.setdefault(indices[i], capture(result, indices[i], stage, converter))
            i += 1


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


def source_rows(
    comps: Components, columns: dict[str, list[Any]], schemas: dict[str, Any]
) -> dict[str, Any]:
    """Converters for rows a chain of column expressions kept: ``columns`` hold the input
    position (idx), topic, partition, timestamp, the typed key and/or value, and pickled
    headers; a side without a typed column comes pickled. Positions in the result (kept,
    errors) are input positions, and ``idx`` lists every row that came in."""
    idx = columns["idx"]
    n = len(idx)

    def side(name: str) -> list[Any]:
        if name in columns:
            return list(map(decoder(schemas[name]), columns[name]))
        return [None if b is None else pickle.loads(b) for b in columns[f"{name}_raw"]]

    blobs = columns.get("headers") or [None] * n
    headers = [None if b is None else pickle.loads(b) for b in blobs]
    key_schemas, value_schemas = [schemas["key"]] * n, [schemas["value"]] * n
    result = source_chunk(
        comps,
        False,
        (columns["topic"], side("key"), key_schemas, side("value"), value_schemas, headers),
    )
    meta = list(zip(columns["topic"], columns["partition"], columns["timestamp"], strict=True))
    result["meta"] = [meta[i] for i in result["kept"]]
    result["kept"] = [idx[i] for i in result["kept"]]
    result["errors"] = [
        e if e.index is None else dataclasses.replace(e, index=idx[e.index])
        for e in result["errors"]
    ]
    result["idx"] = idx
    return result


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
        elif record is not _FAILED:
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
    headers = _sink_headers(comps, rows, failures)
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


@dataclass(frozen=True)
class RowLayout:
    """How a batch travels as typed rows for a chain of column expressions: the key and
    value schemas, which sides have a typed column, which sides the chain changes, and the
    Arrow schema of the rows."""

    key_schema: Any
    value_schema: Any
    typed: frozenset[str]
    sides: frozenset[str]
    arrow_schema: Any  # pa.Schema

    def schema(self, side: str) -> Any:
        return self.key_schema if side == "key" else self.value_schema


RECORD_COLUMNS = ("topic", "kafka_partition", "timestamp", "key", "value", "headers")
"""The record fields a chunk of records carries to typed_rows (plus the offset of sinks)."""


def typed_rows(base: int, columns: dict[str, list[Any]], layout: RowLayout) -> dict:
    """Typed columns for a chunk of records (RECORD_COLUMNS, plus kafka_offset for sink
    records), the input of the chain's select. Rows are numbered from ``base``."""
    n = len(columns["topic"])
    out: dict[str, list[Any]] = {
        "idx": list(range(base, base + n)),
        "topic": columns["topic"],
        "partition": columns["kafka_partition"],
        "offset": columns.get("kafka_offset") or [None] * n,
        "timestamp": columns["timestamp"],
        "value_null": [v is None for v in columns["value"]],
        "header_keys": [[h.key for h in hs] if hs else [] for hs in columns["headers"]],
        "headers": [pickle.dumps(hs) if hs else None for hs in columns["headers"]],
    }
    for side in ("key", "value"):
        if side in layout.typed:
            schema = layout.schema(side)
            out[side] = [to_plain(v, schema) for v in columns[side]]
        else:  # no column form: the values ride along, pickled
            out[f"{side}_raw"] = [None if v is None else pickle.dumps(v) for v in columns[side]]
    return out


def sink_rows(
    comps: Components, base: int, rows: list[tuple[Any, ...]], layout: RowLayout
) -> dict[str, list[Any]]:
    """Converters for consumed messages, emitting typed columns for the chain's select.

    A row is (topic, partition, offset, key, value, headers, timestamp, timestamp_type),
    numbered from ``base``. A row that does not fit the layout (a converter error, other
    schemas, or a null where the chain changes the key or value) travels in ``rest``,
    pickled, and the driver handles it in the Arrow form; its typed columns are null."""
    n = len(rows)
    topics = [r[0] for r in rows]
    failures = Failures(retry_of(comps))
    positions = list(range(n))
    key_conv, value_conv = comps.key.get(), comps.value.get()
    keys = convert_column(
        key_conv, KEY_CONVERTER, (topics, [r[3] for r in rows]), positions, failures
    )
    values = convert_column(
        value_conv, VALUE_CONVERTER, (topics, [r[4] for r in rows]), positions, failures
    )
    headers = _sink_headers(comps, rows, failures)
    out: dict[str, list[Any]] = {name: [] for name in layout.arrow_schema.names}
    for i, row in enumerate(rows):
        pair = {"key": keys[i], "value": values[i]}
        rest = None
        if i in failures:
            rest = pickle.dumps(("error", dataclasses.replace(failures[i], index=base + i)))
        elif not all(
            (pair[side].schema is layout.schema(side) or pair[side].schema == layout.schema(side))
            for side in ("key", "value")
        ) or any(pair[side].value is None for side in layout.sides):
            rest = pickle.dumps(("other", pair["key"], pair["value"], headers[i]))
        fits = rest is None
        for side in ("key", "value"):
            value = pair[side].value if fits else None
            if side in layout.typed:
                out[side].append(None if value is None else to_plain(value, layout.schema(side)))
            else:
                out[f"{side}_raw"].append(pickle.dumps(value) if value is not None else None)
        out["idx"].append(base + i)
        out["topic"].append(row[0])
        out["partition"].append(row[1])
        out["offset"].append(row[2])
        out["timestamp"].append(row[6])
        out["headers"].append(pickle.dumps(headers[i]) if fits and headers[i] else None)
        out["header_keys"].append([h.key for h in headers[i]] if fits else [])
        out["value_null"].append(fits and pair["value"].value is None)
        out["rest"].append(rest)
        out["retries"].append(failures.retries if i == 0 else 0)
    return out


def _sink_headers(comps: Components, rows: list[tuple[Any, ...]], failures: Failures) -> list[Any]:
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
        elif result is not _FAILED:
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
