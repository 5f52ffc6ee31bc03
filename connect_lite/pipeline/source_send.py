"""Producing a source batch from Spark's executors, where it was converted.

A source batch's job converts its records in the Python workers (chunk_work.source_chunk, or
typed_rows.source_rows after a chain of column expressions) and, with a ``SendOrder``,
produces them from there too, with the worker's sender (kafka.batch_sender). Only the outcome
comes back to the driver: the positions sent, their topics, the first failure and, when the
task wants ``commit_record``, where each record landed.

A record whose topic the driver has not readied yet (KIP-158's creation and KIP-558's
tracking come before a topic's first record) is held back and returned as it is today; the
driver readies its topic and produces it itself.

Order: the driver puts every record of one source partition in one Spark partition, in
order (source_job.lanes), one Spark task queues its chunks in order on one producer, and a job
returns only once all its records are settled, so records of one source partition reach each
Kafka partition in the order they were polled.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from connect_lite.kafka import batch_sender
from connect_lite.pipeline.chunks import ChunkInput, ChunkResult, Sent, SourceChunk, SourceInput


@dataclass(frozen=True)
class SendOrder:
    """How a batch's executors produce: the sender's config (``batch_sender.sender_config``
    of the task producer's), the topics they may produce to (None: any), and whether each
    record's delivery is reported (the task has ``commit_record``)."""

    config: dict[str, str]
    known: frozenset[str] | None
    each: bool

    def __repr__(self) -> str:  # the config may hold credentials
        return f"SendOrder(known={self.known!r}, each={self.each!r})"


class Sending:
    """The sends of one Spark task: each chunk's records are queued as soon as it is
    converted (``start``), so converting the next overlaps with sending this one, and the
    task waits for the acknowledgements once, at its end (``settle``)."""

    def __init__(self, order: SendOrder) -> None:
        self._order = order
        self._sender = batch_sender.sender(order.config, order.each)
        self._started: list[tuple[ChunkResult, list[int], list[str], Any]] = []

    def start(self, payload: ChunkInput | None, result: ChunkResult) -> None:
        """Queue the records of a converted source chunk whose topics are known; the others
        stay in it, for the driver. A chunk that failed as a whole is kept as it is."""
        if not isinstance(result, SourceChunk):
            self._started.append((result, [], [], None))
            return
        kept = result.kept
        destinations = result.destinations
        if destinations is None:  # no chain ran here: the input records say where
            assert isinstance(payload, SourceInput) and payload.placement is not None
            topics = payload.columns[0]
            partitions, stamps = payload.placement
            destinations = [(topics[i], partitions[i], stamps[i]) for i in kept]
        known = self._order.known
        sendable = [k for k, d in enumerate(destinations) if known is None or d[0] in known]
        headers = result.headers
        rows = [
            (
                destinations[k][0],
                destinations[k][1],
                result.keys[k],
                result.values[k],
                None if headers is None else headers[k],
                destinations[k][2],
            )
            for k in sendable
        ]
        placements = self._sender.produce(rows) if rows else None
        held = _others(len(kept), sendable)
        rest = dataclasses.replace(
            result,
            kept=[kept[k] for k in held],
            keys=[result.keys[k] for k in held],
            values=[result.values[k] for k in held],
            headers=None if headers is None else [headers[k] for k in held],
            destinations=[destinations[k] for k in held],
        )
        sent_topics = sorted({destinations[k][0] for k in sendable})
        self._started.append((rest, [kept[k] for k in sendable], sent_topics, placements))

    def settle(self) -> list[ChunkResult]:
        """Wait for every queued record; the chunks started, in order, each with what it
        sent (``SourceChunk.sent``)."""
        failure = self._sender.settle()
        done: list[ChunkResult] = []
        for rest, positions, topics, placements in self._started:
            if isinstance(rest, SourceChunk):
                rest = dataclasses.replace(rest, sent=Sent(positions, topics, failure, placements))
            done.append(rest)
        self._started.clear()
        return done


def _others(n: int, chosen: list[int]) -> list[int]:
    """The positions below ``n`` not in ``chosen`` (most often none)."""
    if len(chosen) == n:
        return []
    taken = set(chosen)
    return [k for k in range(n) if k not in taken]


__all__ = ["SendOrder", "Sending"]
