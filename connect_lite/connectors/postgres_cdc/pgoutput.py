"""pgoutput, protocol version 1: its messages decoded, and the replication stream that carries
them (``START_REPLICATION`` over a ``replication=database`` connection).

psycopg 3 has no replication API, but its libpq layer (``psycopg.pq``) reads and writes the
COPY BOTH stream as libpq does: XLogData messages (``w``) carry one pgoutput message each,
the server's keepalives (``k``) may ask for a reply, and a standby status update (``r``) tells
the server how far this side has flushed, which moves the slot's confirmed position. So the
same driver serves the snapshot, the slot's creation and the stream, and a large transaction
arrives message by message (no message holds more than one row)."""

from __future__ import annotations

import select
import struct
import time
from dataclasses import dataclass, field
from typing import Any

PG_EPOCH_US = 946_684_800_000_000
"""2000-01-01 in microseconds since 1970: PostgreSQL's epoch for its timestamps."""


@dataclass(frozen=True)
class Column:
    name: str
    type_oid: int
    type_modifier: int
    key: bool


@dataclass(frozen=True)
class Relation:
    oid: int
    schema: str
    table: str
    replica_identity: str
    columns: tuple[Column, ...]


@dataclass(frozen=True)
class Begin:
    final_lsn: int
    commit_us: int
    """Epoch microseconds."""
    xid: int


@dataclass(frozen=True)
class Commit:
    commit_lsn: int
    end_lsn: int
    commit_us: int


@dataclass(frozen=True)
class Change:
    """An insert (``c``), update (``u``) or delete (``d``): the values as text, None for null,
    UNCHANGED for an unchanged TOASTed value; ``old`` is the old key or row when sent."""

    op: str
    relation: int
    new: tuple[Any, ...] | None
    old: tuple[Any, ...] | None
    old_is_key: bool = False


@dataclass(frozen=True)
class Truncate:
    relations: tuple[int, ...]


@dataclass(frozen=True)
class TypeInfo:
    oid: int
    schema: str
    name: str


class _Unchanged:
    def __repr__(self) -> str:
        return "UNCHANGED"


UNCHANGED: Any = _Unchanged()
"""A TOASTed value the change did not touch: the server does not send it."""

Message = Begin | Commit | Relation | Change | Truncate | TypeInfo | None


@dataclass
class _Reader:
    data: bytes
    at: int = 0

    def take(self, fmt: str) -> Any:
        values = struct.unpack_from(fmt, self.data, self.at)
        self.at += struct.calcsize(fmt)
        return values[0] if len(values) == 1 else values

    def string(self) -> str:
        end = self.data.index(b"\0", self.at)
        text = self.data[self.at : end].decode()
        self.at = end + 1
        return text

    def tuple(self) -> tuple[Any, ...]:
        values: list[Any] = []
        for _ in range(self.take(">h")):
            kind = self.data[self.at : self.at + 1]
            self.at += 1
            if kind == b"n":
                values.append(None)
            elif kind == b"u":
                values.append(UNCHANGED)
            elif kind == b"t":
                size = self.take(">i")
                values.append(self.data[self.at : self.at + size].decode())
                self.at += size
            else:
                raise ValueError(f"pgoutput: unknown tuple value kind {kind!r}")
        return tuple(values)


def decode(data: bytes) -> Message:
    """One pgoutput message; None for those the connector does not use (origin, message)."""
    kind, r = data[:1], _Reader(data, 1)
    if kind == b"B":
        final_lsn, commit_ts, xid = r.take(">qqI")
        return Begin(final_lsn, commit_ts + PG_EPOCH_US, xid)
    if kind == b"C":
        _flags, commit_lsn, end_lsn, commit_ts = r.take(">bqqq")
        return Commit(commit_lsn, end_lsn, commit_ts + PG_EPOCH_US)
    if kind == b"R":
        oid = r.take(">I")
        schema, table = r.string() or "pg_catalog", r.string()
        identity = chr(r.take(">B"))
        columns = []
        for _ in range(r.take(">h")):
            flags = r.take(">B")
            name = r.string()
            type_oid, modifier = r.take(">Ii")
            columns.append(Column(name, type_oid, modifier, bool(flags & 1)))
        return Relation(oid, schema, table, identity, tuple(columns))
    if kind == b"Y":
        oid = r.take(">I")
        return TypeInfo(oid, r.string() or "pg_catalog", r.string())
    if kind == b"I":
        oid = r.take(">I")
        r.at += 1  # 'N'
        return Change("c", oid, r.tuple(), None)
    if kind == b"U":
        oid = r.take(">I")
        old, old_is_key = None, False
        marker = data[r.at : r.at + 1]
        if marker in (b"K", b"O"):
            r.at += 1
            old, old_is_key = r.tuple(), marker == b"K"
        r.at += 1  # 'N'
        return Change("u", oid, r.tuple(), old, old_is_key)
    if kind == b"D":
        oid = r.take(">I")
        marker = data[r.at : r.at + 1]
        r.at += 1
        return Change("d", oid, None, r.tuple(), marker == b"K")
    if kind == b"T":
        count = r.take(">i")
        r.at += 1  # options
        return Truncate(tuple(r.take(">I") for _ in range(count)))
    return None


def lsn_text(lsn: int) -> str:
    return f"{lsn >> 32:X}/{lsn & 0xFFFFFFFF:X}"


def lsn_int(text: str) -> int:
    high, low = text.split("/")
    return (int(high, 16) << 32) | int(low, 16)


@dataclass
class Stream:
    """The replication stream of a slot from ``start``: ``read`` gives (lsn, message bytes);
    ``confirm`` moves the slot's confirmed position (a standby status update)."""

    conn: Any  # a psycopg Connection opened with replication=database
    slot: str
    publication: str
    start: int = 0
    status_interval_s: float = 10.0
    _flushed: int = 0
    sent: int = 0
    """How far the server has decoded and sent (its keepalives say): every transaction that
    committed before it and touched the publication has arrived."""
    _last_status: float = field(default=0.0)

    def open(self) -> None:
        from psycopg import pq

        pg = self.conn.pgconn
        options = f"(proto_version '1', publication_names '{_quoted(self.publication)}')"
        command = f'START_REPLICATION SLOT "{self.slot}" LOGICAL {lsn_text(self.start)} {options}'
        pg.send_query(command.encode())
        result = pg.get_result()
        if result is None or result.status != pq.ExecStatus.COPY_BOTH:
            message = result.error_message.decode(errors="replace") if result else "no answer"
            raise ConnectionError(f"START_REPLICATION failed: {message.strip()}")
        pg.nonblocking = 1
        self._flushed = self.start
        self._last_status = time.monotonic()

    def read(self, timeout: float) -> tuple[int, bytes] | None:
        """The next XLogData's (start lsn, pgoutput message), or None if none came within
        ``timeout`` seconds; keepalives are answered."""
        pg = self.conn.pgconn
        deadline = time.monotonic() + timeout
        while True:
            size, data = pg.get_copy_data(1)
            if size == 0:
                self._status_if_due()
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                select.select([pg.socket], [], [], min(left, 1.0))
                pg.consume_input()
                continue
            if size < 0:
                result = pg.get_result()
                message = result.error_message.decode(errors="replace") if result else ""
                raise ConnectionError(f"The replication stream ended: {message.strip()}")
            body = bytes(data)
            if body[:1] == b"w":
                start = struct.unpack_from(">q", body, 1)[0]
                return start, body[25:]
            if body[:1] == b"k":
                self.sent = max(self.sent, struct.unpack_from(">q", body, 1)[0])
                if body[17:18] == b"\x01":  # a reply is asked for
                    self._status()
                if time.monotonic() >= deadline:
                    return None

    def confirm(self, lsn: int) -> None:
        """Everything before ``lsn`` is safely delivered: the slot may let go of it."""
        if lsn > self._flushed:
            self._flushed = lsn
            self._status()

    def _status_if_due(self) -> None:
        if time.monotonic() - self._last_status >= self.status_interval_s:
            self._status()

    def _status(self) -> None:
        pg = self.conn.pgconn
        now = int(time.time() * 1_000_000) - PG_EPOCH_US
        lsn = self._flushed
        pg.put_copy_data(b"r" + struct.pack(">qqqqB", lsn, lsn, lsn, now, 0))
        pg.flush()
        self._last_status = time.monotonic()


def _quoted(name: str) -> str:
    return name.replace("'", "''")
