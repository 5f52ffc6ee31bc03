"""What is buffered for one topic partition, and where its files are cut (pure Python).

Records of a topic partition are buffered in offset order. They are cut into *segments*, each
committed as one file per directory: a segment ends after ``flush.size`` records, or just
before a record whose time is ``rotate.interval.ms`` or more after the time of the
segment's first record (Confluent's rotation, counted over the whole topic partition). A
scheduled rotation or a schema change ends a segment after everything buffered.
"""

from __future__ import annotations

import bisect
from array import array
from dataclasses import dataclass


@dataclass(frozen=True)
class Piece:
    """One put's records of one topic partition, buffered in one directory."""

    path: str
    first_offset: int
    last_offset: int
    buffered_at: float  # wall clock, seconds


@dataclass(frozen=True)
class FileSpan:
    """The records of one segment in one directory: one visible file."""

    directory: str
    first_offset: int
    last_offset: int
    count: int


@dataclass(frozen=True)
class Segment:
    first_offset: int
    last_offset: int
    files: tuple[FileSpan, ...]


class BufferedPartition:
    """The buffered records of one topic partition: offsets, times and directories, the
    pieces holding them, and where complete segments end."""

    def __init__(self, type_key: str, value_is_struct: bool) -> None:
        self.type_key = type_key
        """The value type of every buffered record (a new type starts a new segment)."""
        self.value_is_struct = value_is_struct
        self.offsets = array("q")
        self.times: list[int | None] = []
        self._dirs = array("l")
        self._dir_names: list[str] = []
        self._dir_ids: dict[str, int] = {}
        self.pieces: list[Piece] = []
        self.ends: list[int] = []
        """Exclusive ends (record counts from the front) of the complete segments."""
        self._scanned = 0
        self._start = 0  # where the open segment starts
        self._base: int | None = None  # time of the open segment's first timed record

    def __len__(self) -> int:
        return len(self.offsets)

    @property
    def first_offset(self) -> int:
        return self.offsets[0]

    @property
    def last_offset(self) -> int:
        return self.offsets[-1]

    def add(
        self, offsets: list[int], times: list[int | None], dirs: list[str], piece: Piece
    ) -> None:
        """Append one put's records (ascending offsets after those buffered)."""
        if self.offsets and offsets and offsets[0] <= self.offsets[-1]:
            raise ValueError(f"offset {offsets[0]} is not after {self.offsets[-1]}")
        self.offsets.extend(offsets)
        self.times.extend(times)
        ids = self._dir_ids
        for name in dirs:
            if name not in ids:
                ids[name] = len(self._dir_names)
                self._dir_names.append(name)
        self._dirs.extend(ids[name] for name in dirs)
        self.pieces.append(piece)

    def scan(self, flush_size: int, interval_ms: int) -> None:
        """Find the segment ends among the records added since the last scan."""
        for i in range(self._scanned, len(self.offsets)):
            time = self.times[i]
            if interval_ms > 0 and time is not None:
                if self._base is None:
                    self._base = time
                elif i > self._start and time >= self._base + interval_ms:
                    self.ends.append(i)
                    self._start, self._base = i, time
            if i + 1 - self._start >= flush_size:
                self.ends.append(i + 1)
                self._start, self._base = i + 1, None
        self._scanned = len(self.offsets)

    @property
    def complete(self) -> int:
        """How many records from the front are in complete segments."""
        return self.ends[-1] if self.ends else 0

    def buffered_since(self) -> float | None:
        """When the oldest buffered record was buffered (wall clock), None if none is."""
        return self.pieces[0].buffered_at if self.offsets else None

    def segments(self, upto: int) -> list[Segment]:
        """The segments of the first ``upto`` records: the complete ones, plus one ending at
        ``upto`` if that is not a segment end."""
        bounds = [e for e in self.ends if e <= upto]
        if upto and (not bounds or bounds[-1] != upto):
            bounds.append(upto)
        segments, start = [], 0
        for end in bounds:
            spans: dict[int, list[int]] = {}
            for i in range(start, end):
                span = spans.get(self._dirs[i])
                if span is None:
                    spans[self._dirs[i]] = [self.offsets[i], self.offsets[i], 1]
                else:
                    span[1] = self.offsets[i]
                    span[2] += 1
            files = tuple(FileSpan(self._dir_names[d], a, b, n) for d, (a, b, n) in spans.items())
            segments.append(Segment(self.offsets[start], self.offsets[end - 1], files))
            start = end
        return segments

    def truncate(self, offset: int, flush_size: int, interval_ms: int) -> list[Piece]:
        """Forget the records from ``offset`` on (those of the last puts: a put's pieces are
        wholly before or after it), as if they had never been added; returns their pieces."""
        keep = bisect.bisect_left(self.offsets, offset)
        if keep == len(self.offsets):
            return []
        del self.offsets[keep:], self.times[keep:], self._dirs[keep:]
        # an end at ``keep`` may be a record's time cutting before it: scanned again
        self.ends = [e for e in self.ends if e < keep]
        self._start = self._scanned = self.ends[-1] if self.ends else 0
        self._base = None
        self.scan(flush_size, interval_ms)  # the segments as they were before those records
        if not self.offsets:
            self._dirs, self._dir_names, self._dir_ids = array("l"), [], {}
        gone = [p for p in self.pieces if p.first_offset >= offset]
        self.pieces = [p for p in self.pieces if p.first_offset < offset]
        return gone

    def drop(self, upto: int) -> list[Piece]:
        """Forget the first ``upto`` records (a segment end, or all); returns the pieces
        that hold no buffered record any more."""
        if upto <= 0:
            return []
        if upto != len(self.offsets) and upto not in self.ends:
            raise ValueError(f"{upto} is not a segment end")
        last = self.offsets[upto - 1]
        del self.offsets[:upto], self.times[:upto], self._dirs[:upto]
        self.ends = [e - upto for e in self.ends if e > upto]
        self._scanned -= upto
        if self.offsets:
            self._start -= upto
        else:
            self._start, self._base = 0, None
            self._dirs, self._dir_names, self._dir_ids = array("l"), [], {}
        done = [p for p in self.pieces if p.last_offset <= last]
        self.pieces = [p for p in self.pieces if p.last_offset > last]
        return done
