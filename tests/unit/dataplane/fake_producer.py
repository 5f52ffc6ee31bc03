"""Producer stand-ins for source tasks' unit tests: one keeps what it is given and delivers
nothing; one also reports deliveries, some of them failed."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from connect_lite.api.errors import ConnectError
from connect_lite.api.records import RecordMetadata


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


class DeliveringProducer(RecordingProducer):
    """Reports each record's delivery from ``poll``/``flush``, as confluent-kafka does: to
    ``on_error`` for failures only (when given), else to each record's ``on_delivery``. A
    value for which ``fails(value)`` is true is reported failed."""

    def __init__(
        self, fails: Callable[[bytes], bool], on_error: Callable[[Any], None] | None = None
    ) -> None:
        super().__init__()
        self._fails = fails
        self._on_error = on_error
        self._queued: list[tuple[bytes, Callable[[Any, Any], None] | None]] = []
        self._lock = threading.Lock()
        self.delivered: list[bytes] = []

    def produce(self, topic: str, value: bytes, *args: Any, **kwargs: Any) -> None:
        super().produce(topic, value)
        with self._lock:
            self._queued.append((value, kwargs.get("on_delivery")))

    def produce_rows(self, rows: Any) -> None:
        for row in rows:
            self.produce(row[1], row[4])

    def poll(self, _timeout: float) -> int:
        with self._lock:
            queued, self._queued = self._queued, []
        for value, on_delivery in queued:
            failed = self._fails(value)
            if not failed:
                self.delivered.append(value)
            error = ConnectError(f"delivery of {value!r} failed") if failed else None
            if on_delivery is not None:
                on_delivery(error, None if failed else RecordMetadata("t", 0, 0, None))
            elif failed and self._on_error is not None:
                self._on_error(error)
        return len(queued)

    def flush(self, _timeout: float) -> int:
        self.poll(0)
        return 0
