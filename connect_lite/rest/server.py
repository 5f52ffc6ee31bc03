"""Serving the REST app with cheroot's WSGI server on exactly the addresses ``listeners`` names."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from cheroot import wsgi

from connect_lite.api.errors import ConfigError, ConnectError

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

log = logging.getLogger(__name__)

WORKER_THREADS = 8
SHUTDOWN_TIMEOUT_S = 2


@dataclass(frozen=True)
class Listener:
    """One ``http://host:port`` listener; port 0 asks for a free port."""

    host: str
    port: int


def parse_listener(listener: str) -> Listener:
    """Parse a ``listeners`` entry; an empty host means every interface, as in Kafka."""
    parts = urlsplit(listener.strip())
    scheme = parts.scheme.lower()
    if scheme == "https":
        raise ConfigError(f"HTTPS listeners are not supported yet: {listener}")
    try:
        port = parts.port
    except ValueError:
        port = None
    if scheme != "http" or port is None or parts.path not in ("", "/"):
        raise ConfigError(f"Could not parse listener {listener}: expected http://host:port")
    return Listener(parts.hostname or "0.0.0.0", port)


class _CherootServer(wsgi.Server):
    def error_log(self, msg: str = "", level: int = logging.INFO, traceback: bool = False) -> None:
        log.log(level, "%s", msg, exc_info=traceback)


class _RequestLog:
    """WSGI middleware logging every request at DEBUG: client, method, URI, status, time."""

    def __init__(self, app: WSGIApplication) -> None:
        self._app = app

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        started = time.monotonic()

        def logged(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            log.debug(
                "%s %s %s -> %s in %.1f ms",
                environ.get("REMOTE_ADDR", "-"),
                environ.get("REQUEST_METHOD"),
                environ.get("REQUEST_URI") or environ.get("PATH_INFO"),
                status.split(" ", 1)[0],
                (time.monotonic() - started) * 1000,
            )
            return start_response(status, headers, exc_info)

        return self._app(environ, logged)


class RestServer:
    """The REST app served by cheroot on background threads, one server per listener."""

    def __init__(self, app: WSGIApplication, listeners: list[str]) -> None:
        if not listeners:
            raise ConfigError("At least one REST listener is required")
        self._listeners = [parse_listener(listener) for listener in listeners]
        self._app = _RequestLog(app)
        self._servers: list[_CherootServer] = []
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        """Bind every listener and serve; returns once all of them accept connections."""
        try:
            for listener in self._listeners:
                self._start_one(listener)
        except BaseException:
            self.stop()
            raise
        log.info("REST server listening on %s", ", ".join(self.urls))

    def _start_one(self, listener: Listener) -> None:
        server = _CherootServer(
            (listener.host, listener.port),
            self._app,
            numthreads=WORKER_THREADS,
            shutdown_timeout=SHUTDOWN_TIMEOUT_S,
        )
        try:
            server.prepare()  # binds and listens: connections queue from here on
        except OSError as exc:
            raise ConnectError(
                f"Could not bind REST listener {listener.host}:{listener.port}: {exc}"
            ) from exc
        self._servers.append(server)
        thread = threading.Thread(target=server.serve, name="rest-server", daemon=True)
        thread.start()
        self._threads.append(thread)

    def stop(self) -> None:
        """Close the listening sockets and open connections, and wait for the threads."""
        for server in self._servers:
            server.stop()
        for thread in self._threads:
            thread.join(timeout=SHUTDOWN_TIMEOUT_S + 1)
        self._servers.clear()
        self._threads.clear()

    @property
    def addresses(self) -> list[tuple[str, int]]:
        """The bound (host, port) of every listener, once started."""
        return [(str(s.bind_addr[0]), int(s.bind_addr[1])) for s in self._servers]

    @property
    def host(self) -> str:
        return self._first()[0]

    @property
    def port(self) -> int:
        return self._first()[1]

    @property
    def url(self) -> str:
        return _url(*self._first())

    @property
    def urls(self) -> list[str]:
        return [_url(host, port) for host, port in self.addresses]

    def _first(self) -> tuple[str, int]:
        if not self._servers:
            raise RuntimeError("The REST server is not started")
        return self.addresses[0]


def _url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
