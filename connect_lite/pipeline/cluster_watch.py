"""When a Spark cluster counts as unreachable, and how long to wait before trying it again.

Spark's standalone app client does not give up on a lost master: the driver logs "Disconnected
from Spark cluster! Waiting for reconnection...", loses its executors, and its jobs wait for
new ones ("Initial job has not accepted any resources") for ever. A master started again
without recovery mode does not know the application, so they never come. The engine
therefore probes its session about once a second (cluster_keeper.py) and feeds the probes
to a :class:`ClusterWatch`; once it says unreachable, the session is stopped and built again
with :class:`Backoff` between attempts. No pyspark here: the logic runs on plain numbers.
"""

from __future__ import annotations

import time
from collections.abc import Callable

UNREACHABLE_AFTER_S = 30.0
"""How long a session on a cluster may have no executor before Spark counts as unreachable.
Executors come within seconds of a start on a live cluster; one lost executor is replaced
by Spark itself (its tasks rerun on the others)."""


class ClusterWatch:
    """Turns probes of a cluster session (executors alive, application stopped) into a reason
    why Spark is unreachable, or None while it is not."""

    def __init__(
        self,
        unreachable_after_s: float = UNREACHABLE_AFTER_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.unreachable_after_s = unreachable_after_s
        self._clock = clock
        self._without_executors_since: float | None = None

    def observe(self, executors: int | None, stopped: bool, master: str) -> str | None:
        """One probe: ``executors`` registered now (None if the probe itself failed), and
        whether the SparkContext was stopped under us (the app client gave up on the master)."""
        if stopped:
            return f"the application was stopped: the master at {master} is unresponsive"
        now = self._clock()
        if executors:
            self._without_executors_since = None
            return None
        if self._without_executors_since is None:
            self._without_executors_since = now
        waited = now - self._without_executors_since
        if waited < self.unreachable_after_s:
            return None
        return (
            f"no executor for {waited:.0f} s: the master at {master} or its workers are unreachable"
        )

    def reset(self) -> None:
        """A new session: its executors have their own time to come."""
        self._without_executors_since = None


class Backoff:
    """Exponential delays between attempts: ``initial_s``, doubled each time, at most ``max_s``."""

    def __init__(self, initial_s: float = 1.0, max_s: float = 30.0) -> None:
        self.initial_s = initial_s
        self.max_s = max_s
        self._attempts = 0

    def next(self) -> float:
        """The delay before the next attempt."""
        delay = min(self.max_s, self.initial_s * 2 ** min(self._attempts, 32))
        self._attempts += 1
        return delay

    def reset(self) -> None:
        self._attempts = 0
