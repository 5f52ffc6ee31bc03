"""SourceJob: transforms and predicates, then converters, for batches of SourceRecords."""

from __future__ import annotations

import dataclasses
import functools
import logging
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

from connect_lite.api.records import SourceRecord, canonical_json
from connect_lite.pipeline import column_plan
from connect_lite.pipeline.batch_job import BatchJob, where_source
from connect_lite.pipeline.chunk_work import SOURCE_FIELDS, SOURCE_RECORD_FIELDS
from connect_lite.pipeline.chunks import ChunkResult, SerializedHeaders, SourceChunk, SourceInput
from connect_lite.pipeline.executor import gc_paused
from connect_lite.pipeline.record_errors import RecordError
from connect_lite.pipeline.source_frames import (
    FRAME_SCHEMA,
    FrameBatchResult,
    collect_frame,
    map_frame_rows,
    plan_frame,
)
from connect_lite.pipeline.source_send import SendOrder
from connect_lite.pipeline.transfer import (
    OUTPUT_SCHEMA,
    Layout,
    collect_source_chunks,
    lane_layout,
    map_source_rows,
    to_arrow,
)

log = logging.getLogger(__name__)


@dataclass(slots=True)
class ProducedRecord:
    """A source record ready to produce: serialized key, value and headers."""

    index: int  # position in the input batch
    topic: str
    partition: int | None
    key: bytes | None
    value: bytes | None
    headers: SerializedHeaders
    timestamp: int | None


ProducedRow = tuple[
    int, str, int | None, bytes | None, bytes | None, SerializedHeaders | None, int | None
]
"""A ProducedRecord's fields as a plain tuple, in the same order (headers None when there
are none), which is the order the producer's ``produce_rows`` takes. A batch has one per
record, so it is a tuple made by ``zip``, not an object made by a Python ``__init__``."""


@dataclass
class SourceBatchResult:
    """The outcome of a source batch: produced records in input order, drops and errors."""

    size: int
    rows: list[ProducedRow] = field(default_factory=list)
    dropped: list[int] = field(default_factory=list)
    errors: list[RecordError] = field(default_factory=list)  # only with tolerate_errors
    retries: int = 0  # operations retried after a RetriableError
    sent: list[int] = field(default_factory=list)
    """With a SendOrder: the positions the executors produced (``rows`` then holds only the
    records they held back, whose topics are new)."""
    sent_topics: set[str] = field(default_factory=set)
    send_failure: str | None = None
    """The first delivery that failed in the executors."""
    placements: dict[int, tuple[str, int, int, int | None]] = field(default_factory=dict)
    """With a SendOrder that reports each record: where each sent record landed
    (topic, partition, offset, timestamp), by position."""

    def _renumber(self, order: list[int]) -> None:
        """Positions of a run over ``[records[i] for i in order]`` made the batch's own."""
        self.rows = sorted(
            ((order[row[0]], *row[1:]) for row in self.rows),
            key=operator.itemgetter(0),
        )
        self.dropped = sorted(order[i] for i in self.dropped)
        self.errors = [
            e if e.index is None else dataclasses.replace(e, index=order[e.index])
            for e in self.errors
        ]
        self.errors.sort(key=lambda e: -1 if e.index is None else e.index)
        self.sent = sorted(order[i] for i in self.sent)
        self.placements = {order[i]: p for i, p in self.placements.items()}

    @property
    def records(self) -> list[ProducedRecord]:
        """The rows as ProducedRecords (built on each call)."""
        return [
            ProducedRecord(i, topic, partition, key, value, headers or [], ts)
            for i, topic, partition, key, value, headers, ts in self.rows
        ]

    def by_index(self) -> list[ProducedRecord | None]:
        """One entry per input record: its ProducedRecord, or None if dropped or failed."""
        out: list[ProducedRecord | None] = [None] * self.size
        for record in self.records:
            out[record.index] = record
        return out


class SourceJob(BatchJob):
    """Transforms, predicates and converters for batches of SourceRecords, one job per batch."""

    kind = "source"

    _sending: tuple[SendOrder, Layout] | None = None
    """During a run with a SendOrder: it, and the layout the run's chunks follow."""

    @property
    def keeps_topics(self) -> bool:
        """Whether each record goes to the topic it was polled with (no transforms)."""
        return not self.spec.transforms

    def run(
        self,
        records: list[SourceRecord],
        *,
        tolerate_errors: bool = False,
        send: SendOrder | None = None,
    ) -> SourceBatchResult:
        """Convert a batch. Errors raise (DataError or the original ConnectError subclass)
        unless ``tolerate_errors``, which reports them in the result and skips the records.

        With ``send``, the executors also produce the records (source_send.py): the records
        of each source partition run in one Spark partition, in order (``lanes``)."""
        n = len(records)
        if n == 0:
            return SourceBatchResult(n)
        order = None
        if send is not None:
            layout = lane_layout(lanes(records), self.engine.default_parallelism)
            order = layout.order
            if order is not None:
                records = [records[i] for i in order]
            self._sending = (send, layout)
        try:
            columns = self.spec.transforms and self.spec.columns
            result = self._run_as_columns(records) if columns else None
            if result is None:
                result = self._convert(records, bool(self.spec.transforms))
        finally:
            self._sending = None
        if order is not None:
            result._renumber(order)
        self._raise_first(result.errors, tolerate_errors)
        return result

    def run_frame(
        self,
        df: Any,
        topic: str | None,
        send: SendOrder,
        *,
        tolerate_errors: bool = False,
    ) -> FrameBatchResult:
        """A ``poll_dataframe`` batch as one job: transforms, converters and producing in the
        executors (source_frames.py); ``topic`` is the connector's, for rows without one."""
        engine = self.engine
        plan = plan_frame(df, topic, engine.default_parallelism)
        mapper = functools.partial(
            map_frame_rows,
            self._shipped_spec(),
            self._token,
            plan.key_schema,
            plan.value_schema,
            bool(self.spec.transforms),
            send,
        )
        description = f"connect-lite source frame job {self.spec.job_id}"
        with engine.job_group(self.job_group, description, self.spec.job_id) as group:
            self._check_cancelled()
            table = to_arrow(group, plan.frame.mapInArrow(mapper, FRAME_SCHEMA))
        result = collect_frame(table)
        self._raise_first(result.errors, tolerate_errors)
        return result

    def _plan_columns(self, chain: Any, batch: Sequence[Any]) -> Any:
        """The chain as Spark column expressions, then the converters (and with a SendOrder
        the producing) in Python workers over the rows it kept."""
        send, layout = self._sending or (None, None)
        planned = column_plan.plan(self.engine, chain, batch, layout)
        if planned is None:
            return None
        mapper = functools.partial(
            map_source_rows, self._shipped_spec(), self._token, planned.schemas, order=send
        )
        return planned.selected.mapInArrow(mapper, OUTPUT_SCHEMA)

    def _fetch_columns(self, group: Any, planned: Any) -> Any:
        return collect_source_chunks(group, planned)

    def _collect_columns(self, batch: Sequence[Any], planned: Any, fetched: Any) -> Any:
        records: list[SourceRecord] = list(batch)
        n = len(records)
        result = SourceBatchResult(n)
        survivors: set[int] = set()
        with gc_paused():
            for chunk in fetched:
                survivors.update(chunk.selected or ())
                self._collect(records, 0, chunk, result)
        result.rows.sort(key=operator.itemgetter(0))  # partitions come back in any order
        result.errors.sort(key=lambda e: -1 if e.index is None else e.index)
        result.dropped = sorted(set(range(n)) - survivors)
        return result

    def _convert(self, records: list[SourceRecord], full: bool) -> SourceBatchResult:
        """One job: with ``full`` the chain then the converters, else the converters only."""
        result = SourceBatchResult(len(records))
        names = SOURCE_RECORD_FIELDS if full else SOURCE_FIELDS
        send, layout = self._sending or (None, None)
        placed = send is not None and not full

        def payload(a: int, b: int) -> SourceInput:
            part = records[a:b]
            placement = _placement(part) if placed else None
            return SourceInput(full, _columns(part, names), placement)

        with gc_paused():
            chunks = self._run_chunks(len(records), payload, layout=layout, order=send)
            for base, chunk in chunks:
                self._collect(records, base, chunk, result)
        return result

    def _collect(
        self, records: list[SourceRecord], base: int, chunk: ChunkResult, out: SourceBatchResult
    ) -> None:
        out.errors.extend(self._errors(base, chunk.errors, lambda i: where_source(records[i])))
        out.retries += chunk.retries
        out.dropped.extend(base + i for i in chunk.dropped)
        if not isinstance(chunk, SourceChunk):
            return  # the chunk failed as a whole
        sent = chunk.sent
        if sent is not None:
            positions = [base + i for i in sent.positions]
            out.sent.extend(positions)
            out.sent_topics.update(sent.topics)
            out.send_failure = out.send_failure or sent.failure
            if sent.placements is not None:
                out.placements.update(
                    (i, p) for i, p in zip(positions, sent.placements, strict=True) if p
                )
        if not chunk.kept:
            return  # nothing kept
        kept = chunk.kept
        indexes = [base + local for local in kept] if base else kept
        headers: Iterable[SerializedHeaders | None] = chunk.headers or repeat(None, len(kept))
        topics: Iterable[str]
        partitions: Iterable[int | None]
        stamps: Iterable[int | None]
        if chunk.destinations is None:  # no chain ran: the input records say where
            originals = [records[i] for i in indexes]
            topics = map(_TOPIC, originals)
            partitions = map(_PARTITION, originals)
            stamps = map(_TIMESTAMP, originals)
        else:
            topics, partitions, stamps = zip(*chunk.destinations, strict=True)
        out.rows.extend(
            zip(indexes, topics, partitions, chunk.keys, chunk.values, headers, stamps, strict=True)
        )


_TOPIC = operator.attrgetter("topic")
_PARTITION = operator.attrgetter("kafka_partition")
_TIMESTAMP = operator.attrgetter("timestamp")


def lanes(records: Sequence[SourceRecord]) -> list[str | None]:
    """Each record's source partition, canonically (None without one): the records of one
    lane are produced by one executor, in order."""
    keys: dict[int, str] = {}
    out: list[str | None] = []
    for record in records:
        partition = record.source_partition
        if partition is None:
            out.append(None)
            continue
        key = keys.get(id(partition))  # a task often gives many records one partition object
        if key is None:
            key = keys[id(partition)] = canonical_json(dict(partition))
        out.append(key)
    return out


def _placement(records: Sequence[SourceRecord]) -> tuple[list[int | None], list[int | None]]:
    return list(map(_PARTITION, records)), list(map(_TIMESTAMP, records))


def _columns(records: list[SourceRecord], names: tuple[str, ...]) -> tuple[list[Any], ...]:
    """Field columns of a chunk (pickles ~3x faster than per-record tuples); no empty Headers."""
    return tuple(
        [r.headers or None for r in records]
        if name == "headers"
        else list(map(operator.attrgetter(name), records))
        for name in names
    )
