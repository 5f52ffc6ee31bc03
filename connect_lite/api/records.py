"""Records and the small value types they refer to."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from connect_lite.api.data import Headers, Schema


@dataclass(frozen=True, order=True)
class TopicPartition:
    """A Kafka topic partition."""

    topic: str
    partition: int


class Partition(Mapping[str, Any]):
    """A source partition: a hashable, read-only mapping of primitive values."""

    __slots__ = ("_data", "_key")

    def __init__(self, data: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        merged = dict(data or {}, **kwargs)
        self._data = merged
        self._key = canonical_json(merged)

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        return hash(self._key)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Partition):
            return self._key == other._key
        if isinstance(other, Mapping):
            return self._data == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"Partition({self._data!r})"

    @property
    def key(self) -> str:
        """The canonical JSON form used to store this partition."""
        return self._key

    def to_dict(self) -> dict[str, Any]:
        return dict(self._data)

    def __reduce__(self) -> tuple[type[Partition], tuple[dict[str, Any]]]:
        return (Partition, (self._data,))


def canonical_json(value: Any) -> str:
    """The canonical key form of a JSON value: sorted keys, no spaces."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class RecordMetadata:
    """Where the broker stored a produced record."""

    topic: str
    partition: int
    offset: int
    timestamp: int | None = None


_NO_HEADERS = Headers()


@dataclass(frozen=True, init=False)
class SourceRecord:
    """A record produced by a source task.

    A frozen dataclass; its ``__init__`` is written out only to set all fields in one step,
    which halves the cost of building a record (a source task builds millions)."""

    source_partition: Mapping[str, Any] | None
    source_offset: Mapping[str, Any] | None
    topic: str
    value: Any
    key: Any = None
    kafka_partition: int | None = None
    key_schema: Schema | None = None
    value_schema: Schema | None = None
    timestamp: int | None = None
    headers: Headers = field(default_factory=Headers)

    def __init__(
        self,
        source_partition: Mapping[str, Any] | None,
        source_offset: Mapping[str, Any] | None,
        topic: str,
        value: Any,
        key: Any = None,
        kafka_partition: int | None = None,
        key_schema: Schema | None = None,
        value_schema: Schema | None = None,
        timestamp: int | None = None,
        headers: Headers = _NO_HEADERS,
    ) -> None:
        object.__setattr__(
            self,
            "__dict__",
            {
                "source_partition": source_partition,
                "source_offset": source_offset,
                "topic": topic,
                "value": value,
                "key": key,
                "kafka_partition": kafka_partition,
                "key_schema": key_schema,
                "value_schema": value_schema,
                "timestamp": timestamp,
                "headers": headers,
            },
        )


@dataclass(frozen=True, init=False)
class SinkRecord:
    """A record delivered to a sink task (a frozen dataclass, built in one step as above)."""

    topic: str
    kafka_partition: int
    kafka_offset: int
    key: Any
    value: Any
    key_schema: Schema | None = None
    value_schema: Schema | None = None
    timestamp: int | None = None
    timestamp_type: str = "CreateTime"
    headers: Headers = field(default_factory=Headers)

    def __init__(
        self,
        topic: str,
        kafka_partition: int,
        kafka_offset: int,
        key: Any,
        value: Any,
        key_schema: Schema | None = None,
        value_schema: Schema | None = None,
        timestamp: int | None = None,
        timestamp_type: str = "CreateTime",
        headers: Headers = _NO_HEADERS,
    ) -> None:
        object.__setattr__(
            self,
            "__dict__",
            {
                "topic": topic,
                "kafka_partition": kafka_partition,
                "kafka_offset": kafka_offset,
                "key": key,
                "value": value,
                "key_schema": key_schema,
                "value_schema": value_schema,
                "timestamp": timestamp,
                "timestamp_type": timestamp_type,
                "headers": headers,
            },
        )


R = TypeVar("R", SourceRecord, SinkRecord)
"""A record type: transformations and predicates work on both."""

__all__ = [
    "Partition",
    "R",
    "RecordMetadata",
    "SinkRecord",
    "SourceRecord",
    "TopicPartition",
    "canonical_json",
]
