"""Where files are cut: flush.size, rotate.interval.ms, and what a segment's files hold."""

from __future__ import annotations

import pytest

from connect_lite.connectors.lake.rotation import BufferedPartition, FileSpan, Piece, Segment


def buffered(
    offsets: list[int],
    times: list[int | None] | None = None,
    dirs: list[str] | None = None,
    at: float = 0.0,
    state: BufferedPartition | None = None,
) -> BufferedPartition:
    state = state if state is not None else BufferedPartition("type", True)
    piece = Piece(f"piece-{offsets[0]}", offsets[0], offsets[-1], at)
    state.add(offsets, times or [None] * len(offsets), dirs or ["d"] * len(offsets), piece)
    return state


def test_flush_size_counts_records_across_puts() -> None:
    state = buffered([0, 1, 2])
    state.scan(flush_size=4, interval_ms=-1)
    assert state.complete == 0
    buffered([3, 4, 5, 6, 7, 8], state=state)
    state.scan(4, -1)
    assert state.ends == [4, 8] and state.complete == 8
    assert [(s.first_offset, s.last_offset) for s in state.segments(8)] == [(0, 3), (4, 7)]


def test_record_time_cuts_before_the_record_past_the_interval() -> None:
    state = buffered([10, 11, 12, 13, 14], times=[1000, 1500, 1999, 2000, 2100])
    state.scan(flush_size=100, interval_ms=1000)
    assert state.ends == [3]  # 13's time is 1000 + 1000: it starts the next file
    buffered([15, 16], times=[2999, 3000], state=state)
    state.scan(100, 1000)
    assert state.ends == [3, 6]  # the second file started at 2000


def test_records_without_time_neither_start_nor_cut() -> None:
    state = buffered([0, 1, 2, 3], times=[None, 5000, None, 6000])
    state.scan(flush_size=100, interval_ms=1000)
    assert state.ends == [3]  # base 5000 (the first timed record), 6000 cuts


def test_size_and_time_together() -> None:
    state = buffered([0, 1, 2, 3, 4], times=[0, 1, 2, 5000, 5001])
    state.scan(flush_size=2, interval_ms=1000)
    # [0,1] by size; [2] by time (3 is past 2+1000); [3,4] by size
    assert state.ends == [2, 3, 5]


def test_segments_hold_one_file_per_directory() -> None:
    state = buffered([0, 2, 3, 5, 9], dirs=["a", "b", "a", "a", "b"])
    state.scan(flush_size=3, interval_ms=-1)
    assert state.segments(5) == [
        Segment(0, 3, (FileSpan("a", 0, 3, 2), FileSpan("b", 2, 2, 1))),
        Segment(5, 9, (FileSpan("a", 5, 5, 1), FileSpan("b", 9, 9, 1))),  # the rest, forced
    ]


def test_drop_keeps_the_open_segment_and_returns_consumed_pieces() -> None:
    state = buffered([0, 1, 2], times=[0, 10, 20], at=1.0)
    buffered([3, 4, 5], times=[30, 40, 50], at=2.0, state=state)
    state.scan(flush_size=4, interval_ms=100)
    assert state.complete == 4
    consumed = state.drop(4)
    assert [p.path for p in consumed] == ["piece-0"]
    assert list(state.offsets) == [4, 5] and state.ends == []
    assert state.buffered_since() == 2.0  # the piece holding offset 4
    buffered([6, 7, 8], times=[60, 100, 110], at=3.0, state=state)
    state.scan(4, 100)
    # the open segment began at offset 4 (time 40): 6 and 7 fill it to four records
    assert state.ends == [4] and state.segments(4)[0].first_offset == 4
    assert [p.path for p in state.drop(len(state))] == ["piece-3", "piece-6"]
    assert len(state) == 0 and state.buffered_since() is None


def test_drop_refuses_a_cut_inside_a_segment() -> None:
    state = buffered([0, 1, 2])
    state.scan(flush_size=2, interval_ms=-1)
    with pytest.raises(ValueError, match="not a segment end"):
        state.drop(1)


def test_offsets_must_grow() -> None:
    state = buffered([5, 6])
    with pytest.raises(ValueError, match="offset 6 is not after 6"):
        buffered([6, 7], state=state)


PUTS = [[0, 1], [2, 3, 4], [5], [6, 7, 8, 9]]
TIMES = {0: 0, 1: 400, 2: 1000, 3: 1100, 4: 2100, 5: 2200, 6: 2300, 7: 9000, 8: 9100, 9: 9200}


def buffered_puts(puts: list[list[int]], flush: int, interval: int) -> BufferedPartition:
    state = BufferedPartition("type", True)
    for offsets in puts:
        buffered(offsets, times=[TIMES[o] for o in offsets], state=state)
        state.scan(flush, interval)
    return state


@pytest.mark.parametrize("kept", [0, 1, 2, 3])
@pytest.mark.parametrize(("flush", "interval"), [(3, -1), (100, 1000), (3, 1000)])
def test_truncate_restores_the_state_before_the_last_puts(
    kept: int, flush: int, interval: int
) -> None:
    """Puts undone: the segments are as if their records had never been buffered."""
    state = buffered_puts(PUTS, flush, interval)
    before = buffered_puts(PUTS[:kept], flush, interval)
    gone = state.truncate(PUTS[kept][0], flush, interval)
    assert [p.first_offset for p in gone] == [put[0] for put in PUTS[kept:]]
    assert list(state.offsets) == list(before.offsets) and state.pieces == before.pieces
    assert state.ends == before.ends
    for offsets in ([20, 21], [22, 23, 24, 25]):  # and they go on alike
        for s in (state, before):
            buffered(offsets, times=[9300 + o * 300 for o in offsets], state=s)
            s.scan(flush, interval)
    assert state.ends == before.ends
    assert state.segments(len(state)) == before.segments(len(before))


def test_truncate_drops_a_time_cut_made_by_a_record_it_removes() -> None:
    state = buffered([0, 1], times=[0, 10])
    state.scan(flush_size=100, interval_ms=1000)
    buffered([2], times=[5000], state=state)  # its time cuts before it: [0, 1] is complete
    state.scan(100, 1000)
    assert state.complete == 2
    assert [p.first_offset for p in state.truncate(2, 100, 1000)] == [2]
    assert state.complete == 0 and list(state.offsets) == [0, 1]
    buffered([3], times=[20], state=state)
    state.scan(100, 1000)
    assert state.complete == 0
    assert state.truncate(0, 100, 1000) and len(state) == 0 and state.pieces == []
