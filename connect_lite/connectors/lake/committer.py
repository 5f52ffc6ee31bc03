"""One task's staged records and the commit rounds that make them visible files.

The state is per topic partition: what is staged (:class:`StagedPartition`) and the next
offset to accept (after the last record staged or in a visible file; redelivered and
rewound records below it are skipped). A commit round takes complete segments of some
partitions and goes through these phases:

1. *writing*: Spark writes the round's files to ``<task>/tmp/<round>/``. A failure here
   deletes them and changes nothing.
2. *deciding*: the journal is written. If that fails, the round is undecided until a
   later call finds out whether the journal (or one of its renamed files) exists.
3. *committed*: the journal exists. The segments leave the staged state; the journal is
   rolled forward (a failure leaves it pending, retried before anything else).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import uuid
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from connect_lite.api import ConnectError, DataError, TopicPartition

from . import journal, spark_io
from .config import LakeConfig
from .journal import Journal
from .layout import FileName, Layout, unescape_partition_value
from .partitioning import FILE_COLUMN, BatchPlan
from .rotation import Piece, StagedPartition
from .spark_io import PARTITION_COLUMN, PartitionRows
from .store import Store

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Round:
    journal: Journal
    cuts: Mapping[TopicPartition, int]


class Committer:
    """Stages batches and commits segments for one task, on one store."""

    def __init__(
        self, config: LakeConfig, layout: Layout, store: Store, clock: Callable[[], float]
    ) -> None:
        self.config = config
        self.layout = layout
        self.store = store
        self._clock = clock
        self.states: dict[TopicPartition, StagedPartition] = {}
        self.next_offsets: dict[TopicPartition, int] = {}
        self._put_refs: dict[str, set[TopicPartition]] = {}
        """Staging directory of a put -> partitions whose pieces in it are still staged."""
        self._undecided: _Round | None = None
        self._pending: list[Journal] = []
        self.rounds = 0
        """How many rounds this committer committed."""

    # -- recovery ----------------------------------------------------------------------

    def recover(self, partitions: Collection[TopicPartition]) -> dict[TopicPartition, int]:
        """Settle this task's rounds, roll forward every journal of the connector, delete
        this task's unreferenced staging and temporary files, and return the offset after
        the last record in a visible file of each partition that has one."""
        self.settle()
        for found in journal.find(self.store, self.layout):
            journal.roll_forward(self.store, found)
        self._sweep()
        lasts = self.visible_last_offsets({tp.topic for tp in partitions})
        starts = {tp: lasts[tp] + 1 for tp in partitions if tp in lasts}
        for tp, start in starts.items():
            self.next_offsets[tp] = max(start, self.next_offsets.get(tp, start))
        return starts

    def visible_last_offsets(self, topics: Collection[str]) -> dict[TopicPartition, int]:
        """The last offset in the names of the visible files of each partition."""
        lasts: dict[TopicPartition, int] = {}
        for topic in topics:
            for path in self.store.list_files(self.layout.topic_dir(topic)):
                name = FileName.parse(path.rsplit("/", 1)[-1])
                if name is None or name.topic != topic:
                    continue
                tp = TopicPartition(topic, name.partition)
                lasts[tp] = max(lasts.get(tp, -1), name.last_offset)
        return lasts

    def forget(self, partitions: Collection[TopicPartition]) -> None:
        """Drop the partitions' staged records (a revoked partition is re-read by its next
        owner from its visible files); their pieces are deleted if the store allows."""
        for tp in partitions:
            self.next_offsets.pop(tp, None)
            state = self.states.pop(tp, None)
            if state is not None:
                self._release(tp, state.pieces)

    def _sweep(self) -> None:
        store, layout = self.store, self.layout
        for name, _ in store.list_dir(layout.staging_root):
            put_dir = f"{layout.staging_root}/{name}"
            refs = self._put_refs.get(put_dir)
            if not refs:
                store.delete(put_dir)
                continue
            keep = {spark_io.piece_dir(put_dir, tp).rsplit("/", 1)[-1] for tp in refs}
            for entry, _ in store.list_dir(put_dir):
                if entry.startswith(PARTITION_COLUMN + "=") and entry not in keep:
                    store.delete(f"{put_dir}/{entry}")
        undecided = self._undecided.journal.temp_dir if self._undecided else None
        for name, _ in store.list_dir(layout.temp_root):
            if f"{layout.temp_root}/{name}" != undecided:
                store.delete(f"{layout.temp_root}/{name}")
        for name, is_dir in store.list_dir(layout.task_root):
            if not is_dir and name.startswith("journal-") and name.endswith(".tmp"):
                store.delete(f"{layout.task_root}/{name}")

    # -- rounds left open by a failure ---------------------------------------------------

    def settle(self) -> None:
        """Decide an undecided round and roll forward pending journals; raises if the
        store still fails (the state stays as it was)."""
        if self._undecided is not None:
            undecided = self._undecided
            if self._was_committed(undecided.journal):
                self._undecided = None
                self._committed(undecided)
            else:
                self.store.delete(undecided.journal.temp_dir)
                self._undecided = None
        while self._pending:
            journal.roll_forward(self.store, self._pending[0])
            self._pending.pop(0)

    @property
    def settled(self) -> bool:
        return self._undecided is None and not self._pending

    def _was_committed(self, j: Journal) -> bool:
        """Whether the journal was written: it exists, or a roll-forward (by any task)
        published one of its files already."""
        return self.store.exists(j.path) or any(self.store.exists(t) for _, t in j.renames)

    # -- putting -----------------------------------------------------------------------

    def put(
        self,
        df: Any,
        plan: BatchPlan,
        session: Any,
        assigned: Collection[TopicPartition] | None = None,
    ) -> dict[TopicPartition, int]:
        """Stage one batch and commit every segment that is complete; returns the offset
        after the batch's last record, per partition. Records of partitions not in
        ``assigned`` (when given) are refused before anything is staged."""
        self.settle()
        now = self._clock()
        rows = spark_io.collect_rows(df, plan)
        _check_partitions(rows, assigned)
        batch, skip = self._admit(rows)
        before = {
            tp: len(self.states[tp])
            for tp in batch
            if tp in self.states
            and len(self.states[tp])
            and self.states[tp].type_key != plan.type_key
        }
        before.update(self._scheduled(now))
        if before:
            self.publish(session, before)
        if batch:
            self._stage(df, plan, batch, skip, now)
        complete = {tp: s.complete for tp, s in self.states.items() if s.complete}
        if complete:
            self.publish(session, complete)
        return {tp: part.offsets[-1] + 1 for tp, part in rows.items() if part.offsets}

    def publish_scheduled(self, session: Any) -> None:
        """Commit what waited ``rotate.schedule.interval.ms`` (from pre_commit)."""
        self.settle()
        due = self._scheduled(self._clock())
        if due:
            self.publish(session, due)

    def _scheduled(self, now: float) -> dict[TopicPartition, int]:
        interval = self.config.rotate_schedule_interval_ms
        if interval <= 0:
            return {}
        due = {}
        for tp, state in self.states.items():
            since = state.staged_since()
            if since is not None and (now - since) * 1000 >= interval:
                due[tp] = len(state)
        return due

    def _admit(
        self, rows: dict[TopicPartition, PartitionRows]
    ) -> tuple[dict[TopicPartition, PartitionRows], dict[TopicPartition, int]]:
        """The rows to stage per partition: not below its next offset, nulls handled by
        ``behavior.on.null.values``; and the partitions that have rows to skip."""
        batch: dict[TopicPartition, PartitionRows] = {}
        skip: dict[TopicPartition, int] = {}
        ignore = self.config.ignore_null_values
        for tp, part in rows.items():
            if tp.topic.startswith("."):
                raise DataError(f"Topic {tp.topic}: its files would be hidden files")
            start = self.next_offsets.get(tp)
            if start is not None and part.offsets[0] < start:
                skip[tp] = start
            kept = PartitionRows()
            for offset, time, directory, null in zip(
                part.offsets, part.times, part.dirs, part.nulls, strict=True
            ):
                if start is not None and offset < start:
                    continue
                if null:
                    if ignore:
                        continue
                    raise DataError(
                        f"Record {tp.topic}-{tp.partition}@{offset} has a null value; set "
                        "behavior.on.null.values=ignore to skip such records"
                    )
                if directory is None:
                    raise DataError(
                        f"Record {tp.topic}-{tp.partition}@{offset}: no directory (the record "
                        "has no time for the time-based partitioner)"
                    )
                kept.offsets.append(offset)
                kept.times.append(time)
                kept.dirs.append(directory)
            if kept.offsets:
                batch[tp] = kept
        return batch, skip

    def _stage(
        self,
        df: Any,
        plan: BatchPlan,
        batch: dict[TopicPartition, PartitionRows],
        skip: dict[TopicPartition, int],
        now: float,
    ) -> None:
        put_dir = f"{self.layout.staging_root}/{uuid.uuid4().hex}"
        condition = spark_io.keep_rows_sql(skip, self.config.ignore_null_values)
        try:
            spark_io.stage(df, plan, self.store.url(put_dir), condition)
        except BaseException:
            with contextlib.suppress(Exception):
                self.store.delete(put_dir)
            raise
        self._put_refs[put_dir] = set(batch)
        config = self.config
        for tp, part in batch.items():
            state = self.states.get(tp)
            if state is None or (not len(state) and state.type_key != plan.type_key):
                state = self.states[tp] = StagedPartition(plan.type_key, plan.value_is_struct)
            piece = Piece(spark_io.piece_dir(put_dir, tp), part.offsets[0], part.offsets[-1], now)
            state.add(part.offsets, part.times, [d or "" for d in part.dirs], piece)
            state.scan(config.flush_size, config.rotate_interval_ms)
            self.next_offsets[tp] = part.offsets[-1] + 1

    # -- commit rounds -----------------------------------------------------------------

    def publish(self, session: Any, cuts: Mapping[TopicPartition, int]) -> None:
        """Commit the first ``cuts[tp]`` staged records of each partition as files."""
        round_id = uuid.uuid4().hex
        temp_dir = f"{self.layout.temp_root}/{round_id}"
        try:
            renames = self._write_round(session, cuts, temp_dir)
            self.store.sync_files([source for source, _ in renames])
        except BaseException:
            with contextlib.suppress(Exception):
                self.store.delete(temp_dir)
            raise
        committed = _Round(Journal(self.layout.journal(round_id), tuple(renames), temp_dir), cuts)
        try:
            journal.write(self.store, committed.journal)
        except BaseException:
            self._undecided = committed
            raise
        self._committed(committed)

    def _committed(self, done: _Round) -> None:
        for tp, upto in done.cuts.items():
            state = self.states.get(tp)
            if state is not None:
                self._release(tp, state.drop(upto))
        self._pending.append(done.journal)
        self.rounds += 1
        log.debug("Committed %d files in round %s", len(done.journal.renames), done.journal.path)
        self.settle()

    def _write_round(
        self, session: Any, cuts: Mapping[TopicPartition, int], temp_dir: str
    ) -> list[tuple[str, str]]:
        """Write the files of the round, one Spark job per value type; the renames."""
        groups: dict[str, list[TopicPartition]] = {}
        for tp in sorted(cuts, key=lambda t: (t.topic, t.partition)):
            groups.setdefault(self.states[tp].type_key, []).append(tp)
        renames: list[tuple[str, str]] = []
        for number, tps in enumerate(groups.values()):
            out_dir = f"{temp_dir}/{number}"
            bounds, pieces, expected = self._files_of(tps, cuts)
            value_is_struct = self.states[tps[0]].value_is_struct
            spark_io.write_files(
                session,
                self.config.format,
                pieces,
                bounds,
                self.store.url(out_dir),
                value_is_struct,
            )
            written = self._written(out_dir)
            if set(written) != set(expected):
                raise ConnectError(
                    f"Spark wrote the files {sorted(written)}, expected {sorted(expected)}"
                )
            renames += [(written[key], target) for key, target in expected.items()]
        return renames

    def _files_of(
        self, tps: list[TopicPartition], cuts: Mapping[TopicPartition, int]
    ) -> tuple[list[tuple[str, int, int, int]], list[str], dict[str, str]]:
        """The segments' bounds, the staged pieces holding them, and file key -> visible
        path of each file to write."""
        config, layout = self.config, self.layout
        extension = config.format.value
        bounds, pieces, expected = [], [], {}
        for tp in tps:
            state = self.states[tp]
            segments = state.segments(cuts[tp])
            low, high = segments[0].first_offset, segments[-1].last_offset
            pieces += [
                self.store.url(p.path)
                for p in state.pieces
                if p.last_offset >= low and p.first_offset <= high
            ]
            for segment in segments:
                bounds.append((tp.topic, tp.partition, segment.first_offset, segment.last_offset))
                for span in segment.files:
                    key = f"{tp.topic}+{tp.partition}+{segment.first_offset}/{span.directory}"
                    name = FileName(
                        tp.topic, tp.partition, span.first_offset, span.last_offset, extension
                    ).render(config.zero_pad_width)
                    expected[key] = layout.visible_file(tp.topic, span.directory, name)
        return bounds, pieces, expected

    def _written(self, out_dir: str) -> dict[str, str]:
        """File key -> path of each data file Spark wrote under ``out_dir``."""
        prefix = FILE_COLUMN + "="
        written: dict[str, str] = {}
        for path in self.store.list_files(out_dir):
            parts = path[len(out_dir) + 1 :].split("/")
            if len(parts) != 2 or not parts[0].startswith(prefix) or parts[1].startswith("_"):
                continue
            key = unescape_partition_value(parts[0][len(prefix) :])
            if key in written:
                raise ConnectError(f"Spark wrote two files for {key}: {written[key]}, {path}")
            written[key] = path
        return written

    def _release(self, tp: TopicPartition, pieces: list[Piece]) -> None:
        """Delete pieces no longer staged (the whole put directory with its last one)."""
        for piece in pieces:
            put_dir = piece.path.rsplit("/", 1)[0]
            refs = self._put_refs.get(put_dir, set())
            refs.discard(tp)
            target = piece.path if refs else put_dir
            if not refs:
                self._put_refs.pop(put_dir, None)
            try:
                self.store.delete(target)
            except Exception:
                log.warning("Could not delete staged %s; it goes at the next open", target)

    # -- offsets -----------------------------------------------------------------------

    def safe_offsets(self, offsets: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        """Per partition, the first staged offset if records are staged (everything before
        it is in visible files or was never to be written), else the offset given."""
        safe = {}
        for tp, offset in offsets.items():
            state = self.states.get(tp)
            safe[tp] = (
                min(offset, state.first_offset) if state is not None and len(state) else offset
            )
        return safe


def _check_partitions(
    rows: Mapping[TopicPartition, PartitionRows], assigned: Collection[TopicPartition] | None
) -> None:
    """Refuse records of a partition this task was not assigned, and records of two
    partitions under one (offsets twice): a transform changed their topic or partition,
    and offsets are tracked per consumed topic partition."""
    for tp, part in rows.items():
        if assigned is not None and tp not in assigned:
            others = ", ".join(
                f"{a.topic}-{a.partition}"
                for a in sorted(assigned, key=lambda a: (a.topic, a.partition))
            )
            raise ConnectError(
                f"LakeSink writes records under their consumed topic and partition; records "
                f"of topic {tp.topic!r} partition {tp.partition} (offsets {part.offsets[0]}.."
                f"{part.offsets[-1]}) are not of a partition this task was assigned "
                f"({others or 'none'}): a transform renamed the topic or changed the "
                "partition (such as RegexRouter), which this sink does not support"
            )
        if any(a == b for a, b in itertools.pairwise(part.offsets)):
            raise ConnectError(
                f"LakeSink writes records under their consumed topic and partition; records "
                f"of topic {tp.topic!r} partition {tp.partition} share offsets: a transform "
                "moved records of another partition there, which this sink does not support"
            )
