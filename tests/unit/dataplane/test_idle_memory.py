"""IdleTrim: the heap is trimmed once after each stretch of activity, when it stays quiet."""

from __future__ import annotations

import gc
import sys

import pytest

from connect_lite.dataplane.idle_memory import IdleTrim, malloc_trim
from tests.fakes import FakeClock


def test_trims_once_after_the_counters_stay_still_long_enough() -> None:
    clock, trims = FakeClock(), []
    idle = IdleTrim(5.0, clock, lambda: trims.append(clock.now) or True)
    assert idle.observe(()) is False  # the first look: no task yet
    assert idle.observe(("c", 0, 0, 0)) is False  # a task started: activity
    clock.now = 4.9
    assert idle.observe(("c", 0, 0, 0)) is False  # not quiet long enough
    clock.now = 5.0
    assert idle.observe(("c", 0, 0, 0)) is True
    clock.now = 60.0
    assert idle.observe(("c", 0, 0, 0)) is False  # once per quiet spell
    assert trims == [5.0]


def test_activity_starts_a_new_spell_and_nothing_is_trimmed_before_any() -> None:
    clock, trims = FakeClock(), []
    idle = IdleTrim(5.0, clock, lambda: trims.append(clock.now) or True)
    assert idle.observe(()) is False
    clock.now = 100.0
    assert idle.observe(()) is False  # nothing ever flowed: nothing to give back
    idle.observe(("c", 0, 10, 10))
    clock.now = 103.0
    idle.observe(("c", 0, 20, 20))  # still flowing: the clock starts again
    clock.now = 107.0
    assert idle.observe(("c", 0, 20, 20)) is False
    clock.now = 108.0
    assert idle.observe(("c", 0, 20, 20)) is True
    assert trims == [108.0] and idle.trims == 1


def rss_mib() -> int:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmRSS:"))
    return int(line.split()[1]) // 1024


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_malloc_trim_gives_freed_pages_back_in_the_middle_of_the_heap() -> None:
    """Freed blocks below one still in use stay resident until the allocator is asked."""
    blobs = [bytearray(4000) for _ in range(50_000)]  # about 200 MB, malloc's heap
    kept = blobs[::50]  # pins pages across the heap: it cannot shrink from the top
    before = rss_mib()
    del blobs
    gc.collect()
    assert rss_mib() > before - 50, "the allocator already gave the memory back"
    assert malloc_trim() is True
    assert rss_mib() < before - 100
    assert len(kept) == 1_000
