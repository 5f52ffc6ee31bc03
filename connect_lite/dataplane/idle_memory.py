"""Idle memory: the data plane gives the heap its batches used back to the OS once they stop.

Under load a task holds batches of up to 200,000 records; when they are freed, CPython hands
most of that memory to the C allocator, which keeps it for later (in one arena per thread
that allocated it), so the data-plane process stayed near its busy size when nothing flowed.
``IdleTrim`` watches the tasks' counters and, once they have not moved for IDLE_TRIM_S,
collects garbage and asks the allocator (glibc's ``malloc_trim``) to return its free pages.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import time
from collections.abc import Callable, Hashable

log = logging.getLogger(__name__)

_NOTHING_YET = object()

IDLE_TRIM_S = 5.0
"""How long the tasks' counters stay still before the heap is trimmed (once per quiet spell)."""


def malloc_trim() -> bool:
    """Ask glibc to return the free memory of every arena to the OS; False where there is no
    glibc (the memory then stays with the process, as before)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return False
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return bool(trim(0))


class IdleTrim:
    """Trims the heap once after each stretch of activity, when it has been quiet long enough."""

    def __init__(
        self,
        quiet_s: float = IDLE_TRIM_S,
        clock: Callable[[], float] = time.monotonic,
        trim: Callable[[], bool] = malloc_trim,
    ) -> None:
        self.quiet_s = quiet_s
        self._clock = clock
        self._trim = trim
        self._seen: Hashable = _NOTHING_YET
        self._changed_at = clock()
        self._trimmed = True  # nothing to give back before the first activity
        self.trims = 0

    def observe(self, activity: Hashable) -> bool:
        """Called now and then with something that changes while records flow (the tasks'
        counters); True when this call trimmed the heap."""
        now = self._clock()
        if self._seen is _NOTHING_YET:  # the first look: where things stand, not activity
            self._seen = activity
            return False
        if activity != self._seen:
            self._seen = activity
            self._changed_at = now
            self._trimmed = False
            return False
        if self._trimmed or now - self._changed_at < self.quiet_s:
            return False
        self._trimmed = True
        gc.collect()
        returned = self._trim()
        self.trims += 1
        log.debug("The data plane is idle: heap trimmed (%s)", "done" if returned else "no-op")
        return True


__all__ = ["IDLE_TRIM_S", "IdleTrim", "malloc_trim"]
