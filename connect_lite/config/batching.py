"""How a task groups records into Spark jobs: set by the worker for every task."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
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
    """What Kafka messages (ConsumedMessage) weigh: their keys, values and headers."""
    total = 0
    for m in messages:
        total += len(m.key or b"") + len(m.value or b"")
        for name, value in m.headers or ():
            total += len(name) + len(value or b"")
    return total


def record_bytes(records: Sequence[Any]) -> int:
    """What SourceRecords weigh, cheaply: a str or bytes key or value by its length, any
    other (a Struct, a dict) by its own size, not what it refers to (its fields)."""
    total = 0
    for r in records:
        total += _weight(r.key) + _weight(r.value)
    return total


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
