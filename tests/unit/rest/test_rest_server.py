"""RestServer: cheroot on a real socket, started and stopped."""

from __future__ import annotations

import errno
import http.client
import json
import logging
import os
import socket
import time
import urllib.error
import urllib.request

import pytest

from connect_lite.api.errors import ConfigError, ConnectError
from connect_lite.config.worker import Listener, listener_of
from connect_lite.logs.loggers import Loggers
from connect_lite.rest import RestServer, create_app
from connect_lite.rest.server import bind_failure

from .fake_herder import NOT_FOUND, FakeHerder


def refused(host: str, port: int, deadline_s: float = 5.0) -> bool:
    """Whether connections to host:port are refused, polling until a deadline."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                pass
        except ConnectionRefusedError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.timeout(60)  # the hang guard for stop()
def test_serves_real_http_and_releases_the_port(
    loggers: Loggers, caplog: pytest.LogCaptureFixture
) -> None:
    server = RestServer(create_app(FakeHerder(), loggers), ["http://127.0.0.1:0"])
    server.start()
    port = server.port
    try:
        assert server.host == "127.0.0.1"
        assert port > 0
        assert server.url == f"http://127.0.0.1:{port}"
        caplog.set_level(logging.DEBUG, logger="connect_lite.rest.server")
        with urllib.request.urlopen(server.url + "/connectors/", timeout=5) as response:
            assert response.status == 200
            assert response.headers["Content-Type"] == "application/json"
            assert json.loads(response.read()) == []
        assert any(" GET /connectors/ -> 200 " in r.getMessage() for r in caplog.records)
        request = urllib.request.Request(server.url + "/connectors/nope", method="DELETE")
        with pytest.raises(urllib.error.HTTPError) as failure:
            urllib.request.urlopen(request, timeout=5)
        assert failure.value.code == 404
        assert json.loads(failure.value.read()) == {
            "error_code": 404,
            "message": NOT_FOUND.format("nope"),
        }
    finally:
        server.stop()
    assert refused("127.0.0.1", port)


def test_a_stopped_server_port_can_be_served_again(loggers: Loggers) -> None:
    """The restart case: a fixed port is bound again right after stop (TIME_WAIT is fine)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app = create_app(FakeHerder(), loggers)
    for _ in range(2):
        server = RestServer(app, [f"http://127.0.0.1:{port}"])
        server.start()
        try:
            assert server.port == port
            with urllib.request.urlopen(server.url + "/", timeout=5) as response:
                assert json.loads(response.read())["version"] == "4.1.0"
        finally:
            server.stop()
        assert refused("127.0.0.1", port)


def test_a_port_in_use_fails_start(loggers: Loggers) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = RestServer(create_app(FakeHerder(), loggers), [f"http://127.0.0.1:{port}"])
        with pytest.raises(ConnectError) as failed:
            server.start()
    assert str(failed.value) == (
        f"Could not bind REST listener http://127.0.0.1:{port}: the port is in use. Stop what "
        "uses it, or change listeners in the worker config (listeners=http://host:port)."
    )


@pytest.mark.parametrize(
    "code, why",
    [
        (errno.EACCES, "permission denied (ports below 1024 need privileges)"),
        (errno.EADDRNOTAVAIL, "the address is not one of this machine's"),
        (errno.EMFILE, os.strerror(errno.EMFILE)),
    ],
)
def test_every_bind_failure_names_the_listeners_key(code: int, why: str) -> None:
    # as cheroot raises it: a new OSError without errno, the bind's error in its message
    cheroots = OSError(f"No socket could be created -- (('10.9.8.7', 80): [Errno {code}] x)")
    message = bind_failure(Listener("10.9.8.7", 80), cheroots)
    assert message == (
        f"Could not bind REST listener http://10.9.8.7:80: {why}. "
        "Change listeners in the worker config (listeners=http://host:port)."
    )


@pytest.mark.parametrize(
    "listener, expected",
    [
        ("http://127.0.0.1:8083", ("127.0.0.1", Listener("127.0.0.1", 8083))),
        ("HTTP://localhost:0", ("localhost", Listener("localhost", 0))),
        ("http://:8083", ("0.0.0.0", Listener("", 8083))),
        ("http://[::1]:9000/", ("::1", Listener("[::1]", 9000))),
    ],
)
def test_parse_listener(listener: str, expected: tuple[str, Listener]) -> None:
    host, parsed = expected
    assert listener_of(listener) == parsed
    assert listener_of(listener).host == host


@pytest.mark.parametrize("listener", ["127.0.0.1:8083", "http://host", "ftp://h:1", "http://h:x"])
def test_bad_listeners_are_config_errors(listener: str) -> None:
    with pytest.raises(ConfigError, match="Could not parse listener"):
        listener_of(listener)


def test_https_listeners_are_parsed() -> None:
    assert listener_of("https://h:8443") == Listener("h", 8443, "https")
    assert listener_of("https://127.0.0.1:0").loopback
    assert listener_of("https://[::1]:0").loopback
    assert not listener_of("http://0.0.0.0:1").loopback


def test_https_needs_a_tls_context(loggers: Loggers) -> None:
    with pytest.raises(ConfigError, match="needs a TLS context"):
        RestServer(create_app(FakeHerder(), loggers), ["https://127.0.0.1:0"])


def test_real_chunked_bodies_are_limited_and_read_whole(loggers: Loggers) -> None:
    """Through cheroot's de-chunking: over the limit is 413, under it is read whole."""
    from connect_lite.config.rest_security import RestSecurity

    herder = FakeHerder()
    app = create_app(herder, loggers, RestSecurity(max_request_bytes=2000))
    server = RestServer(app, ["http://127.0.0.1:0"])
    server.start()
    try:

        def post(config: dict[str, str]) -> int:
            body = json.dumps({"name": config["n"], "config": config}).encode()
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
            try:
                pieces = (body[i : i + 300] for i in range(0, len(body), 300))
                conn.request(
                    "POST",
                    "/connectors",
                    body=pieces,
                    headers={"Content-Type": "application/json"},
                    encode_chunked=True,
                )
                return conn.getresponse().status
            finally:
                conn.close()

        assert post({"n": "big", "connector.class": "X", "p": "x" * 5000}) == 413
        assert post({"n": "small", "connector.class": "X", "p": "x" * 1500}) == 201
        assert herder.configs["small"]["p"] == "x" * 1500
        assert "big" not in herder.configs
    finally:
        server.stop()


@pytest.mark.parametrize("framing", ["chunked", "length"])
def test_a_client_still_sending_a_refused_body_reads_the_413(
    loggers: Loggers, framing: str
) -> None:
    """The 413 is sent before the body is read, and what the client still sends is then read
    and dropped off the request threads (a lingering close): a client that goes on sending
    finishes, then reads the 413 (not a broken pipe or a reset)."""
    from connect_lite.config.rest_security import RestSecurity

    app = create_app(FakeHerder(), loggers, RestSecurity(max_request_bytes=1000))
    server = RestServer(app, ["http://127.0.0.1:0"])
    server.start()
    try:
        body = json.dumps({"name": "big", "config": {"p": "x" * 20_000}}).encode()
        pieces = [body[i : i + 500] for i in range(0, len(body), 500)]
        if framing == "chunked":
            head = b"Transfer-Encoding: chunked\r\n"
            pieces = [b"%x\r\n%s\r\n" % (len(p), p) for p in pieces] + [b"0\r\n\r\n"]
        else:
            head = b"Content-Length: %d\r\n" % len(body)
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            sock.sendall(
                b"POST /connectors HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: application/json\r\n" + head + b"\r\n"
            )
            for piece in pieces:  # paced, so the server answers while the client still sends
                sock.sendall(piece)
                time.sleep(0.01)
            answer = sock.makefile("rb").readline()
        assert answer.startswith(b"HTTP/1.1 413 ")
    finally:
        server.stop()


def test_header_deadlines_shut_only_connections_still_reading_headers() -> None:
    """One watchdog thread for every request: a released request's socket stays open, one
    past its deadline is shut (its peer reads the end of the stream)."""
    from connect_lite.rest.slow_clients import Deadlines

    deadlines = Deadlines(0.3, "test-deadlines")
    pairs = [socket.socketpair() for _ in range(3)]
    try:
        tokens = [deadlines.watch(server) for server, _ in pairs]
        deadlines.release(tokens[0])  # its headers arrived in time
        deadlines.release(tokens[2])
        late = pairs[1][1]
        late.settimeout(5)
        assert late.recv(1) == b""  # shut by the watchdog
        for kept in (pairs[0][1], pairs[2][1]):
            kept.setblocking(False)
            with pytest.raises(BlockingIOError):  # still open, nothing to read
                kept.recv(1)
        token = deadlines.watch(pairs[0][0])  # the watchdog goes on after a shut
        pairs[0][1].setblocking(True)
        pairs[0][1].settimeout(5)
        assert pairs[0][1].recv(1) == b""
        deadlines.release(token)  # releasing an expired request is harmless
    finally:
        deadlines.close()
        for a, b in pairs:
            a.close()
            b.close()
