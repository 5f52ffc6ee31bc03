"""Bounds on slow clients: deadlines on a request's headers and body, and lingering closes.

A client that trickles its request would otherwise hold a request thread for as long as it
keeps trickling. ``Deadlines`` cuts a connection whose headers or body take too long in total,
``TimedBody`` puts a body's reads under such a deadline, and ``LingeringCloses`` closes the
connections answered before their body was read without holding a request thread.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, cast

from werkzeug.exceptions import RequestTimeout


class Deadlines:
    """Shuts a connection whose watched phase (its headers, or its body) takes over ``seconds``.

    One thread watches every request of a server: a timer thread per request cost each
    request a thread start, which under load waited for a free core. Every deadline is the
    same time after its watch began, so the oldest watch is always the next to expire."""

    def __init__(self, seconds: float, name: str, clock: Any = time.monotonic) -> None:
        self.seconds = seconds
        self._name = name
        self._clock = clock
        self._pending: dict[int, tuple[float, socket.socket]] = {}
        """Watches still running, oldest first (dicts keep insertion order)."""
        self._next = 0
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False

    def watch(self, sock: socket.socket) -> int:
        """Start the clock of a request on ``sock``; returns the token to ``release`` it."""
        with self._cond:
            self._next += 1
            self._pending[self._next] = (self._clock() + self.seconds, sock)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            elif len(self._pending) == 1:
                self._cond.notify()
            return self._next

    def release(self, token: int) -> bool:
        """The watched phase is over (or failed): its clock stops. False if it had run out
        and the connection was shut."""
        with self._cond:
            return self._pending.pop(token, None) is not None

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._pending.clear()
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                token, (deadline, sock) = next(iter(self._pending.items()))
                left = deadline - self._clock()
                if left > 0:
                    self._cond.wait(left)
                    continue
                del self._pending[token]
            shut(sock)


def shut(sock: socket.socket) -> None:
    """End both directions of a connection; a thread blocked reading it reads the end."""
    with contextlib.suppress(OSError):  # already closed
        sock.shutdown(socket.SHUT_RDWR)


class TimedBody:
    """A request body (``wsgi.input``) that must arrive whole within ``deadlines.seconds`` of
    its first read, however slowly it trickles: past that the connection is cut and the read
    raises 408. The clock runs from the first read to the end of the body, or until ``stop``;
    the app's work after reading is not timed."""

    def __init__(self, stream: Any, deadlines: Deadlines, sock: socket.socket) -> None:
        self._stream = stream
        self._deadlines = deadlines
        self._sock = sock
        self._token: int | None = None
        self._stopped = False

    def read(self, size: int | None = None) -> bytes:
        return self._timed(self._stream.read, _size(size))

    def readline(self, size: int | None = None) -> bytes:
        return self._timed(self._stream.readline, _size(size))

    def readlines(self, hint: int = 0) -> list[bytes]:
        lines: list[bytes] = []
        for line in self:
            lines.append(line)
            if 0 < hint <= sum(map(len, lines)):
                break
        return lines

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.readline, b"")

    def stop(self) -> bool:
        """Stop the clock (the body is in, or the answer is going out); False if it had run
        out."""
        if self._stopped or self._token is None:
            return True
        self._stopped = True
        return self._deadlines.release(self._token)

    def _timed(self, read: Callable[[int | None], bytes], size: int | None) -> bytes:
        if self._token is None:
            self._token = self._deadlines.watch(self._sock)
        try:
            data = read(size)
        except OSError as exc:  # a TLS read on a shut connection fails instead of ending
            if not self.stop():
                raise self._timeout() from exc
            raise
        ended = not data or self._complete()
        if ended and not self.stop():
            raise self._timeout()
        return data

    def _complete(self) -> bool:
        # cheroot's streams: KnownLengthRFile counts down ``remaining``, ChunkedRFile sets
        # ``closed`` once the last chunk is read
        stream = self._stream
        return getattr(stream, "remaining", None) == 0 or getattr(stream, "closed", False) is True

    def _timeout(self) -> RequestTimeout:
        return RequestTimeout(
            f"The request body did not arrive within {self._deadlines.seconds:g} s"
        )


def _size(size: int | None) -> int | None:
    """cheroot's streams read everything for None, but misread a negative size."""
    return None if size is None or size < 0 else size


class LingeringCloses:
    """Closes connections answered before their body was read, on one thread for all of them.

    The answer is sent, then the end of the stream (FIN). Closing at once would make the
    kernel reset a connection with unread data, and a client that sends its whole body before
    reading would meet the reset instead of the answer. So what the client still sends is read
    and dropped, until it stops sending, ``most`` bytes, or ``seconds``, whichever comes first.
    At most ``limit`` connections linger; more are closed at once."""

    def __init__(
        self, seconds: float, most: int, limit: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.seconds = seconds
        self.most = most
        self.limit = limit
        self._clock = clock
        self._lock = threading.Lock()
        self._incoming: list[socket.socket] = []
        self._count = 0
        """Lingering connections, those not yet taken by the thread included."""
        self._thread: threading.Thread | None = None
        self._wake_r: socket.socket | None = None
        self._wake_w: socket.socket | None = None
        """The thread's wake-up call, made with the thread."""
        self._closed = False

    def add(self, sock: socket.socket) -> None:
        """Take over an answered connection; the caller no longer closes it."""
        try:
            sock.shutdown(socket.SHUT_WR)  # a FIN after the answer, which is written already
            sock.setblocking(False)
        except OSError:  # the client is gone
            sock.close()
            return
        with self._lock:
            taken = not self._closed and self._count < self.limit
            if taken:
                self._count += 1
                self._incoming.append(sock)
                if self._thread is None:
                    self._start()
        if taken:
            self._wake()
        else:
            sock.close()

    def _start(self) -> None:
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_w.setblocking(False)
        self._thread = threading.Thread(
            target=self._run, args=(self._wake_r,), name="rest-lingering-closes", daemon=True
        )
        self._thread.start()

    @property
    def lingering(self) -> int:
        with self._lock:
            return self._count

    def close(self) -> None:
        """Close every lingering connection and end the thread."""
        with self._lock:
            self._closed = True
            thread = self._thread
            incoming, self._incoming = self._incoming, []
        for sock in incoming:
            sock.close()
        if thread is not None:
            self._wake()
            thread.join(timeout=5)

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # full: the thread is woken already; closed: done
            if self._wake_w is not None:
                self._wake_w.send(b"x")

    def _run(self, wake_r: socket.socket) -> None:
        selector = selectors.DefaultSelector()
        selector.register(wake_r, selectors.EVENT_READ)
        try:
            while self._take(selector):
                for key, _ in selector.select(self._next_timeout(selector)):
                    if key.fileobj is wake_r:
                        with contextlib.suppress(OSError):
                            wake_r.recv(4096)
                    elif not self._drain(cast(socket.socket, key.fileobj), key.data):
                        self._finish(selector, cast(socket.socket, key.fileobj))
                now = self._clock()
                for key in list(selector.get_map().values()):
                    if key.data is not None and key.data[0] <= now:
                        self._finish(selector, cast(socket.socket, key.fileobj))
        finally:
            for key in list(selector.get_map().values()):
                cast(socket.socket, key.fileobj).close()  # wake_r among them
            selector.close()
            with self._lock:
                if self._wake_w is not None:
                    self._wake_w.close()

    def _take(self, selector: selectors.BaseSelector) -> bool:
        """Register the connections handed over since the last turn; False once closed."""
        with self._lock:
            if self._closed:
                return False
            incoming, self._incoming = self._incoming, []
        deadline = self._clock() + self.seconds
        for sock in incoming:
            selector.register(sock, selectors.EVENT_READ, [deadline, self.most])
        return True

    def _next_timeout(self, selector: selectors.BaseSelector) -> float | None:
        deadlines = [k.data[0] for k in selector.get_map().values() if k.data is not None]
        return max(0.0, min(deadlines) - self._clock()) if deadlines else None

    def _drain(self, sock: socket.socket, left: list[float]) -> bool:
        """Read and drop what has arrived; False when the connection is done with."""
        while True:
            try:
                piece = sock.recv(64 * 1024)
            except BlockingIOError:
                return True
            except OSError:
                return False
            left[1] -= len(piece)
            if not piece or left[1] <= 0:
                return False

    def _finish(self, selector: selectors.BaseSelector, sock: socket.socket) -> None:
        selector.unregister(sock)
        sock.close()
        with self._lock:
            self._count -= 1
