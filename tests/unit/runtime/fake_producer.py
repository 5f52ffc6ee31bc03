"""A producer stand-in for source tasks' unit tests: keeps what it is given, delivers nothing."""

from __future__ import annotations

from typing import Any


class RecordingProducer:
    """What WorkerSourceTask calls of a producer; ``values`` holds every value produced."""

    def __init__(self, **_: Any) -> None:
        self.values: list[bytes] = []

    def produce(self, topic: str, value: bytes, *args: Any, **kwargs: Any) -> None:
        self.values.append(value)

    def produce_rows(self, rows: Any) -> None:
        self.values.extend(row[4] for row in rows)

    def poll(self, _timeout: float) -> int:
        return 0

    def flush(self, _timeout: float) -> int:
        return 0

    def close(self) -> None:
        pass
