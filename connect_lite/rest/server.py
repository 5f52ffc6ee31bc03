"""Serving the REST app with cheroot's WSGI server on exactly the addresses ``listeners`` names.

Each listener is http or https (TLS from ``rest/tls.py``). Requests on a loopback listener are
flagged for the edge's Host check. Slow clients are bounded (``rest/slow_clients.py``): a request
whose line and headers do not arrive within ``HEADER_DEADLINE_S``, or whose body does not arrive
within ``BODY_DEADLINE_S``, is cut off, and a request answered before its body was read (the
edge's refusals: 401, 403, 413, 415...) has its connection closed without that body being read
on a request thread. What remains: cheroot hands a new connection to a request thread at once,
which serves its TLS handshake (Python's ssl bounds the whole handshake by ``SOCKET_TIMEOUT_S``)
and then reads its headers (``HEADER_DEADLINE_S``): ``WORKER_THREADS`` clients that trickle,
or send nothing, can delay others by up to that long, before any credentials are seen.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import socket
import ssl
import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from cheroot import server as cheroot_server
from cheroot import wsgi
from cheroot.ssl.builtin import BuiltinSSLAdapter

from connect_lite.api.errors import ConfigError, ConnectError
from connect_lite.config.worker import Listener, listener_of
from connect_lite.rest.edge import LOOPBACK_ENVIRON
from connect_lite.rest.slow_clients import Deadlines, LingeringCloses, TimedBody
from connect_lite.rest.status_lines import status_line

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

log = logging.getLogger(__name__)

WORKER_THREADS = 32
"""Request threads per listener: 16 slow clients still leave threads for /health."""
SOCKET_TIMEOUT_S = 10
"""An idle connection, or one silent this long mid-request, is closed."""
HEADER_DEADLINE_S = 15
"""The request line and headers must arrive within this time, however slowly they trickle."""
BODY_DEADLINE_S = 30
"""A body must arrive within this time of its first read, however slowly it trickles."""
LINGER_S = 5
"""A connection answered before its body was read is closed after this time at most..."""
DRAIN_BYTES = 1024 * 1024
"""...or once its client has sent this much more, read and dropped (see LingeringCloses)."""
MAX_LINGERING = 256
"""Connections lingering at once per listener; more are closed at once."""
ACCEPT_BACKLOG = 128
"""Connections the kernel queues until accepted (cheroot's default, 5, makes a burst of
connections wait a second or more for a SYN to be sent again)."""
SHUTDOWN_TIMEOUT_S = 2
MAX_HEADER_BYTES = 64 * 1024
"""The request line and headers together; longer ones get 414 or 413 from the server."""


class _Request(cheroot_server.HTTPRequest):
    """Cuts the connection when the request line and headers take over HEADER_DEADLINE_S,
    closes it, unread, when the answer goes out before the body was read, and writes every
    status line as Kafka's Jetty does (``rest/status_lines.py``)."""

    def parse_request(self) -> None:
        deadlines: Deadlines = self.server.header_deadlines
        token = deadlines.watch(self.conn.socket)
        try:
            super().parse_request()
        finally:
            deadlines.release(token)

    def send_headers(self) -> None:
        # To keep a connection alive, cheroot reads the rest of an unread body before it
        # answers, however slowly it comes and on this thread: a refused request (401, 413...)
        # would hold a thread as long as its client trickled. Closing the connection instead
        # makes cheroot send "Connection: close" and read nothing more.
        if _body_left(self.rfile):
            self.close_connection = True
            self.conn.unread_body = True
        self.status = _jetty_status(self.status)
        super().send_headers()

    def simple_response(self, status: Any, msg: str = "") -> None:
        """cheroot's own answers (400, 413, 414, 500...) carry Jetty's phrases too."""
        super().simple_response(_jetty_status(status), msg)


def _jetty_status(status: Any) -> Any:
    """``status`` with Jetty's reason phrase, in its own type: the WSGI gateway keeps it as
    bytes (cheroot's stub says str), ``simple_response`` takes a str."""
    if isinstance(status, bytes):
        return status_line(status.decode("iso-8859-1")).encode("iso-8859-1")
    return status_line(str(status))


def _body_left(rfile: Any) -> bool:
    if isinstance(rfile, cheroot_server.KnownLengthRFile):
        return bool(rfile.remaining)
    return isinstance(rfile, cheroot_server.ChunkedRFile) and not rfile.closed


class _Gateway(wsgi.Gateway_10):
    """Hands the app a body that must arrive within BODY_DEADLINE_S of its first read."""

    body: TimedBody

    def get_environ(self) -> dict[str, Any]:  # type: ignore[override]  # stub says None
        environ: dict[str, Any] = super().get_environ()
        req = self.req
        self.body = TimedBody(req.rfile, req.server.body_deadlines, req.conn.socket)
        environ["wsgi.input"] = self.body
        return environ

    def respond(self) -> None:
        try:
            super().respond()
        finally:
            self.body.stop()


class _Connection(cheroot_server.HTTPConnection):
    RequestHandlerClass = _Request
    _tls_ready = False
    unread_body = False
    """Set by the request answered before its body was read: the connection lingers, closing."""

    def communicate(self) -> bool:
        """Finish a deferred TLS handshake first; a failed one closes the connection quietly
        (a client without a valid certificate, or plain HTTP on an https port)."""
        sock = self.socket
        if isinstance(sock, ssl.SSLSocket) and not self._tls_ready:
            try:
                sock.do_handshake()
            except OSError as exc:  # ssl.SSLError included
                log.debug("TLS handshake with %s failed: %s", self.remote_addr, exc)
                return False
            self._tls_ready = True
        keep = bool(super().communicate())
        if self.unread_body and not keep:
            self._hand_to_lingering()
        return keep

    def _hand_to_lingering(self) -> None:
        """The server's lingering closes take the socket; cheroot's close() then leaves it."""
        self.linger = True
        with contextlib.suppress(OSError):
            self.wfile.close()  # flushed already; open, it would keep the socket from closing
        self.server.lingering.add(self.socket)


class _ContextAdapter(BuiltinSSLAdapter):
    """cheroot's TLS adapter over a ready SSLContext (cheroot's own loads PEM files only).

    The handshake is not done on accepting, which cheroot does on its one accepting thread
    (a single silent client would hold every other one back); it happens on the first read,
    in the request thread, before the header deadline starts: Python's ssl bounds the whole
    handshake by the socket timeout (SOCKET_TIMEOUT_S), however slowly it trickles."""

    def __init__(self, context: ssl.SSLContext) -> None:
        self.certificate = self.private_key = self.certificate_chain = None
        self.ciphers = self.private_key_password = None
        self.context = context
        self._server_env: dict[str, Any] = {}

    def wrap(self, sock: socket.socket) -> tuple[ssl.SSLSocket, dict[str, str]]:
        wrapped = self.context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return wrapped, {"wsgi.url_scheme": "https", "HTTPS": "on"}


class _CherootServer(wsgi.Server):
    ConnectionClass = _Connection
    max_request_header_size = MAX_HEADER_BYTES
    header_deadlines: Deadlines
    body_deadlines: Deadlines
    lingering: LingeringCloses

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.gateway = _Gateway

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

    def __init__(
        self,
        app: WSGIApplication,
        listeners: list[str],
        tls_context: ssl.SSLContext | None = None,
    ) -> None:
        if not listeners:
            raise ConfigError("At least one REST listener is required")
        self._listeners = [listener_of(listener) for listener in listeners]
        if tls_context is None and any(lis.scheme == "https" for lis in self._listeners):
            raise ConfigError("An https listener needs a TLS context (ssl.keystore.*)")
        self._tls_context = tls_context
        self._app = _RequestLog(app)
        self._servers: list[_CherootServer] = []
        self._schemes: list[str] = []
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
        app = _Flagged(self._app, listener.loopback)
        server = _CherootServer(
            (listener.host, listener.port),
            app,
            numthreads=WORKER_THREADS,
            request_queue_size=ACCEPT_BACKLOG,
            timeout=SOCKET_TIMEOUT_S,
            shutdown_timeout=SHUTDOWN_TIMEOUT_S,
        )
        server.header_deadlines = Deadlines(HEADER_DEADLINE_S, "rest-header-deadlines")
        server.body_deadlines = Deadlines(BODY_DEADLINE_S, "rest-body-deadlines")
        server.lingering = LingeringCloses(LINGER_S, DRAIN_BYTES, MAX_LINGERING)
        if listener.scheme == "https" and self._tls_context is not None:
            server.ssl_adapter = _ContextAdapter(self._tls_context)
        try:
            # Binds and listens: connections queue from here on. On a daemon thread, so that
            # the request threads it starts are daemons too (a thread inherits it): a request
            # still running at shutdown (a plugin's validate waiting on a host) cannot keep
            # the process alive after the worker stopped.
            _on_daemon_thread(server.prepare, "rest-prepare", timeout=None)
        except OSError as exc:
            raise ConnectError(bind_failure(listener, exc)) from exc
        self._servers.append(server)
        self._schemes.append(listener.scheme)
        thread = threading.Thread(target=server.serve, name="rest-server", daemon=True)
        thread.start()
        self._threads.append(thread)

    def stop(self) -> None:
        """Close the listening sockets and open connections, and wait for the threads: at most
        SHUTDOWN_TIMEOUT_S for requests in flight, which are then abandoned (cheroot's own stop
        waits for a busy request thread without a limit)."""
        for server in self._servers:
            if not _on_daemon_thread(server.stop, "rest-stop", timeout=SHUTDOWN_TIMEOUT_S + 1):
                log.warning(
                    "REST requests still running after %d s were abandoned", SHUTDOWN_TIMEOUT_S
                )
            server.header_deadlines.close()
            server.body_deadlines.close()
            server.lingering.close()
        for thread in self._threads:
            thread.join(timeout=SHUTDOWN_TIMEOUT_S + 1)
        self._servers.clear()
        self._schemes.clear()
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
        self._first()  # raises when not started
        return self.urls[0]

    @property
    def urls(self) -> list[str]:
        return [_url(s, h, p) for s, (h, p) in zip(self._schemes, self.addresses, strict=True)]

    def _first(self) -> tuple[str, int]:
        if not self._servers:
            raise RuntimeError("The REST server is not started")
        return self.addresses[0]


def _on_daemon_thread(call: Any, name: str, timeout: float | None) -> bool:
    """Run ``call`` on a new daemon thread and wait for it, at most ``timeout`` seconds;
    its exception is raised here. Returns whether it finished."""
    failure: list[BaseException] = []

    def run() -> None:
        try:
            call()
        except BaseException as exc:  # handed to the caller
            failure.append(exc)

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    thread.join(timeout)
    if failure:
        raise failure[0]
    return not thread.is_alive()


def bind_failure(listener: Listener, exc: OSError) -> str:
    """One line on why ``listener`` could not be bound, naming the worker key to change."""
    url = _url(listener.scheme, listener.host, listener.port)
    change = "change listeners in the worker config (listeners=http://host:port)"
    # cheroot raises a new OSError whose message holds the bind's: "... [Errno 98] ..."
    codes = re.findall(r"\[Errno (\d+)\]", str(exc))
    code = exc.errno or (int(codes[-1]) if codes else None)
    if code == errno.EADDRINUSE:
        return (
            f"Could not bind REST listener {url}: the port is in use. "
            f"Stop what uses it, or {change}."
        )
    if code == errno.EACCES:
        why = "permission denied (ports below 1024 need privileges)"
    elif code == errno.EADDRNOTAVAIL:
        why = "the address is not one of this machine's"
    else:
        why = os.strerror(code) if code else str(exc)
    return f"Could not bind REST listener {url}: {why}. {change[0].upper()}{change[1:]}."


def _url(scheme: str, host: str, port: int) -> str:
    return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"


class _Flagged:
    """Marks each request with whether its listener is a loopback one."""

    def __init__(self, app: WSGIApplication, loopback: bool) -> None:
        self._app = app
        self._loopback = loopback

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        environ[LOOPBACK_ENVIRON] = self._loopback
        return self._app(environ, start_response)
