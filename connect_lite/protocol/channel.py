"""Channel: calls and notices between the worker process and its data-plane process.

One socket, pickled messages (``multiprocessing.connection``), and a reader thread on each
side:

- ``call(message)`` sends a request and waits for its answer; what the other side's
  handler raised is raised here (as itself when it survives pickling, else as a
  ConnectError with its type and message); CallTimeoutError if no answer came in time;
- ``notify(message)`` sends and returns at once; nothing answers it.

A message is a picklable object, and its type picks the handler on the other side (the
messages of the worker and its data plane are defined once, in protocol/messages.py). A
handler takes the message and runs on the reader thread, so it must be quick (a status or an
offset commit written to SQLite is); the reader also hands this side's calls their answers.
Messages of the types in ``ordered`` are handled one at a time, in the order they came, on a
thread of their own, so that a slow one (a task stop waits for the task) holds up neither
the reader nor the answers it hands over; those in ``threaded`` on a thread of another pool,
in any order (reads that may wait on something slow). When the other side goes away, every
call waiting for an answer raises ChannelClosedError and ``on_closed`` runs once.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import logging
import os
import pickle
import socket
import threading
from collections.abc import Callable, Collection, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from multiprocessing.connection import Connection
from typing import Any

from connect_lite.api.errors import ConnectError

log = logging.getLogger(__name__)

Handler = Callable[[Any], Any]

THREADED_WORKERS = 2
"""Threads for the ``threaded`` methods."""


class ChannelClosedError(ConnectError):
    """The process at the other end is gone (or the channel was closed here)."""


class CallTimeoutError(ConnectError):
    """The other side did not answer a call in time (it may still carry it out)."""


def portable(error: BaseException) -> BaseException:
    """``error`` if it survives pickling as itself, else a ConnectError saying what it was."""
    try:
        copy = pickle.loads(pickle.dumps(error))
        if type(copy) is type(error) and str(copy) == str(error):
            return error
    except Exception:
        pass
    return ConnectError(f"{type(error).__name__}: {error}")


class Channel:
    """Both directions of one connection; see the module docstring."""

    def __init__(
        self,
        sock: socket.socket,
        handlers: Mapping[type, Handler],
        *,
        name: str,
        ordered: Collection[type] = (),
        threaded: Collection[type] = (),
        on_closed: Callable[[], None] | None = None,
    ) -> None:
        self._sock = sock
        self._conn = Connection(os.dup(sock.fileno()))
        self._handlers = dict(handlers)
        self._ordered = frozenset(ordered)
        self._threaded = frozenset(threaded)
        self._name = name
        self._on_closed = on_closed
        self._send_lock = threading.Lock()
        self._ids = itertools.count(1)
        self._waiting: dict[int, Future[Any]] = {}
        self._waiting_lock = threading.Lock()
        self._closed = threading.Event()
        self._commands = ThreadPoolExecutor(1, thread_name_prefix=f"{name}-commands")
        self._pool = ThreadPoolExecutor(THREADED_WORKERS, thread_name_prefix=f"{name}-calls")
        self._reader = threading.Thread(target=self._read, name=f"{name}-reader", daemon=True)

    def start(self) -> None:
        self._reader.start()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    # -- this side's calls and notices -----------------------------------------------------
    def call(self, message: object, timeout: float | None = None) -> Any:
        """The other side's answer; raises what its handler raised, ChannelClosedError if
        it is gone, or CallTimeoutError if it did not answer within ``timeout`` seconds."""
        if threading.current_thread() is self._reader:
            raise RuntimeError(f"{self._name}: a handler on the reader thread cannot call")
        answer: Future[Any] = Future()
        ident = next(self._ids)
        with self._waiting_lock:
            if self.closed:
                raise ChannelClosedError(f"{self._name}: the other process is gone")
            self._waiting[ident] = answer
        try:
            self._send(("call", ident, message))
            return answer.result(timeout)
        except FutureTimeout:
            raise CallTimeoutError(
                f"{self._name}: no answer to {type(message).__name__} within {timeout:g} s"
            ) from None
        finally:
            with self._waiting_lock:
                self._waiting.pop(ident, None)

    def notify(self, message: object) -> bool:
        """Send a notice; False (and nothing sent) if the other side is gone."""
        if self.closed:
            return False
        try:
            self._send(("notify", message))
        except ChannelClosedError:
            return False
        return True

    def _send(self, message: tuple[Any, ...]) -> None:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        with self._send_lock:
            try:
                self._conn.send_bytes(data)
            except (OSError, ValueError) as error:
                self._close_waiting()
                raise ChannelClosedError(f"{self._name}: the other process is gone") from error

    # -- the reader thread -----------------------------------------------------------------
    def _read(self) -> None:
        try:
            while True:
                message = pickle.loads(self._conn.recv_bytes())
                self._dispatch(message)
        except (EOFError, OSError):
            pass
        except Exception:
            log.exception("%s: unreadable message; closing the channel", self._name)
        finally:
            self._close_waiting()
            if self._on_closed is not None:
                try:
                    self._on_closed()
                except Exception:
                    log.exception("%s: error after the channel closed", self._name)

    def _dispatch(self, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == "reply":
            _, ident, ok, value = message
            with self._waiting_lock:
                answer = self._waiting.get(ident)
            if answer is not None and not answer.done():
                if ok:
                    answer.set_result(value)
                else:
                    answer.set_exception(value)
            return
        if kind == "call":
            _, ident, request = message
        else:
            ident, (_, request) = None, message
        kind_of = type(request)
        pool = (
            self._commands
            if kind_of in self._ordered
            else self._pool
            if kind_of in self._threaded
            else None
        )
        if pool is None:
            self._handle(ident, request)
            return
        with contextlib.suppress(RuntimeError):  # closed here meanwhile: so is the caller's
            pool.submit(contextvars.copy_context().run, self._handle, ident, request)

    def _handle(self, ident: int | None, request: object) -> None:
        name = type(request).__name__
        handler = self._handlers.get(type(request))
        try:
            if handler is None:
                raise ConnectError(f"{self._name}: no handler for {name}")
            result = handler(request)
        except BaseException as error:  # answered to the caller
            if ident is None:
                log.exception("%s: notice %s failed", self._name, name)
                return
            reply: tuple[Any, ...] = ("reply", ident, False, portable(error))
        else:
            if ident is None:
                return
            reply = ("reply", ident, True, result)
        try:
            self._send(reply)
        except ChannelClosedError:
            pass
        except Exception as error:  # an answer that cannot be pickled
            with contextlib.suppress(ChannelClosedError):
                self._send(("reply", ident, False, portable(ConnectError(str(error)))))

    # -- closing ---------------------------------------------------------------------------
    def _close_waiting(self) -> None:
        with self._waiting_lock:
            self._closed.set()
            waiting = list(self._waiting.values())
        for answer in waiting:
            if not answer.done():
                answer.set_exception(ChannelClosedError(f"{self._name}: the other process is gone"))

    def close(self, drain: bool = False) -> None:
        """Close the connection here: the other side sees it closed. With ``drain``, the
        ordered handlers under way finish first, and send their answers."""
        if drain:
            self._commands.shutdown(wait=True)
        self._close_waiting()
        with contextlib.suppress(OSError):  # wakes the reader up with an end of file
            self._sock.shutdown(socket.SHUT_RDWR)
        if self._reader.is_alive() and self._reader is not threading.current_thread():
            self._reader.join(5)
        for closing in (self._sock.close, self._conn.close):
            with contextlib.suppress(OSError):
                closing()
        self._commands.shutdown(wait=False, cancel_futures=True)
        self._pool.shutdown(wait=False, cancel_futures=True)


__all__ = ["CallTimeoutError", "Channel", "ChannelClosedError", "portable"]
