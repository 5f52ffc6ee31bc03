"""gc_paused: no collection while a batch is built; its objects frozen after, thawed at times."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from connect_lite.pipeline import executor
from connect_lite.pipeline.executor import gc_paused


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


@pytest.fixture(autouse=True)
def _restore_gc() -> Iterator[None]:
    yield
    gc.unfreeze()
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


def test_a_batchs_objects_are_frozen_when_the_pause_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    gc.enable()
    monkeypatch.setattr(executor, "_next_thaw", float("inf"))  # not due
    gc.unfreeze()
    with gc_paused():
        batch = [Node() for _ in range(1000)]
    assert gc.get_freeze_count() >= len(batch)
    before = gc.get_freeze_count()
    del batch  # frozen objects are still freed by reference counting
    assert gc.get_freeze_count() <= before - 1000


def test_when_due_the_frozen_objects_are_thawed_and_a_frozen_cycle_is_collected(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gc.enable()
    monkeypatch.setattr(executor, "_next_thaw", float("inf"))
    with gc_paused():
        a, b = Node(), Node()
        a.other, b.other = b, a  # a cycle: only the collector frees it
    ref = weakref.ref(a)
    del a, b
    gc.collect()
    assert ref() is not None  # frozen: no collection sees it
    monkeypatch.setattr(executor, "_next_thaw", 0.0)  # due now
    with gc_paused():
        pass
    assert gc.get_freeze_count() == 0 and executor._next_thaw > 0
    gc.collect()
    assert ref() is None
