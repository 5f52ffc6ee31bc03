"""What a chunk carries: its input to Spark's Python workers and its result back to the driver.

Both travel pickled (transfer.py), so every class here lives at module level. Records
travel as columns, one list per field, which pickles ~3x faster than one object per record;
the objects here are one per chunk.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, NamedTuple, Protocol

from connect_lite.api.data import Headers, Schema
from connect_lite.api.records import R, SinkRecord, SourceRecord
from connect_lite.pipeline.record_errors import RecordError

SerializedHeaders = list[tuple[str, bytes | None]]
"""Headers as Kafka carries them: (key, serialized value) pairs."""

TIMESTAMP_TYPES: dict[int | str, str] = {0: "NoTimestampType", 1: "CreateTime", 2: "LogAppendTime"}
"""Kafka's timestamp types, by librdkafka's number, as SinkRecord names them."""
"""Headers as Kafka carries them: (key, serialized value) pairs."""


class MessageRow(NamedTuple):
    """A consumed message as a sink batch carries it. The Kafka consumer's messages are
    tuples of the same fields (``kafka.consumer.ConsumedMessage``), taken as they are."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: SerializedHeaders | None
    timestamp: int | None
    timestamp_type: str


def sink_record(
    row: MessageRow,
    key: Any,
    key_schema: Schema | None,
    value: Any,
    value_schema: Schema | None,
    headers: Headers,
) -> SinkRecord:
    """The SinkRecord of a message, with its key, value and headers converted. (A function,
    not a method: the Kafka consumer's messages are rows too, without it.)"""
    timestamp_type = TIMESTAMP_TYPES.get(row.timestamp_type, row.timestamp_type)
    return SinkRecord(
        row.topic, row.partition, row.offset, key, value, key_schema, value_schema,
        row.timestamp, timestamp_type, headers,
    )  # fmt: skip


class Message(Protocol):
    """What the Kafka consumer hands the sink batch job for each message."""

    @property
    def topic(self) -> str: ...
    @property
    def partition(self) -> int: ...
    @property
    def offset(self) -> int: ...
    @property
    def key(self) -> bytes | None: ...
    @property
    def value(self) -> bytes | None: ...
    @property
    def headers(self) -> SerializedHeaders | None: ...
    @property
    def timestamp(self) -> int | None: ...
    @property
    def timestamp_type(self) -> str: ...


# -- inputs: the driver to the Python workers ----------------------------------------------


@dataclass(frozen=True)
class SourceInput:
    """Source records as columns: chunk_work.SOURCE_FIELDS, or with ``full`` every
    SourceRecord field in declaration order (the transform chain needs whole records)."""

    full: bool
    columns: tuple[list[Any], ...]
    placement: tuple[list[int | None], list[int | None]] | None = None
    """Without ``full``, when the executors produce the chunk: each record's Kafka partition
    and timestamp (the chain's records carry their own)."""


@dataclass(frozen=True)
class SinkInput:
    """Consumed messages as columns: what the converters read, and with ``meta`` the
    partition, offset, timestamp and timestamp type of each (for records built in the
    Python workers: a transform chain, the column form). ``base`` is the batch position of
    the first one."""

    topics: list[str]
    keys: list[bytes | None]
    values: list[bytes | None]
    headers: list[SerializedHeaders | None]
    meta: tuple[list[int], list[int], list[int | None], list[str]] | None = None
    base: int = 0

    @classmethod
    def of(cls, rows: Sequence[MessageRow], base: int = 0, *, meta: bool = True) -> SinkInput:
        """The columns of ``rows``; without ``meta`` when only their conversion is wanted."""
        return cls(
            [r.topic for r in rows],
            [r.key for r in rows],
            [r.value for r in rows],
            [r.headers for r in rows],
            (
                [r.partition for r in rows],
                [r.offset for r in rows],
                [r.timestamp for r in rows],
                [r.timestamp_type for r in rows],
            )
            if meta
            else None,
            base,
        )

    def row(self, i: int) -> MessageRow:
        """Message ``i`` as a row (the input has ``meta``)."""
        assert self.meta is not None, "a SinkInput without meta has no whole rows"
        partitions, offsets, timestamps, types = self.meta
        return MessageRow(
            self.topics[i], partitions[i], offsets[i], self.keys[i], self.values[i],
            self.headers[i], timestamps[i], types[i],
        )  # fmt: skip


@dataclass(frozen=True)
class ChainInput(Generic[R]):
    """Converted records for the transform chain alone."""

    records: Sequence[R]


ChunkInput = SourceInput | SinkInput | ChainInput[Any]


@dataclass(frozen=True)
class RecordColumns:
    """Records as a chunk of the column form carries them to typed_rows; ``base`` is the
    batch position of the first, and ``kafka_offset`` is None for source records."""

    base: int
    topic: list[str]
    kafka_partition: list[int | None]
    timestamp: list[int | None]
    key: list[Any]
    value: list[Any]
    headers: list[Headers]
    kafka_offset: list[int] | None = None

    @classmethod
    def of(cls, base: int, records: Sequence[SourceRecord | SinkRecord]) -> RecordColumns:
        offsets = None
        if records and isinstance(records[0], SinkRecord):
            offsets = list(map(operator.attrgetter("kafka_offset"), records))
        return cls(
            base,
            [r.topic for r in records],
            [r.kafka_partition for r in records],
            [r.timestamp for r in records],
            [r.key for r in records],
            [r.value for r in records],
            [r.headers for r in records],
            offsets,
        )


# -- results: the Python workers to the driver ---------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ChunkResult:
    """What a chunk's work returns: the positions kept and dropped, and the errors.

    Positions count from the chunk's first record (from the batch's first in the column
    form). A chunk whose components cannot be built returns this class itself: nothing
    kept, one error without a position."""

    kept: list[int]
    dropped: list[int] = field(default_factory=list)
    errors: list[RecordError] = field(default_factory=list)
    retries: int = 0
    """Operations retried after a RetriableError."""


@dataclass(frozen=True, kw_only=True)
class SourceChunk(ChunkResult):
    """Source records ready to produce: serialized columns aligned with ``kept``."""

    keys: list[bytes | None]
    values: list[bytes | None]
    headers: list[SerializedHeaders | None] | None
    """None when no record of the chunk has headers."""
    destinations: list[tuple[str, int | None, int | None]] | None = None
    """(topic, partition, timestamp) after the chain; None when no chain ran here (the
    input records hold them)."""
    selected: list[int] | None = None
    """Column form: the batch position of every row the chain's select kept."""
    sent: Sent | None = None
    """When the executors produced the chunk: what they sent. The columns above then hold
    only the records they held back (``destinations`` always set), for the driver."""


@dataclass(frozen=True)
class Sent:
    """What a chunk's executor produced: the positions it sent (as ``kept`` counts them), the
    topics they went to, the first failed delivery, and with per-record reports each sent
    record's (topic, partition, offset, timestamp), aligned with ``positions`` (None if it
    failed)."""

    positions: list[int]
    topics: list[str]
    failure: str | None = None
    placements: list[tuple[str, int, int, int | None] | None] | None = None


@dataclass(frozen=True, kw_only=True)
class SinkChunk(ChunkResult):
    """Converted messages (no transform chain): columns aligned with ``kept``."""

    key_schemas: list[Schema | None]
    keys: list[Any]
    value_schemas: list[Schema | None]
    values: list[Any]
    headers: list[Headers]


@dataclass(frozen=True, kw_only=True)
class RecordsChunk(ChunkResult, Generic[R]):
    """Records after the transform chain, aligned with ``kept``."""

    records: list[R]
