"""Source offsets: which offsets are safe to commit, and the reader tasks resume from."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from connect_lite.api.connector import OffsetStorageReader
from connect_lite.api.records import canonical_json
from connect_lite.protocol.reports import SourceOffsets


@dataclass
class SubmittedBatch:
    """One batch of records handed to the producer, with the last offset of each partition."""

    pending: int
    offsets: dict[str, tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=dict)
    failed: bool = False


class SubmittedRecords:
    """Tracks batches in submission order; a batch's offsets become committable only when it
    and every batch before it were fully acknowledged by the broker (or filtered out)."""

    def __init__(self) -> None:
        self._batches: deque[SubmittedBatch] = deque()
        self._committable: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}

    def submit(self, pending: int, offsets: Mapping[str, tuple[Any, Any]]) -> SubmittedBatch:
        batch = SubmittedBatch(pending, dict(offsets))
        self._batches.append(batch)
        return batch

    @staticmethod
    def ack(batch: SubmittedBatch) -> None:
        batch.pending -= 1

    def ack_all(self) -> None:
        """Every submitted record was delivered (the producer flushed without an error)."""
        for batch in self._batches:
            if not batch.failed:
                batch.pending = 0

    def drain(self) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
        """Offsets newly committable since the last drain, by canonical partition key."""
        while self._batches and self._batches[0].pending <= 0 and not self._batches[0].failed:
            self._committable.update(self._batches.popleft().offsets)
        ready, self._committable = self._committable, {}
        return ready

    def restore(self, ready: Mapping[str, tuple[dict[str, Any], dict[str, Any]]]) -> None:
        """Offsets a failed commit drained: committable again, behind any newer ones."""
        self._committable = {**ready, **self._committable}

    @property
    def outstanding(self) -> int:
        return sum(max(b.pending, 0) for b in self._batches)

    def clear(self) -> None:
        self._batches.clear()
        self._committable.clear()


def offsets_of(records: list[Any]) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """The last (partition, offset) per source partition among records, keyed canonically."""
    last: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    cache: dict[int, str] = {}
    for record in records:
        partition = record.source_partition
        if partition is None or record.source_offset is None:
            continue
        ident = id(partition)
        key = cache.get(ident)
        if key is None:
            key = canonical_json(dict(partition))
            cache[ident] = key
        last[key] = (partition, record.source_offset)
    return {k: (dict(p), dict(o)) for k, (p, o) in last.items()}


class StoreOffsetReader(OffsetStorageReader):
    """Reads a connector's committed offsets from the offset store."""

    def __init__(self, store: SourceOffsets, connector: str) -> None:
        self._store = store
        self._connector = connector

    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        return self._store.get(self._connector, dict(partition))
