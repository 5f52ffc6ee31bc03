"""SourceJob: transforms and predicates, then converters, for batches of SourceRecords."""

from __future__ import annotations

import functools
import logging
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

from connect_lite.api.records import SourceRecord
from connect_lite.pipeline import column_plan
from connect_lite.pipeline.batch_job import BatchJob, where_source
from connect_lite.pipeline.chunk_work import SOURCE_FIELDS, SOURCE_RECORD_FIELDS
from connect_lite.pipeline.chunks import ChunkResult, SerializedHeaders, SourceChunk, SourceInput
from connect_lite.pipeline.executor import gc_paused
from connect_lite.pipeline.record_errors import RecordError
from connect_lite.pipeline.transfer import OUTPUT_SCHEMA, collect_source_chunks, map_source_rows

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

    def run(
        self, records: list[SourceRecord], *, tolerate_errors: bool = False
    ) -> SourceBatchResult:
        """Convert a batch. Errors raise (DataError or the original ConnectError subclass)
        unless ``tolerate_errors``, which reports them in the result and skips the records."""
        n = len(records)
        if n == 0:
            return SourceBatchResult(n)
        columns = self.spec.transforms and self.spec.columns
        result = self._run_as_columns(records) if columns else None
        if result is None:
            result = self._convert(records, bool(self.spec.transforms))
        self._raise_first(result.errors, tolerate_errors)
        return result

    def _plan_columns(self, chain: Any, batch: Sequence[Any]) -> Any:
        """The chain as Spark column expressions, then the converters in Python workers over
        the rows it kept."""
        planned = column_plan.plan(self.engine, chain, batch)
        if planned is None:
            return None
        return planned.selected.mapInArrow(
            functools.partial(map_source_rows, self._shipped_spec(), self._token, planned.schemas),
            OUTPUT_SCHEMA,
        )

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
        with gc_paused():
            chunks = self._run_chunks(
                len(records), lambda a, b: SourceInput(full, _columns(records[a:b], names))
            )
            for base, chunk in chunks:
                self._collect(records, base, chunk, result)
        return result

    def _collect(
        self, records: list[SourceRecord], base: int, chunk: ChunkResult, out: SourceBatchResult
    ) -> None:
        out.errors.extend(self._errors(base, chunk.errors, lambda i: where_source(records[i])))
        out.retries += chunk.retries
        out.dropped.extend(base + i for i in chunk.dropped)
        if not isinstance(chunk, SourceChunk) or not chunk.kept:
            return  # nothing kept, or the chunk failed as a whole
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


def _columns(records: list[SourceRecord], names: tuple[str, ...]) -> tuple[list[Any], ...]:
    """Field columns of a chunk (pickles ~3x faster than per-record tuples); no empty Headers."""
    return tuple(
        [r.headers or None for r in records]
        if name == "headers"
        else list(map(operator.attrgetter(name), records))
        for name in names
    )
