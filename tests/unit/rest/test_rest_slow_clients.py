"""Slow clients on a real socket: refused bodies are never read, a body has a total deadline,
and the connections answered before their body was read close off the request threads."""

from __future__ import annotations

import base64
import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from connect_lite.config.rest_security import RestSecurity
from connect_lite.logs.loggers import Loggers
from connect_lite.rest import RestServer, create_app
from connect_lite.rest import server as rest_server
from connect_lite.rest.slow_clients import LingeringCloses
from connect_lite.testing import wait_for

from .fake_herder import FakeHerder

USERS = {"alice": "s3cret"}
AUTH = "Basic " + base64.b64encode(b"alice:s3cret").decode()
HUGE = 100_000_000
"""A Content-Length no client here ever sends: the body would take forever to read."""


def serve(herder: FakeHerder, loggers: Loggers, **settings: Any) -> Iterator[RestServer]:
    server = RestServer(
        create_app(herder, loggers, RestSecurity(**settings)), ["http://127.0.0.1:0"]
    )
    server.start()
    try:
        yield server
    finally:
        server.stop()


def send_head(port: int, head: str) -> socket.socket:
    """Open a connection and send a request's line and headers, but none of its body."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(head.replace("\n", "\r\n").encode() + b"\r\n")
    return sock


def read_to_end(sock: socket.socket, within_s: float) -> bytes:
    """Everything the server sends until it closes the connection, which must be ``within_s``."""
    deadline = time.monotonic() + within_s
    data = b""
    while True:
        left = deadline - time.monotonic()
        assert left > 0, f"not closed within {within_s} s; read so far: {data[:200]!r}"
        sock.settimeout(left)
        try:
            piece = sock.recv(65536)
        except TimeoutError:
            continue  # the assertion above reports it
        if not piece:
            return data
        data += piece


REFUSALS = {
    "401": (
        {"credentials": USERS},
        f"POST /connectors HTTP/1.1\nHost: 127.0.0.1\nContent-Type: application/json\n"
        f"Content-Length: {HUGE}\n",
    ),
    "413": (
        {"max_request_bytes": 1000},
        f"POST /connectors HTTP/1.1\nHost: 127.0.0.1\nContent-Type: application/json\n"
        f"Content-Length: {HUGE}\n",
    ),
    "415": (
        {},
        "PUT /connectors/c/config HTTP/1.1\nHost: 127.0.0.1\nContent-Type: text/plain\n"
        "Content-Length: 1000000\n",
    ),
    "403": (
        {},
        "POST /connectors HTTP/1.1\nHost: attacker.example\nContent-Type: application/json\n"
        "Content-Length: 1000000\n",
    ),
    "404": (
        {},
        "POST /nowhere HTTP/1.1\nHost: 127.0.0.1\nContent-Type: application/json\n"
        "Content-Length: 1000000\n",
    ),
    "405": (
        {},
        "PUT / HTTP/1.1\nHost: 127.0.0.1\nContent-Type: application/json\n"
        "Content-Length: 1000000\n",
    ),
    "413 chunked": (
        {"max_request_bytes": 1000},
        "POST /connectors HTTP/1.1\nHost: 127.0.0.1\nContent-Type: application/json\n"
        f"Transfer-Encoding: chunked\n\n{2000:x}\n{'x' * 2000}\n",
    ),
}


@pytest.mark.parametrize("refusal", sorted(REFUSALS))
def test_a_refused_request_is_answered_without_reading_its_body(
    loggers: Loggers, refusal: str
) -> None:
    """The answer comes while the body is still unsent, says ``Connection: close``, and the
    connection ends: cheroot would otherwise read the whole body first, to keep it alive."""
    settings, head = REFUSALS[refusal]
    for server in serve(FakeHerder(), loggers, **settings):
        with send_head(server.port, head) as sock:
            answer = read_to_end(sock, within_s=5)
        status, _, rest = answer.partition(b"\r\n")
        assert status.startswith(b"HTTP/1.1 " + refusal.split()[0].encode() + b" "), answer
        assert b"\r\nConnection: close\r\n" in b"\r\n" + rest


def test_slow_refused_bodies_leave_the_threads_to_authenticated_requests(
    loggers: Loggers,
) -> None:
    """More unauthenticated clients than request threads, each sending a huge body slowly:
    each gets its 401 at once and its connection closed, and /health answers meanwhile."""
    head = (
        f"POST /connectors HTTP/1.1\nHost: 127.0.0.1\nContent-Type: application/json\n"
        f"Content-Length: {HUGE}\n"
    )
    for server in serve(FakeHerder(), loggers, credentials=USERS):
        slow = [send_head(server.port, head) for _ in range(rest_server.WORKER_THREADS + 8)]
        try:
            for sock in slow:
                sock.sendall(b"{")
            started = time.monotonic()
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
            try:
                conn.request("GET", "/health", headers={"Authorization": AUTH})
                assert conn.getresponse().status == 200
            finally:
                conn.close()
            assert time.monotonic() - started < 5
            for sock in slow:
                assert read_to_end(sock, within_s=10).startswith(b"HTTP/1.1 401 ")
        finally:
            for sock in slow:
                sock.close()


def test_a_request_whose_body_is_read_keeps_its_connection(loggers: Loggers) -> None:
    herder = FakeHerder()
    for server in serve(herder, loggers):
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        try:
            for name in ("a", "b"):
                body = json.dumps({"name": name, "config": {"connector.class": "X"}})
                conn.request("POST", "/connectors", body, {"Content-Type": "application/json"})
                response = conn.getresponse()
                response.read()
                assert response.status == 201
                assert response.getheader("Connection") != "close"
                if name == "a":
                    first = conn.sock
            assert conn.sock is first  # the same connection served both
        finally:
            conn.close()
        assert sorted(herder.configs) == ["a", "b"]


def test_a_body_that_trickles_is_cut_at_its_total_deadline(
    loggers: Loggers, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One byte every 0.1 s never meets the 10 s wait for a read; the total deadline does."""
    monkeypatch.setattr(rest_server, "BODY_DEADLINE_S", 0.5)
    herder = FakeHerder()
    head = (
        "POST /connectors HTTP/1.1\nHost: 127.0.0.1\nContent-Type: application/json\n"
        "Content-Length: 1000\n"
    )
    for server in serve(herder, loggers):
        with send_head(server.port, head) as sock:
            started = time.monotonic()
            cut = None
            while cut is None and time.monotonic() - started < 10:
                try:
                    sock.sendall(b" ")
                    sock.settimeout(0.1)
                    if sock.recv(1024) == b"":
                        cut = time.monotonic() - started
                except TimeoutError:
                    pass  # not cut yet: one more byte
                except OSError:
                    cut = time.monotonic() - started
        assert cut is not None, "the trickling body was never cut"
        assert 0.4 <= cut < 8
        assert herder.configs == {}


class _SlowHerder(FakeHerder):
    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds

    def create_connector(self, *args: Any, **kwargs: Any) -> Any:
        threading.Event().wait(self.seconds)  # the work a real herder may do
        return super().create_connector(*args, **kwargs)


def test_the_work_after_the_body_is_read_is_not_timed(
    loggers: Loggers, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rest_server, "BODY_DEADLINE_S", 0.3)
    herder = _SlowHerder(seconds=1.0)
    for server in serve(herder, loggers):
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        try:
            body = json.dumps({"name": "slow", "config": {"connector.class": "X"}})
            conn.request("POST", "/connectors", body, {"Content-Type": "application/json"})
            assert conn.getresponse().status == 201
        finally:
            conn.close()


def tcp_pair() -> tuple[socket.socket, socket.socket]:
    """A connected (server side, client side) pair over loopback TCP."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        client = socket.create_connection(listener.getsockname(), timeout=10)
        server, _ = listener.accept()
    return server, client


def send_until_refused(sock: socket.socket, within_s: float) -> int:
    """Send until the peer's close makes sending fail; returns the bytes sent."""
    sent = 0
    deadline = time.monotonic() + within_s
    sock.settimeout(0.2)
    while time.monotonic() < deadline:
        try:
            sent += sock.send(b"x" * 16384)
        except TimeoutError:
            continue  # the peer reads nothing more: the buffers are full
        except OSError:
            return sent
    raise AssertionError(f"still open after {within_s} s and {sent} bytes")


def test_a_lingering_connection_ends_its_stream_and_drops_what_still_comes() -> None:
    lingering = LingeringCloses(seconds=1.0, most=64 * 1024 * 1024, limit=8)
    server, client = tcp_pair()
    try:
        lingering.add(server)
        assert read_to_end(client, within_s=5) == b""  # the end of the stream, at once
        client.sendall(b"x" * 1024 * 1024)  # read and dropped: the client is never stuck
        wait_for(lambda: lingering.lingering == 0, 10, 0.02)  # closed after its second
        send_until_refused(client, within_s=10)
    finally:
        lingering.close()
        client.close()


def test_a_lingering_connection_closes_after_its_byte_budget() -> None:
    lingering = LingeringCloses(seconds=60, most=256 * 1024, limit=8)
    server, client = tcp_pair()
    try:
        lingering.add(server)
        sent = send_until_refused(client, within_s=20)  # long before the 60 s
        assert sent >= 256 * 1024
        wait_for(lambda: lingering.lingering == 0, 10, 0.02)
    finally:
        lingering.close()
        client.close()


def test_lingering_is_bounded_and_ends_when_the_client_does() -> None:
    lingering = LingeringCloses(seconds=60, most=1024, limit=1)
    pairs = [tcp_pair() for _ in range(3)]
    try:
        for server, _ in pairs[:2]:
            lingering.add(server)
        assert lingering.lingering == 1  # the second was over the limit: closed at once
        pairs[1][1].sendall(b"x")
        send_until_refused(pairs[1][1], within_s=10)
        pairs[0][1].close()  # the client goes: its connection stops lingering
        wait_for(lambda: lingering.lingering == 0, 10, 0.02)
        lingering.add(pairs[2][0])
        lingering.close()  # closes what still lingers
        send_until_refused(pairs[2][1], within_s=10)
        lingering.add(socket.socket())  # after close: closed at once, never leaked
    finally:
        lingering.close()
        for server, client in pairs:
            server.close()
            client.close()
