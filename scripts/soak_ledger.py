"""The soak's books: what each sink received against what was sent, and how processes grew.

Pure functions over plain data, so that the judgement of ``scripts/soak.py`` is tested on its
own (``tests/unit/scripts/test_soak_ledger.py``) and a run can be judged again from its JSON.

Records carry a sequence number (``seq``), numbered by the soak as it writes them. An offsets
reset makes the source send a stretch of them again: those are *expected re-deliveries*
(``expected_extra[seq]`` counts them), not duplicates.
"""

from __future__ import annotations

import random
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

RSS_GROWTH_LIMIT = 0.15
"""The largest growth of a process's RSS after the warm-up that the soak accepts."""
AGE_WINDOW_S = 20.0
"""The samples that stand for a life at an age: those of the 20 s after it."""
MIN_JUDGED_S = 120.0
"""The shortest stretch after the warm-up over which a life's growth is judged: a short run
whose processes are killed every minute or two says nothing of growth (only of losses)."""


@dataclass
class SinkCount:
    """One sink's (or the source topic's) books; ``extra`` holds figures only some sinks have."""

    sent: int
    received: int
    lost: int
    duplicated: int
    out_of_order: int
    extra: dict[str, int] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        extra = data.pop("extra")
        return {**data, **extra}


def _duplicates(counts: Mapping[int, int], expected_extra: Mapping[int, int]) -> int:
    """Deliveries beyond one per seq and the expected re-deliveries."""
    return sum(max(0, n - 1 - expected_extra.get(seq, 0)) for seq, n in counts.items())


def _first_seen_out_of_order(received: Iterable[int]) -> int:
    """Records delivered for the first time after a record sent later was: a record that
    overtook another. Repeats (re-deliveries after a crash or a reset) are not first times."""
    seen: set[int] = set()
    highest = -1
    late = 0
    for seq in received:
        if seq in seen:
            continue
        seen.add(seq)
        if seq < highest:
            late += 1
        highest = max(highest, seq)
    return late


def count_stream(
    sent: Iterable[int], received: Sequence[int], expected_extra: Mapping[int, int]
) -> SinkCount:
    """A sink whose output is one ordered stream of seqs (a FileStream sink of one
    partition): lost, duplicated beyond the expected re-deliveries, overtaken."""
    sent_set = set(sent)
    counts = Counter(received)
    return SinkCount(
        sent=len(sent_set),
        received=len(received),
        lost=len(sent_set - counts.keys()),
        duplicated=_duplicates(counts, expected_extra),
        out_of_order=_first_seen_out_of_order(received),
        extra={"unknown": sum(n for seq, n in counts.items() if seq not in sent_set)},
    )


Position = tuple[int, int]
"""A Kafka record's (partition, offset) in the soak's topic."""


def count_topic(
    sent: Iterable[int], records: Mapping[Position, int], expected_extra: Mapping[int, int]
) -> SinkCount:
    """The topic the source writes (``records``: (partition, offset) -> seq): lost by the
    source, sent twice by the source beyond the expected re-deliveries (at-least-once after a
    crash), and overtaken within each partition."""
    sent_set = set(sent)
    counts = Counter(records.values())
    by_partition: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for (partition, offset), seq in records.items():
        by_partition[partition].append((offset, seq))
    late = sum(
        _first_seen_out_of_order(seq for _, seq in sorted(rows)) for rows in by_partition.values()
    )
    return SinkCount(
        sent=len(sent_set),
        received=len(records),
        lost=len(sent_set - counts.keys()),
        duplicated=_duplicates(counts, expected_extra),
        out_of_order=late,
        extra={"unknown": sum(n for seq, n in counts.items() if seq not in sent_set)},
    )


@dataclass(frozen=True)
class LakeFile:
    """A visible lake file: its name's partition and offsets, and its rows' seqs in order."""

    name: str
    partition: int
    first: int
    last: int
    seqs: tuple[int, ...]


def count_lake(
    sent: Iterable[int],
    files: Sequence[LakeFile],
    topic: Mapping[Position, int],
    expected_extra: Mapping[int, int],
) -> SinkCount:
    """The lake sink, judged per Kafka record: each (partition, offset) of the topic in exactly
    one visible file, and each row the record of the topic at its offset.

    - ``duplicated``: Kafka records in more than one visible file (must be 0);
    - ``out_of_order``: rows that are not the topic's record at the offset their place in
      the file gives (a file whose row count differs from its name's range counts every row);
    - ``offsets_missing`` (extra): the topic's records in no visible file;
    - ``seq_repeats`` (extra): seqs the lake holds more than once beyond the expected
      re-deliveries, because the source sent them twice (not the lake's doing).
    """
    sent_set = set(sent)
    holders: Counter[Position] = Counter()
    misplaced = 0
    seqs: list[int] = []
    for lake_file in files:
        seqs += lake_file.seqs
        span = lake_file.last - lake_file.first + 1
        if span != len(lake_file.seqs):
            misplaced += len(lake_file.seqs)
            continue
        for i, seq in enumerate(lake_file.seqs):
            position = (lake_file.partition, lake_file.first + i)
            holders[position] += 1
            if topic.get(position) != seq:
                misplaced += 1
    counts = Counter(seqs)
    return SinkCount(
        sent=len(sent_set),
        received=len(seqs),
        lost=len(sent_set - counts.keys()),
        duplicated=sum(n - 1 for n in holders.values() if n > 1),
        out_of_order=misplaced,
        extra={
            "offsets_missing": len(topic.keys() - holders.keys()),
            "seq_repeats": _duplicates(counts, expected_extra),
            "files": len(files),
        },
    )


def count_table(
    sent: Iterable[int],
    rows: Sequence[tuple[int, int, int]],
    topic: Mapping[Position, int],
    expected_extra: Mapping[int, int],
) -> SinkCount:
    """A JDBC sink table keyed by the Kafka coordinates (``pk.mode=kafka``, upsert): rows are
    (partition, offset, seq). ``duplicated`` counts seqs held more than once beyond the
    expected re-deliveries; ``out_of_order`` rows whose seq is not the topic's record at their
    coordinates (a row written for the wrong record)."""
    sent_set = set(sent)
    counts = Counter(seq for _, _, seq in rows)
    return SinkCount(
        sent=len(sent_set),
        received=len(rows),
        lost=len(sent_set - counts.keys()),
        duplicated=_duplicates(counts, expected_extra),
        out_of_order=sum(1 for p, o, seq in rows if topic.get((p, o)) != seq),
        extra={"offsets_missing": len(topic.keys() - {(p, o) for p, o, _ in rows})},
    )


# -- growth -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    """One reading of one process: seconds since the soak began, its pid, the value."""

    t: float
    pid: int
    value: float


def _lives(samples: Sequence[Sample]) -> list[list[Sample]]:
    """The samples split into one list per process life (a kill gives a new pid)."""
    lives: dict[int, list[Sample]] = {}
    for sample in sorted(samples, key=lambda s: s.t):
        lives.setdefault(sample.pid, []).append(sample)
    return list(lives.values())


def _quarters(values: Sequence[float]) -> tuple[list[float], list[float]]:
    """The second and the last quarter (the first still settles: a pool's first thread, a
    client's first connections come once, then stay)."""
    n = max(1, len(values) // 4)
    return list(values[n : 2 * n]), list(values[-n:])


@dataclass(frozen=True)
class Growth:
    """How a figure grew: over the longest life after the warm-up, and from the first life to
    the last at the same age (the warm-up's end). ``None`` where there was too little to
    judge (a life shorter than the warm-up, or only one life)."""

    longest_life: float | None
    across_lives: float | None
    longest_life_s: float

    @property
    def worst(self) -> float:
        known = [g for g in (self.longest_life, self.across_lives) if g is not None]
        return max(known, default=0.0)


def growth(samples: Sequence[Sample], warmup_s: float, relative: bool = True) -> Growth:
    """Growth of a sampled figure, judged like for like since a kill resets a process.

    - Over the longest life: its samples after the warm-up, the last quarter against the
      second quarter (at least 8 samples, over MIN_JUDGED_S).
    - Across restarts: the lives begun by a restart (not the first, which began with an idle
      pipeline and no backlog), each one's samples in AGE_WINDOW_S after the warm-up's age;
      the later half of those lives against the earlier half.

    ``relative`` (RSS): a ratio minus 1 between the two stretches' medians. Otherwise
    (threads, open files) the later stretch's least value minus the earlier stretch's
    greatest, positive only when the later stretch stands wholly above the earlier one. A
    request, a batch or a connection in flight holds a thread or a descriptor for a while and
    gives it back, and a pool keeps idle threads for a minute, so a count swings by a few, and
    in the JVM by tens, with what runs at the moment: in a 40-minute run the worker's open files
    stood at 13, 16, 16, 13, 11, 14... at the same age after each restart, and the JVM's threads
    at 303 to 350. A leak keeps what it takes, so the later values all stand higher.
    """

    def change(before: Sequence[float], after: Sequence[float]) -> float:
        if relative:
            start = statistics.median(before)
            return statistics.median(after) / start - 1 if start else 0.0
        return min(after) - max(before)

    lives = _lives(samples)
    if not lives:
        return Growth(None, None, 0.0)
    longest = max(lives, key=lambda life: life[-1].t - life[0].t)
    settled = [s.value for s in longest if s.t - longest[0].t >= warmup_s]
    over_life = None
    if len(settled) >= 8 and longest[-1].t - longest[0].t - warmup_s >= MIN_JUDGED_S:
        first, last = _quarters(settled)
        over_life = change(first, last)
    at_age = []
    for life in lives[1:]:
        window = [s.value for s in life if 0 <= s.t - life[0].t - warmup_s <= AGE_WINDOW_S]
        if window and life[-1].t - life[0].t >= warmup_s + AGE_WINDOW_S:
            at_age.append(statistics.median(window) if relative else min(window))
    across = None
    if len(at_age) >= 2:
        half = len(at_age) // 2
        across = change(at_age[:half], at_age[-half:])
    return Growth(over_life, across, longest[-1].t - longest[0].t)


# -- the fault plan -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Fault:
    """One planned fault: its kind, the quiet time before it, and the kind's parameter (the
    broker's pause in seconds, the new tasks.max, how many records back a reset goes, how
    many bad clients...)."""

    kind: str
    gap_s: float
    param: int


KINDS_ALWAYS = (
    "kill_worker",
    "kill_dataplane",
    "kill_jvm",
    "pause_broker",
    "restart_connector",
    "reset_source_offsets",
    "change_tasks_max",
    "bad_rest_clients",
)
KIND_POSTGRES = "kill_postgres"
KIND_MQTT = "kill_mosquitto"


def plan_faults(
    seed: int, count: int, kinds: Sequence[str], gap_s: tuple[float, float]
) -> list[Fault]:
    """The fault sequence a seed gives: the same seed and kinds, the same faults. The first
    faults go once through every kind in a shuffled order, so a short run meets each."""
    rng = random.Random(seed)
    order = list(kinds)
    rng.shuffle(order)
    plan = []
    for i in range(count):
        kind = order[i] if i < len(order) else rng.choice(kinds)
        params = {
            "pause_broker": (5, 15),
            "change_tasks_max": (1, 3),
            "reset_source_offsets": (50, 2000),
            "bad_rest_clients": (10, 40),
            "restart_connector": (0, 3),
        }.get(kind, (0, 0))
        plan.append(Fault(kind, round(rng.uniform(*gap_s), 1), rng.randint(*params)))
    return plan
