"""gc_paused: no cyclic collection while a batch is built, re-entrant, as the caller found it."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from connect_lite.pipeline.executor import gc_paused


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


@pytest.fixture(autouse=True)
def _restore_gc() -> Iterator[None]:
    yield
    gc.enable()


def test_the_collector_is_off_inside_and_on_after_even_nested() -> None:
    gc.enable()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still runs
    assert gc.isenabled()


def test_a_disabled_collector_stays_disabled() -> None:
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()


def test_a_cycle_made_during_a_pause_is_collected_after_it() -> None:
    """py4j's JavaObjects are cycles whose finalizers free the JVM's side: a batch's cycles
    must stay collectable (a gc.freeze after batches kept them, and their JVM objects)."""
    gc.enable()
    with gc_paused():
        a, b = Node(), Node()
        a.other, b.other = b, a
    ref = weakref.ref(a)
    del a, b
    gc.collect()
    assert ref() is None
