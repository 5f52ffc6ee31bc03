"""How a task groups records into Spark jobs: set by the worker for every task."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Batching:
    """How records are grouped into one Spark job: a batch goes as soon as nothing more is
    waiting and no batch is in its batch job; it grows, up to ``max_records``, only while the
    batch before it is still in its batch job. ``max_wait_ms`` is how long an idle task waits
    for a first record before its loop goes round (commits, status)."""

    max_records: int = 200_000
    max_wait_ms: int = 500


DEFAULT_BATCHING = Batching()


__all__ = ["DEFAULT_BATCHING", "Batching"]
