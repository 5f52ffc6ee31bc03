"""The Kafka clients of a Spark Python worker process: built on first use, kept, closed together.

A Spark job's functions run in Python worker processes that live across batches. Their Kafka
clients (a sink's range readers, a source's senders) are kept per process and per config, so
a worker reads and writes every batch with the same connections, and closed when the process
retires (``close_all``, from ``pipeline.python_daemon``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

log = logging.getLogger(__name__)


class Closeable(Protocol):
    def close(self) -> Any: ...


C = TypeVar("C", bound=Closeable)

_clients: dict[tuple[str, str], Closeable] = {}
_lock = threading.Lock()


def cached(kind: str, config: Mapping[str, str], build: Callable[[Mapping[str, str]], C]) -> C:
    """This process's client of ``kind`` for ``config``, built with ``build`` on first use."""
    key = (kind, hashlib.sha256(json.dumps(sorted(config.items())).encode()).hexdigest())
    with _lock:
        found = _clients.get(key)
        if found is None:
            found = _clients[key] = build(config)
        return found  # type: ignore[return-value]  # stored under its kind by this function


def close_all() -> None:
    """Close this process's clients (its Python worker retires)."""
    with _lock:
        clients = list(_clients.values())
        _clients.clear()
    for client in clients:
        try:
            client.close()
        except Exception:  # a client that fails to close must not keep the others open
            log.warning("A Kafka client of a Python worker failed to close", exc_info=True)


__all__ = ["cached", "close_all"]
