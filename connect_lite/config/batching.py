"""How a task groups records into Spark jobs: set by the worker for every task."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import attrgetter, itemgetter
from typing import Any

MAX_RECORDS_KEY = "task.batch.max.records"
MAX_BYTES_KEY = "task.batch.max.bytes"


@dataclass(frozen=True)
class Batching:
    """How records are grouped into one Spark job: a batch goes as soon as nothing more is
    waiting and no batch is in its batch job; it grows, up to ``max_records`` and
    ``max_bytes``, only while the batch before it is still in its batch job. ``max_wait_ms``
    is how long an idle task waits for a first record before its loop goes round (commits,
    status)."""

    max_records: int = 200_000
    max_wait_ms: int = 500
    max_bytes: int = 64 * 1024 * 1024
    """Of the records' keys, values and headers (as record_bytes and message_bytes weigh
    them): a batch of large records stops growing here, whatever its count."""


DEFAULT_BATCHING = Batching()


def message_bytes(messages: Sequence[Any]) -> int:
    """What Kafka messages (ConsumedMessage) weigh: their keys, values and headers. Summed in
    C (map, filter, len): a sink's driver thread weighs every message it fetches."""
    total = _lengths(map(_KEY, messages)) + _lengths(map(_VALUE, messages))
    for headers in filter(None, map(_HEADERS, messages)):
        for name, value in headers:
            total += len(name) + len(value or b"")
    return total


def record_bytes(records: Sequence[Any]) -> int:
    """What SourceRecords weigh, cheaply: a str or bytes key or value by its length, any
    other (a Struct, a map) by its own size, not what it refers to (its fields)."""
    total = 0
    for field in (_RECORD_KEY, _RECORD_VALUE):
        values = list(map(field, records))
        if set(map(type, values)) <= _SIZED_BY_LEN:
            total += _lengths(values)
        else:
            total += sum(map(_weight, values))
    return total


_KEY, _VALUE, _HEADERS = itemgetter(3), itemgetter(4), itemgetter(5)
"""ConsumedMessage's key, value and headers (a named tuple: by position, the quickest)."""
_RECORD_KEY, _RECORD_VALUE = attrgetter("key"), attrgetter("value")
_SIZED_BY_LEN = {str, bytes, bytearray, type(None)}


def _lengths(values: Iterable[Any]) -> int:
    return sum(map(len, filter(None, values)))


def _weight(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, str | bytes | bytearray):
        return len(value)
    return sys.getsizeof(value)


__all__ = [
    "DEFAULT_BATCHING",
    "MAX_BYTES_KEY",
    "MAX_RECORDS_KEY",
    "Batching",
    "message_bytes",
    "record_bytes",
]
