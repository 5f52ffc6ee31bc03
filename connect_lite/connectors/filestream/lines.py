"""Splits a byte stream into complete text lines and tracks the byte position after each."""

from __future__ import annotations

from itertools import accumulate

_CR = 0x0D  # b"\r"


class LineBuffer:
    """Complete lines read so far and not yet taken, plus the incomplete tail.

    Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r``, as in Kafka's FileStreamSourceTask.
    A line without its terminator stays in the tail until the terminator arrives; a tail
    ending in ``\\r`` also waits, because a ``\\n`` may follow. Text is decoded as UTF-8
    (malformed bytes become U+FFFD). Positions count bytes from the start of the stream.
    """

    def __init__(self, position: int = 0) -> None:
        self.position = position
        """Byte position after the last complete line fed (the next line starts here)."""
        self._tail = b""
        self._lines: list[str] = []
        self._ends: list[int] = []
        self._next = 0

    @property
    def ready(self) -> int:
        """How many complete lines are waiting to be taken."""
        return len(self._lines) - self._next

    @property
    def pending_bytes(self) -> int:
        """Bytes of the incomplete last line held back."""
        return len(self._tail)

    def feed(self, data: bytes) -> None:
        """Add bytes read from the stream."""
        if not data:
            return
        buf = self._tail + data if self._tail else data
        cut = _complete_prefix_length(buf)
        self._tail = buf[cut:]
        if cut == 0:
            return
        lines, sizes = _split(buf[:cut] if cut < len(buf) else buf)
        if self._next:
            del self._lines[: self._next], self._ends[: self._next]
            self._next = 0
        self._lines.extend(lines)
        ends = accumulate(sizes, initial=self.position)
        next(ends)  # the initial value is where the first line starts, not where it ends
        self._ends.extend(ends)
        self.position = self._ends[-1]

    def take(self, limit: int) -> tuple[list[str], list[int]]:
        """Up to ``limit`` lines and the byte position after each; consumes them."""
        start = self._next
        stop = min(start + limit, len(self._lines))
        self._next = stop
        lines, ends = self._lines[start:stop], self._ends[start:stop]
        if stop == len(self._lines):
            self._lines, self._ends, self._next = [], [], 0
        return lines, ends


def _complete_prefix_length(buf: bytes) -> int:
    """Length of the longest prefix of ``buf`` that holds only complete lines."""
    end = max(buf.rfind(b"\n"), buf.rfind(b"\r")) + 1
    if end == len(buf) and end > 0 and buf[-1] == _CR:
        # A trailing "\r" may be the first half of "\r\n": keep its line back.
        end = max(buf.rfind(b"\n", 0, end - 1), buf.rfind(b"\r", 0, end - 1)) + 1
    return end


def _split(complete: bytes) -> tuple[list[str], list[int]]:
    """Decoded lines of a buffer of complete lines, and each line's size in bytes."""
    if b"\r" in complete:
        raw = complete.splitlines(keepends=True)
        sizes = [len(line) for line in raw]
        raw = [line.rstrip(b"\r\n") for line in raw]
    else:
        raw = complete.split(b"\n")
        raw.pop()  # the empty string after the last "\n"
        sizes = [len(line) + 1 for line in raw]
    if complete.isascii():
        return [line.decode("ascii") for line in raw], sizes
    return [line.decode("utf-8", "replace") for line in raw], sizes
