"""The chaos soak's books (scripts/soak_ledger.py): what counts as lost, duplicated, out of
order, and grown, on hand-made deliveries."""

from __future__ import annotations

import pytest

from scripts.soak_ledger import (
    KINDS_ALWAYS,
    LakeFile,
    Sample,
    count_lake,
    count_stream,
    count_table,
    count_topic,
    growth,
    plan_faults,
)

SENT = range(10)


def test_a_stream_with_every_record_once_in_order_is_clean() -> None:
    books = count_stream(SENT, list(SENT), {})
    assert (books.lost, books.duplicated, books.out_of_order) == (0, 0, 0)
    assert (books.sent, books.received) == (10, 10)


def test_a_missing_record_is_lost_and_a_repeat_after_a_crash_is_a_duplicate() -> None:
    # delivered 0-6, then (after a kill) 5-9 again from the last commit; 3 never came
    received = [0, 1, 2, 4, 5, 6, 5, 6, 7, 8, 9]
    books = count_stream(SENT, received, {})
    assert books.lost == 1
    assert books.duplicated == 2
    assert books.out_of_order == 0  # a replay is not an overtaking


def test_re_deliveries_an_offsets_reset_asked_for_are_not_duplicates() -> None:
    received = [*range(10), 6, 7, 8, 9]
    assert count_stream(SENT, received, {6: 1, 7: 1, 8: 1, 9: 1}).duplicated == 0
    assert count_stream(SENT, received, {6: 1, 7: 1}).duplicated == 2
    # more re-deliveries expected than came is not negative
    assert count_stream(SENT, list(SENT), {3: 2}).duplicated == 0


def test_a_record_that_overtakes_another_is_out_of_order() -> None:
    received = [0, 1, 3, 2, 4, 5, 6, 7, 8, 9]
    assert count_stream(SENT, received, {}).out_of_order == 1


def test_records_nobody_sent_are_counted_apart() -> None:
    assert count_stream(SENT, [*SENT, 42, 42], {}).extra["unknown"] == 2


def test_the_topic_is_judged_per_partition_in_offset_order() -> None:
    topic = {(0, 0): 0, (0, 1): 2, (1, 0): 1, (1, 1): 3, (0, 2): 2}
    books = count_topic(range(4), topic, {})
    assert (books.lost, books.duplicated, books.out_of_order) == (0, 1, 0)
    swapped = {(0, 0): 2, (0, 1): 0, (1, 0): 1, (1, 1): 3}
    assert count_topic(range(4), swapped, {}).out_of_order == 1


TOPIC = {(0, offset): offset for offset in range(10)}


def lake_file(first: int, last: int, seqs: list[int] | None = None) -> LakeFile:
    seqs = list(range(first, last + 1)) if seqs is None else seqs
    return LakeFile(f"soak+0+{first:010d}+{last:010d}.parquet", 0, first, last, tuple(seqs))


def test_a_lake_holding_each_kafka_record_once_is_clean() -> None:
    books = count_lake(SENT, [lake_file(0, 4), lake_file(5, 9)], TOPIC, {})
    assert (books.lost, books.duplicated, books.out_of_order) == (0, 0, 0)
    assert books.extra["offsets_missing"] == 0


def test_overlapping_lake_files_are_duplicates_and_a_gap_is_missing() -> None:
    books = count_lake(SENT, [lake_file(0, 4), lake_file(3, 6)], TOPIC, {})
    assert books.duplicated == 2  # offsets 3 and 4 are in two files
    assert books.extra["offsets_missing"] == 3  # 7, 8, 9
    assert books.lost == 3


def test_a_lake_row_that_is_not_the_record_at_its_offset_is_out_of_order() -> None:
    books = count_lake(SENT, [lake_file(0, 4, [0, 1, 3, 2, 4]), lake_file(5, 9)], TOPIC, {})
    assert books.out_of_order == 2
    short = count_lake(SENT, [lake_file(0, 4, [0, 1, 2, 3]), lake_file(5, 9)], TOPIC, {})
    assert short.out_of_order == 4  # the name's range and the rows disagree: every row


def test_the_source_sending_a_record_twice_is_not_the_lakes_duplicate() -> None:
    topic = {**TOPIC, (0, 10): 9}  # the source sent 9 again after a crash
    books = count_lake(SENT, [lake_file(0, 10, [*range(10), 9])], topic, {})
    assert books.duplicated == 0
    assert books.extra["seq_repeats"] == 1


def test_a_table_keyed_by_kafka_coordinates_checks_each_row_against_the_topic() -> None:
    rows = [(0, offset, offset) for offset in range(10)]
    assert count_table(SENT, rows, TOPIC, {}).out_of_order == 0
    wrong = [*rows[:9], (0, 9, 8)]
    books = count_table(SENT, wrong, TOPIC, {})
    assert (books.lost, books.duplicated, books.out_of_order) == (1, 1, 1)


def samples(values: list[float], pid: int = 1, start: float = 0.0) -> list[Sample]:
    return [Sample(start + 2 * i, pid, v) for i, v in enumerate(values)]


def test_a_flat_process_did_not_grow_and_a_leaking_one_did() -> None:
    flat = samples([100.0] * 5 + [120.0] * 80)  # 170 s
    assert growth(flat, warmup_s=10).worst == 0.0  # the climb is in the warm-up
    leak = samples([100.0 + i for i in range(80)])
    grown = growth(leak, warmup_s=10)
    # settled: 105..179, quarters of 18: medians of the second (123-140) and last (162-179)
    assert grown.longest_life == pytest.approx(170.5 / 131.5 - 1)
    assert grown.worst > 0.15


def test_growth_is_judged_over_the_longest_life_and_across_restarts_at_the_same_age() -> None:
    # four lives (kills in between); each flat, but each restart starts higher than the one
    # before; the first life (the soak's start, no backlog) is not compared
    lives = (
        samples([100.0] * 80, pid=1)
        + samples([180.0] * 20, pid=2, start=170)
        + samples([200.0] * 20, pid=3, start=220)
        + samples([240.0] * 20, pid=4, start=270)
    )
    result = growth(lives, warmup_s=10)
    assert result.longest_life == 0.0
    assert result.across_lives == pytest.approx(240 / 180 - 1)
    assert result.longest_life_s == 158
    one_restart = samples([100.0] * 80, pid=1) + samples([180.0] * 20, pid=2, start=170)
    assert growth(one_restart, warmup_s=10).across_lives is None


def test_too_short_a_life_is_not_judged() -> None:
    assert growth(samples([100.0, 200.0, 300.0]), warmup_s=10).longest_life is None
    assert growth([], warmup_s=10).worst == 0.0
    # 100 s of steady growth, but only 90 s after the warm-up: under MIN_JUDGED_S
    young = growth(samples([100.0 + i for i in range(50)]), warmup_s=10)
    assert young.longest_life is None and young.worst == 0.0


def test_counts_grow_by_a_difference_and_a_step_while_settling_is_not_growth() -> None:
    threads = samples([50.0] * 40 + [53.0] * 40)
    assert growth(threads, warmup_s=0, relative=False).longest_life == 3
    settled_late = samples([50.0] * 15 + [53.0] * 65)  # in the first quarter, then flat
    assert growth(settled_late, warmup_s=0, relative=False).longest_life == 0


def test_a_count_that_swings_with_the_work_did_not_grow_and_one_that_keeps_what_it_takes_did() -> (
    None
):
    # open files at 13 or 16 by turns (a connection in flight), all along one life
    swinging = samples([13.0, 16.0, 16.0, 13.0, 14.0] * 20)
    assert growth(swinging, warmup_s=0, relative=False).longest_life == -3
    # the same swings, and one descriptor kept every 5 samples: the floor rises past them
    leaking = samples([v + i // 5 for i, v in enumerate([13.0, 16.0, 16.0, 13.0, 14.0] * 20)])
    # quarters of 25: the second holds 13+5 to 16+9, the last 13+15 to 16+19
    assert growth(leaking, warmup_s=0, relative=False).longest_life == (13 + 15) - (16 + 9)


def test_across_restarts_the_later_half_of_the_lives_is_held_against_the_earlier_half() -> None:
    def lives(levels: list[float]) -> list[Sample]:
        found = samples([10.0] * 80, pid=1)  # the first life: not compared
        for i, level in enumerate(levels):
            found += samples([level, level + 4] * 10, pid=2 + i, start=170 + 50 * i)
        return found

    # a JVM's threads at the same age after each restart: a low first, then 340 +- 15
    swinging = lives([303, 348, 336, 350, 341, 340, 325, 341, 341, 337])
    assert growth(swinging, warmup_s=10, relative=False).across_lives == 325 - 350
    # one thread more after each restart, over the same swings
    creeping = lives([300 + 10 * i for i in range(10)])
    assert growth(creeping, warmup_s=10, relative=False).across_lives == 350 - 340
    # RSS: each life's median at that age (level + 4), then the medians of the halves
    rss = growth(lives([100, 120, 110, 130]), warmup_s=10)
    assert rss.across_lives == pytest.approx(124 / 114 - 1)


def test_a_seed_gives_one_fault_plan_and_a_short_plan_meets_every_kind() -> None:
    plan = plan_faults(7, 20, KINDS_ALWAYS, (4.0, 12.0))
    assert plan == plan_faults(7, 20, KINDS_ALWAYS, (4.0, 12.0))
    assert plan != plan_faults(8, 20, KINDS_ALWAYS, (4.0, 12.0))
    assert {f.kind for f in plan[: len(KINDS_ALWAYS)]} == set(KINDS_ALWAYS)
    assert all(4.0 <= f.gap_s <= 12.0 for f in plan)
    pauses = [f.param for f in plan if f.kind == "pause_broker"]
    assert pauses and all(5 <= p <= 15 for p in pauses)
