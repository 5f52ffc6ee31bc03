"""Bounds on slow clients: a deadline on the whole of a phase of a request, however it trickles.

A client that trickles its request would otherwise hold a request thread for as long as it
keeps trickling. ``Deadlines`` cuts a connection whose watched phase takes too long in total.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from typing import Any


class Deadlines:
    """Shuts a connection whose watched phase (such as its headers) takes over ``seconds``.

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
