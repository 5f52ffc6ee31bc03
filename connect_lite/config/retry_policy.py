"""The status-store retry policy (``status.storage.retry.*``): exponential backoff with jitter."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RetryPolicy:
    """The ``status.storage.retry.*`` settings."""

    max_retries: int = 5
    initial_backoff_ms: int = 300
    max_backoff_ms: int = 10000
    multiplier: float = 2.0
    jitter: float = 0.25

    @staticmethod
    def from_config(get: Callable[[str], Any]) -> RetryPolicy:
        """From a worker config's ``get``."""
        prefix = "status.storage.retry."
        return RetryPolicy(
            int(get(prefix + "max.retries")),
            int(get(prefix + "initial.backoff.ms")),
            int(get(prefix + "max.backoff.ms")),
            float(get(prefix + "backoff.multiplier")),
            float(get(prefix + "jitter.factor")),
        )

    def delay_ms(self, retry: int, rand: float) -> float:
        """``min(initial * multiplier**retry, max) + capped * jitter * rand`` for rand in [0,1)."""
        try:
            base = self.initial_backoff_ms * self.multiplier**retry
        except OverflowError:
            base = float(self.max_backoff_ms)
        capped = min(base, float(self.max_backoff_ms))
        return capped + capped * self.jitter * rand
