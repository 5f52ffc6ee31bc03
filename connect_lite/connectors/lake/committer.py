"""One task's buffered records and the commit rounds that make them visible files.

The state is per topic partition (:class:`PartitionState`): what is buffered
(:class:`BufferedPartition`), the next offset to accept (after the last record buffered or in
a visible file; redelivered and rewound records below it are skipped), and the marks of a run
being put and of a rewind. A commit round takes complete segments of some partitions and goes
through these phases:

1. *writing*: Spark writes the round's files to ``<task>/tmp/<round>/``. A failure here
   deletes them and changes nothing.
2. *deciding*: the journal is written. If that fails, the round is undecided until a
   later call finds out whether the journal (or one of its renamed files) exists.
3. *committed*: the journal exists. The segments leave the buffered state; the journal is
   rolled forward (a failure leaves it pending, retried before anything else).

A put is atomic for the worker. Records of a run (the records of one ``put_dataframe``,
handed over again after a ``RetriableError``) stay buffered while the worker retries, and
are unbuffered when the put fails otherwise, since the worker then skips them (errors.tolerance
``all``) or fails. If a round also held records of earlier runs and they fail alone too,
those partitions are unbuffered and the consumer rewound to read them again (``rewinds``):
until the records come again, later records of the partition are skipped (they come again
too), and the records read again are committed at the end of each put, so that a failure
is the failure of the put that holds them.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import uuid
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from connect_lite.api import ConnectError, DataError, RetriableError, TopicPartition

from . import journal, spark_io
from .config import Extractor, LakeConfig
from .errors import is_retriable
from .journal import Journal
from .layout import FileName, Layout, unescape_partition_value
from .partitioning import FILE_COLUMN, BatchPlan
from .rotation import BufferedPartition, Piece
from .spark_io import PARTITION_COLUMN, PartitionRows
from .store import Store

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Round:
    journal: Journal
    cuts: Mapping[TopicPartition, int]


@dataclass(frozen=True)
class _Mark:
    """How to unbuffer what the run being put buffered for one partition."""

    next_offset: int | None  # the partition's next offset before the run
    first_offset: int  # the first offset the run buffered


@dataclass
class PartitionState:
    """What the committer knows of one topic partition of its task: created when the
    partition's first records are buffered or recovery finds its visible files, dropped when
    it is forgotten (closed or opened again). A field is None when it does not apply."""

    buffer: BufferedPartition | None = None
    """The records buffered and not yet in visible files: their offsets, times and
    directories, the pieces holding them, and where segments end. None when nothing was
    buffered or it was unbuffered; a round that commits all of it leaves it empty."""
    next_offset: int | None = None
    """The next offset to accept: after the last record buffered or in a visible file.
    Records below it (redelivered, or from before a rewind) are skipped. None when neither
    is known."""
    run_mark: _Mark | None = None
    """How to unbuffer what the run being put buffered of this partition; None between runs
    and when the run buffered nothing of it."""
    reread_until: int | None = None
    """Set when the partition's buffered records could not be committed and it was rewound,
    until those records come again: the last offset that was buffered. Later records that
    arrive first are skipped (they come again too)."""
    eager_until: int | None = None
    """Set once the records read again after a rewind come (or the worker's position shows
    the rewind took place), until the put that reaches this offset: the partition's buffered
    records are committed at the end of each put, so that their failure fails that put."""


class _EarlierFailed(Exception):
    """Records buffered by earlier runs failed to commit; their partitions are rewound."""


class Committer:
    """Buffers batches and commits segments for one task, on one store."""

    def __init__(
        self, config: LakeConfig, layout: Layout, store: Store, clock: Callable[[], float]
    ) -> None:
        self.config = config
        self.layout = layout
        self.store = store
        self._clock = clock
        self.partitions: dict[TopicPartition, PartitionState] = {}
        """The state of each topic partition the committer knows (see PartitionState)."""
        self._put_refs: dict[str, set[TopicPartition]] = {}
        """Buffer directory of a put -> partitions whose pieces in it are still buffered (per
        put, not per partition: a put's directory goes once no partition holds a piece in it)."""
        self._undecided: _Round | None = None
        self._pending: list[Journal] = []
        self.rounds = 0
        """How many rounds this committer committed."""
        self._in_run = False
        """Whether a run is being put (its marks are the partitions' ``run_mark``): from its
        first put until one returns."""
        self._run_committed = False
        """Whether a round committed records of the run (it can no longer be undone)."""
        self.rewinds: dict[TopicPartition, int] = {}
        """Offsets the task is to rewind partitions to (``context.offset``), then clear (a
        request to the task, which drains it after each put, not partition state)."""

    def _state(self, tp: TopicPartition) -> PartitionState:
        """The partition's state, new if it has none."""
        state = self.partitions.get(tp)
        if state is None:
            state = self.partitions[tp] = PartitionState()
        return state

    def _buffer(self, tp: TopicPartition) -> BufferedPartition | None:
        state = self.partitions.get(tp)
        return state.buffer if state is not None else None

    def _buffers(self) -> list[tuple[TopicPartition, BufferedPartition]]:
        return [(tp, s.buffer) for tp, s in self.partitions.items() if s.buffer is not None]

    def _cut_buffer(self, tp: TopicPartition) -> BufferedPartition:
        """The buffer of a partition a round cuts (it has one)."""
        buffer = self._buffer(tp)
        if buffer is None:
            raise KeyError(tp)
        return buffer

    def _clear_run_marks(self) -> None:
        for state in self.partitions.values():
            state.run_mark = None

    # -- recovery ----------------------------------------------------------------------

    def recover(self, partitions: Collection[TopicPartition]) -> dict[TopicPartition, int]:
        """Settle this task's rounds, roll forward every journal of the connector, delete
        this task's unreferenced buffered pieces and temporary files, and return the offset after
        the last record in a visible file of each partition that has one."""
        self.settle()
        for found in journal.find(self.store, self.layout):
            journal.roll_forward(self.store, found)
        self._sweep()
        lasts = self.visible_last_offsets({tp.topic for tp in partitions})
        starts = {tp: lasts[tp] + 1 for tp in partitions if tp in lasts}
        for tp, start in starts.items():
            state = self._state(tp)
            known = state.next_offset
            state.next_offset = max(start, known if known is not None else start)
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
        """Drop the partitions' buffered records (a revoked partition is re-read by its next
        owner from its visible files); their pieces are deleted if the store allows."""
        for tp in partitions:
            self.rewinds.pop(tp, None)
            state = self.partitions.pop(tp, None)
            if state is not None and state.buffer is not None:
                self._release(tp, state.buffer.pieces)

    def _sweep(self) -> None:
        store, layout = self.store, self.layout
        for name, _ in store.list_dir(layout.buffer_root):
            put_dir = f"{layout.buffer_root}/{name}"
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
        """Buffer one batch and commit every segment that is complete; returns the offset
        after the batch's last record, per partition.

        Records of partitions not in ``assigned`` (when given) are refused before anything
        is buffered. An error that is not retriable leaves nothing of the run buffered."""
        try:
            self.settle()
        except Exception as error:
            raise _retry(error, "finishing an earlier commit round failed") from error
        if not self._in_run:
            self._in_run, self._run_committed = True, False
        try:
            rows = spark_io.collect_rows(df, plan)
            _check_partitions(rows, assigned)
            try:
                self._put_rows(df, plan, session, rows)
            except _EarlierFailed:  # the run was unbuffered; without those records it may pass
                self._clear_run_marks()
                self._run_committed = False
                self._put_rows(df, plan, session, rows)
        except Exception as error:
            if is_retriable(error):
                raise  # the records are handed over again: what the run buffered stays
            self._undo_run(error)
            if isinstance(error, _EarlierFailed):  # again, with the run's records unbuffered
                raise ConnectError(f"{error}; no record of the batch is written") from error
            raise
        self._in_run = False
        self._clear_run_marks()
        return {tp: part.offsets[-1] + 1 for tp, part in rows.items() if part.offsets}

    def _put_rows(
        self, df: Any, plan: BatchPlan, session: Any, rows: dict[TopicPartition, PartitionRows]
    ) -> None:
        now = self._clock()
        batch, skip, eager = self._admit(rows)
        before = {
            tp: len(buffer)
            for tp in batch
            if (buffer := self._buffer(tp)) is not None
            and len(buffer)
            and buffer.type_key != plan.type_key
        }
        before.update(self._scheduled(now))
        if before:
            self._publish_or_blame(session, before, earlier=True)
        if batch:
            self._buffer_batch(df, plan, batch, skip, now)
        cuts = {tp: b.complete for tp, b in self._buffers() if b.complete}
        cuts.update({tp: len(b) for tp in eager if len(b := self._buffer(tp) or ())})
        if cuts:
            self._publish_or_blame(session, cuts, earlier=False)

    def _publish_or_blame(
        self, session: Any, cuts: Mapping[TopicPartition, int], earlier: bool
    ) -> None:
        """Publish; if that fails and not retriably, unbuffer the run, and fail the run (a
        ConnectError); or, for a round of records buffered before the run (``earlier``: a
        schema change or a scheduled rotation), have those read again (_EarlierFailed).

        (A round of complete segments that fails holds records of the run: without them
        the segments are not complete, as they were not before the run.)"""
        rounds = self.rounds
        try:
            self.publish(session, cuts)
        except Exception as error:
            if is_retriable(error):
                raise
            what = self._describe(cuts)
            self._undo_run(error)
            if self.rounds != rounds:  # the journal was written despite the error
                raise RetriableError(
                    f"A commit round failed but was committed ({error}); the batch comes again"
                ) from error
            left = {tp: len(b) for tp in cuts if earlier and len(b := self._buffer(tp) or ())}
            if not left:
                raise ConnectError(
                    f"Writing the files of {what} failed; no record of the batch is written: "
                    f"{error}"
                ) from error
            described = self._describe(left)
            self._read_again(left, error)
            raise _EarlierFailed(
                f"Buffered records of earlier batches ({described}) could not be written; they "
                f"are read again from Kafka: {error}"
            ) from error

    def _undo_run(self, error: BaseException) -> None:
        """Unbuffer what the run buffered, after an error that is not retriable. Raises
        RetriableError if that cannot be done: the store cannot tell whether a round was
        committed, or a round committed records of the run."""
        if self._undecided is not None or self._pending:
            try:
                self.settle()
            except Exception as again:
                raise _retry(again, "the store cannot tell whether a round was committed") from (
                    error
                )
        if self._run_committed:
            raise RetriableError(
                f"Records of this batch are committed already and the rest failed: {error}"
            ) from error
        config = self.config
        for tp, state in list(self.partitions.items()):
            mark, state.run_mark = state.run_mark, None
            if mark is None:
                continue
            buffer = state.buffer
            if buffer is not None:
                gone = buffer.truncate(
                    mark.first_offset, config.flush_size, config.rotate_interval_ms
                )
                if not len(buffer):
                    state.buffer = None
                self._release(tp, gone)
            state.next_offset = mark.next_offset

    def _read_again(self, cuts: Mapping[TopicPartition, int], error: BaseException) -> None:
        """Unbuffer the partitions of records of earlier runs that cannot be committed, and
        have them read again from their first buffered offset."""
        log.error(
            "Buffered records of earlier batches (%s) could not be written; they are read "
            "again from Kafka: %s",
            self._describe(cuts),
            error,
        )
        for tp in cuts:
            buffer = self._cut_buffer(tp)
            state = self.partitions[tp]
            state.buffer = None
            first, last = buffer.first_offset, buffer.last_offset
            self._release(tp, buffer.pieces)
            state.next_offset = first
            state.reread_until = last
            state.eager_until = None
            self.rewinds[tp] = first

    def _describe(self, cuts: Mapping[TopicPartition, int]) -> str:
        parts = []
        for tp in sorted(cuts, key=lambda t: (t.topic, t.partition)):
            buffer = self._buffer(tp)
            if buffer is not None and 0 < cuts[tp] <= len(buffer):
                first, last = buffer.offsets[0], buffer.offsets[cuts[tp] - 1]
                parts.append(f"{tp.topic}-{tp.partition} offsets {first}..{last}")
        return ", ".join(parts) or "no records"

    def seen_positions(self, offsets: Mapping[TopicPartition, int]) -> None:
        """The worker's positions (pre_commit): a partition at or before the last record
        it was rewound for is read again, whatever comes first."""
        for tp, offset in offsets.items():
            state = self.partitions.get(tp)
            if state is not None and state.reread_until is not None:
                last = state.reread_until
                if offset <= last:
                    state.reread_until, state.eager_until = None, last

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
        for tp, buffer in self._buffers():
            since = buffer.buffered_since()
            if since is not None and (now - since) * 1000 >= interval:
                due[tp] = len(buffer)
        return due

    def _admit(
        self, rows: dict[TopicPartition, PartitionRows]
    ) -> tuple[dict[TopicPartition, PartitionRows], dict[TopicPartition, int], set[TopicPartition]]:
        """The rows to buffer per partition: not below its next offset, nulls handled by
        ``behavior.on.null.values``; the partitions that have rows to skip; and those whose
        records are to be committed at the end of the put (records read again)."""
        batch: dict[TopicPartition, PartitionRows] = {}
        skip: dict[TopicPartition, int] = {}
        ahead: set[TopicPartition] = set()
        for tp, part in rows.items():
            if tp.topic.startswith("."):
                raise DataError(f"Topic {tp.topic}: its files would be hidden files")
            state = self.partitions.get(tp)
            last_read = state.reread_until if state is not None else None
            if last_read is not None and part.offsets[0] > last_read:
                skip[tp] = part.offsets[-1] + 1  # ahead of the rewind: these come again
                ahead.add(tp)
                continue
            start = state.next_offset if state is not None else None
            if start is not None and part.offsets[0] < start:
                skip[tp] = start
            kept = self._kept(tp, part, start)
            if kept.offsets:
                batch[tp] = kept
        eager: set[TopicPartition] = set()
        for tp, part in rows.items():  # every record is fine: the records read again came
            state = self.partitions.get(tp)
            if tp in ahead or state is None:
                continue
            last_read, state.reread_until = state.reread_until, None
            if last_read is not None:
                state.eager_until = last_read
            if state.eager_until is not None:
                eager.add(tp)
                if part.offsets[-1] >= state.eager_until:
                    state.eager_until = None
        return batch, skip, eager

    def _kept(self, tp: TopicPartition, part: PartitionRows, start: int | None) -> PartitionRows:
        """A partition's rows to buffer: from ``start``, nulls ignored if configured; raises
        DataError for a null value (unless ignored) and a record without a directory."""
        kept = PartitionRows()
        ignore = self.config.ignore_null_values
        for offset, time, directory, null in zip(
            part.offsets, part.times, part.dirs, part.nulls, strict=True
        ):
            if start is not None and offset < start:
                continue
            if null:
                if ignore:
                    continue
                raise DataError(
                    f"The record at offset {offset} of topic {tp.topic!r} partition "
                    f"{tp.partition} has a null value, and behavior.on.null.values=fail: no "
                    "record of the batch is written (set behavior.on.null.values=ignore to "
                    "skip such records)"
                )
            if directory is None:
                raise DataError(
                    f"The record at offset {offset} of topic {tp.topic!r} partition "
                    f"{tp.partition} has no time for the time-based partitioner "
                    f"({self._no_time()}): no record of the batch is written"
                )
            kept.offsets.append(offset)
            kept.times.append(time)
            kept.dirs.append(directory)
        return kept

    def _no_time(self) -> str:
        if self.config.extractor is Extractor.RECORD:
            return "timestamp.extractor=Record and the record has no timestamp"
        return (
            f"timestamp.extractor=RecordField and the value's field "
            f"{self.config.timestamp_field!r} is null or not a time"
        )

    def _buffer_batch(
        self,
        df: Any,
        plan: BatchPlan,
        batch: dict[TopicPartition, PartitionRows],
        skip: dict[TopicPartition, int],
        now: float,
    ) -> None:
        put_dir = f"{self.layout.buffer_root}/{uuid.uuid4().hex}"
        condition = spark_io.keep_rows_sql(skip, self.config.ignore_null_values)
        try:
            spark_io.buffer_batch(df, plan, self.store.url(put_dir), condition)
        except BaseException:
            with contextlib.suppress(Exception):
                self.store.delete(put_dir)
            raise
        self._put_refs[put_dir] = set(batch)
        config = self.config
        for tp, part in batch.items():
            state = self._state(tp)
            if self._in_run and state.run_mark is None:
                state.run_mark = _Mark(state.next_offset, part.offsets[0])
            buffer = state.buffer
            if buffer is None or (not len(buffer) and buffer.type_key != plan.type_key):
                buffer = state.buffer = BufferedPartition(plan.type_key, plan.value_is_struct)
            piece = Piece(spark_io.piece_dir(put_dir, tp), part.offsets[0], part.offsets[-1], now)
            buffer.add(part.offsets, part.times, [d or "" for d in part.dirs], piece)
            buffer.scan(config.flush_size, config.rotate_interval_ms)
            state.next_offset = part.offsets[-1] + 1

    # -- commit rounds -----------------------------------------------------------------

    def publish(self, session: Any, cuts: Mapping[TopicPartition, int]) -> None:
        """Commit the first ``cuts[tp]`` buffered records of each partition as files."""
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
            state = self.partitions.get(tp)
            if state is not None and state.buffer is not None:
                buffer, mark = state.buffer, state.run_mark
                if mark is not None and upto and buffer.offsets[upto - 1] >= mark.first_offset:
                    self._run_committed = True
                self._release(tp, buffer.drop(upto))
        self._pending.append(done.journal)
        self.rounds += 1
        log.debug("Committed %d files in round %s", len(done.journal.renames), done.journal.path)
        try:
            self.settle()
        except Exception:  # committed all the same: settled before anything else
            log.warning(
                "Rolling forward %s failed; retried later", done.journal.path, exc_info=True
            )

    def _write_round(
        self, session: Any, cuts: Mapping[TopicPartition, int], temp_dir: str
    ) -> list[tuple[str, str]]:
        """Write the files of the round, one Spark job per value type; the renames."""
        groups: dict[str, list[TopicPartition]] = {}
        for tp in sorted(cuts, key=lambda t: (t.topic, t.partition)):
            groups.setdefault(self._cut_buffer(tp).type_key, []).append(tp)
        renames: list[tuple[str, str]] = []
        for number, tps in enumerate(groups.values()):
            out_dir = f"{temp_dir}/{number}"
            bounds, pieces, expected = self._files_of(tps, cuts)
            value_is_struct = self._cut_buffer(tps[0]).value_is_struct
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
        """The segments' bounds, the buffered pieces holding them, and file key -> visible
        path of each file to write."""
        config, layout = self.config, self.layout
        extension = config.format.value
        bounds, pieces, expected = [], [], {}
        for tp in tps:
            buffer = self._cut_buffer(tp)
            segments = buffer.segments(cuts[tp])
            low, high = segments[0].first_offset, segments[-1].last_offset
            pieces += [
                self.store.url(p.path)
                for p in buffer.pieces
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
        """Delete pieces no longer buffered (the whole put directory with its last one)."""
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
                log.warning("Could not delete buffered %s; it goes at the next open", target)

    # -- offsets -----------------------------------------------------------------------

    def safe_offsets(self, offsets: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        """Per partition, the first buffered offset if records are buffered (everything before
        it is in visible files or was never to be written), else the offset given; at most
        the offset a partition was rewound to until its records come again."""
        safe = {}
        for tp, offset in offsets.items():
            state = self.partitions.get(tp) or PartitionState()
            if state.reread_until is not None:  # records to read again from there
                offset = min(offset, state.next_offset if state.next_offset is not None else offset)
            buffer = state.buffer
            safe[tp] = (
                min(offset, buffer.first_offset) if buffer is not None and len(buffer) else offset
            )
        return safe


def _retry(error: Exception, what: str) -> RetriableError:
    """A failure to finish a commit round: retried until the store works, whatever the
    error (the round is committed or may be; nothing else may happen before it)."""
    if isinstance(error, RetriableError):
        return error
    return RetriableError(f"The lake store failed, {what}: {error}")


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
