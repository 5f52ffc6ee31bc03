"""SinkJob: converters, then transforms and predicates, for batches of consumed messages."""

from __future__ import annotations

import dataclasses
import functools
import logging
import operator
import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import pyarrow as pa

from connect_lite.api.components import Converter
from connect_lite.api.data import Headers
from connect_lite.api.records import SinkRecord, TopicPartition
from connect_lite.pipeline import column_plan, range_job
from connect_lite.pipeline.batch_job import BatchJob, where_sink
from connect_lite.pipeline.chunks import (
    TIMESTAMP_TYPES,
    ChunkResult,
    Message,
    MessageRow,
    RecordsChunk,
    SinkChunk,
    SinkInput,
    sink_record,
)
from connect_lite.pipeline.columns import decoder
from connect_lite.pipeline.executor import gc_paused
from connect_lite.pipeline.record_errors import RecordError
from connect_lite.pipeline.transfer import map_sink_rows, to_arrow

log = logging.getLogger(__name__)

_FIELDS = MessageRow._fields
_MESSAGE = operator.attrgetter(*_FIELDS)


def _rows(messages: Sequence[Message]) -> Sequence[MessageRow]:
    """The messages as rows: named tuples of the row's fields (the Kafka consumer's) are
    rows already; anything else is read by attribute."""
    if not messages:
        return []
    kind = type(messages[0])
    if getattr(kind, "_fields", None) == _FIELDS and all(type(m) is kind for m in messages):
        return cast("Sequence[MessageRow]", messages)
    return [MessageRow(*fields) for fields in map(_MESSAGE, messages)]


@dataclass
class SinkBatchResult:
    """The outcome of a sink batch: SinkRecords in input order, and every input's offset."""

    records: list[SinkRecord] = field(default_factory=list)
    indices: list[int] = field(default_factory=list)  # input position of each record
    inputs: Sequence[MessageRow] = ()  # every input, as a row
    dropped: list[int] = field(default_factory=list)
    errors: list[RecordError] = field(default_factory=list)  # only with tolerate_errors
    retries: int = 0  # operations retried after a RetriableError

    @property
    def offsets(self) -> list[tuple[str, int, int]]:
        """(topic, partition, offset) of every input (made on demand: the task reads the
        offsets from its own messages)."""
        return [(r.topic, r.partition, r.offset) for r in self.inputs]

    def next_offsets(self) -> dict[TopicPartition, int]:
        """Per partition, the offset after the last input message (what a commit stores)."""
        out: dict[TopicPartition, int] = {}
        for topic, partition, offset in self.offsets:
            tp = TopicPartition(topic, partition)
            if offset + 1 > out.get(tp, -1):
                out[tp] = offset + 1
        return out


class SinkJob(BatchJob):
    """Converters, then transforms and predicates, for batches of consumed messages."""

    kind = "sink"
    _probe_converters: tuple[Converter, Converter] | None = None  # built once, on the driver

    def run(self, messages: Sequence[Message], *, tolerate_errors: bool = False) -> SinkBatchResult:
        """Turn consumed messages (objects with topic, partition, offset, key, value, headers,
        timestamp, timestamp_type) into SinkRecords, in input order, dropped ones omitted."""
        with gc_paused():
            rows = _rows(messages)
            if not rows:
                return SinkBatchResult()
            columns = self.spec.transforms and self.spec.columns
            result = self._run_as_columns(rows) if columns else None
            if result is None:
                result = SinkBatchResult(inputs=rows)
                meta = bool(self.spec.transforms)  # records are built in the Python workers
                for base, chunk in self._run_chunks(
                    len(rows), lambda a, b: SinkInput.of(rows[a:b], meta=meta)
                ):
                    self._collect(rows, base, chunk, result)
        self._raise_first(result.errors, tolerate_errors)
        return result

    def run_ranges(
        self, ranges: Sequence[range_job.OffsetRange], config: dict[str, str], ordered: bool
    ) -> range_job.RangeBatch:
        """Read, convert and transform offset ranges in the executors with readers of
        ``config``; the batch's frames for ``put_dataframe`` (range_job.py)."""
        return range_job.run(self, ranges, config, ordered)

    def _probe(self, row: MessageRow) -> SinkRecord | None:
        """The batch's first message converted on the driver, when it has a schema."""
        try:
            if self._probe_converters is None:
                self._probe_converters = (self.spec.key_converter(), self.spec.value_converter())
            key = self._probe_converters[0].to_connect_data(row.topic, row.key)
            value = self._probe_converters[1].to_connect_data(row.topic, row.value)
        except Exception:
            return None  # the job reports it against the record
        if key.schema is None and value.schema is None:
            return None
        headers = Headers.of((k, v) for k, v in row.headers or ())  # only their keys matter here
        return sink_record(row, key.value, key.schema, value.value, value.schema, headers)

    def _plan_columns(self, chain: Any, batch: Sequence[Any]) -> Any:
        """Converters in Python workers emit typed rows, the chain runs as Spark column
        expressions over them (the first message, converted here, gives the schemas)."""
        probe = self._probe(batch[0])
        if probe is None:
            return None
        return column_plan.plan_sink(
            self.engine,
            chain,
            probe,
            batch,
            lambda layout: functools.partial(
                map_sink_rows, self._shipped_spec(), self._token, layout
            ),
        )

    def _fetch_columns(self, group: Any, planned: Any) -> Any:
        return to_arrow(group, planned.selected)

    def _collect_columns(
        self, rows: Sequence[MessageRow], planned: column_plan.SinkPlan, table: pa.Table
    ) -> SinkBatchResult:
        """SinkRecords from the select's rows; rows that did not fit run in the Arrow form."""
        result = SinkBatchResult(inputs=rows)
        data = table.to_pydict()
        result.retries = sum(data["retries"])
        decode: dict[str, Callable[[Any], Any] | None] = {
            side: decoder(schema) if side in planned.layout.typed and schema else None
            for side, schema in (
                ("key", planned.schemas["key"]),
                ("value", planned.schemas["value"]),
            )
        }
        kept: list[tuple[int, SinkRecord]] = []
        others: list[tuple[int, SinkRecord]] = []
        empty = Headers()
        for r, i in enumerate(data["idx"]):
            row = rows[i]
            rest = data["rest"][r]
            if rest is not None:
                unfit = pickle.loads(rest)  # a RecordError, or (key, value, headers)
                if isinstance(unfit, RecordError):
                    result.errors.append(dataclasses.replace(unfit, where=where_sink(row)))
                    continue
                key, value, headers = unfit
                record = sink_record(row, key.value, key.schema, value.value, value.schema, headers)
                others.append((i, record))
            elif not data["kept"][r]:
                result.dropped.append(i)
            else:
                key, value = (
                    _unpickled(data[f"{side}_raw"][r])
                    if convert is None
                    else convert(data[side][r])
                    for side, convert in decode.items()
                )
                blob = data["headers"][r]
                record = SinkRecord(
                    data["topic"][r], data["partition"][r], row.offset, key, value,
                    planned.schemas["key"], planned.schemas["value"], data["timestamp"][r],
                    TIMESTAMP_TYPES.get(row.timestamp_type, row.timestamp_type),
                    empty if blob is None else pickle.loads(blob),
                )  # fmt: skip
                kept.append((i, record))
        if others:  # other schemas than the first message's, or nulls: the Arrow form
            chained = self.transform([record for _, record in others], tolerate_errors=True)
            result.retries += chained.retries
            for error in chained.errors:
                assert error.index is not None
                result.errors.append(dataclasses.replace(error, index=others[error.index][0]))
            failed = {e.index for e in chained.errors}
            for position, ((i, _), done) in enumerate(zip(others, chained.records, strict=True)):
                if done is not None:
                    kept.append((i, done))
                elif position not in failed:
                    result.dropped.append(i)
        kept.sort(key=operator.itemgetter(0))  # input order: offsets ascend per partition
        result.indices = [i for i, _ in kept]
        result.records = [record for _, record in kept]
        result.errors.sort(key=lambda e: -1 if e.index is None else e.index)
        result.dropped.sort()
        return result

    def _collect(
        self, rows: Sequence[MessageRow], base: int, chunk: ChunkResult, out: SinkBatchResult
    ) -> None:
        out.errors.extend(self._errors(base, chunk.errors, lambda i: where_sink(rows[i])))
        out.retries += chunk.retries
        out.dropped.extend(base + i for i in chunk.dropped)
        kept = [base + i for i in chunk.kept]
        out.indices.extend(kept)
        if isinstance(chunk, RecordsChunk):
            out.records.extend(chunk.records)
            return
        if not isinstance(chunk, SinkChunk):
            return  # the chunk failed as a whole: nothing kept
        append = out.records.append
        columns = (chunk.key_schemas, chunk.keys, chunk.value_schemas, chunk.values, chunk.headers)
        for index, ks, kv, vs, vv, hs in zip(kept, *columns, strict=True):
            append(sink_record(rows[index], kv, ks, vv, vs, hs))


def _unpickled(blob: bytes | None) -> Any:
    return None if blob is None else pickle.loads(blob)
