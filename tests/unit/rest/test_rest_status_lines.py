"""Every status line carries Jetty's reason phrase, read off a real socket: the app's answers,
the edge's refusals and cheroot's own."""

from __future__ import annotations

import base64
import json
import socket
from collections.abc import Iterator

import pytest

from connect_lite.config.rest_security import RestSecurity
from connect_lite.control.herder_api import WorkerStartingError
from connect_lite.logs.loggers import Loggers
from connect_lite.rest import RestServer, create_app
from connect_lite.rest.status_lines import reason_phrase, status_line

from .fake_herder import FakeHerder

AUTH = "Basic " + base64.b64encode(b"alice:s3cret").decode()
CONFIG = json.dumps({"name": "c", "config": {"connector.class": "org.example.Src"}})


@pytest.mark.parametrize(
    ("given", "written"),
    [
        ("200 OK", "200 OK"),
        ("404 NOT FOUND", "404 Not Found"),
        ("405 METHOD NOT ALLOWED", "405 Method Not Allowed"),
        ("413 REQUEST ENTITY TOO LARGE", "413 Payload Too Large"),
        ("413 Request Entity Too Large", "413 Payload Too Large"),  # cheroot's
        ("414 Request-URI Too Long", "414 URI Too Long"),  # cheroot's
        ("415 UNSUPPORTED MEDIA TYPE", "415 Unsupported Media Type"),
        ("500 INTERNAL SERVER ERROR", "500 Server Error"),
        ("501 Unimplemented", "501 Not Implemented"),  # cheroot's
        ("503 SERVICE UNAVAILABLE", "503 Service Unavailable"),
        ("302 FOUND", "302 Found"),
        ("204", "204 No Content"),
        ("599 WHATEVER", "599 599"),  # Jetty writes the code for a code it has no phrase for
        ("garbage", "garbage"),
        ("2000 OK", "2000 OK"),
    ],
)
def test_status_line(given: str, written: str) -> None:
    assert status_line(given) == written


def test_reason_phrase() -> None:
    assert (reason_phrase(201), reason_phrase(202), reason_phrase(409)) == (
        "Created",
        "Accepted",
        "Conflict",
    )


@pytest.fixture
def served(loggers: Loggers) -> Iterator[tuple[FakeHerder, int]]:
    herder = FakeHerder()
    security = RestSecurity(credentials={"alice": "s3cret"}, max_request_bytes=1000)
    server = RestServer(create_app(herder, loggers, security), ["http://127.0.0.1:0"])
    server.start()
    try:
        yield herder, server.port
    finally:
        server.stop()


def first_line(port: int, request: bytes) -> bytes:
    """The status line the server answers ``request`` with, as sent."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        return sock.makefile("rb").readline()


def call(
    port: int,
    method: str,
    path: str,
    body: str = "",
    *,
    auth: bool = True,
    host: str = "127.0.0.1",
    content_type: str = "application/json",
) -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n"
    if auth:
        head += f"Authorization: {AUTH}\r\n"
    if body:
        head += f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
    return first_line(port, (head + "\r\n" + body).encode())


def test_every_answer_carries_jettys_phrase(served: tuple[FakeHerder, int]) -> None:
    herder, port = served
    assert call(port, "GET", "/") == b"HTTP/1.1 200 OK\r\n"
    assert call(port, "POST", "/connectors", CONFIG) == b"HTTP/1.1 201 Created\r\n"
    assert call(port, "PUT", "/connectors/c/pause") == b"HTTP/1.1 202 Accepted\r\n"
    assert call(port, "POST", "/connectors", CONFIG) == b"HTTP/1.1 409 Conflict\r\n"
    assert call(port, "DELETE", "/connectors/c") == b"HTTP/1.1 204 No Content\r\n"
    assert call(port, "POST", "/connectors", "{") == b"HTTP/1.1 400 Bad Request\r\n"
    assert call(port, "GET", "/connectors/c") == b"HTTP/1.1 404 Not Found\r\n"
    assert call(port, "GET", "/nowhere") == b"HTTP/1.1 404 Not Found\r\n"
    assert call(port, "DELETE", "/connectors") == b"HTTP/1.1 405 Method Not Allowed\r\n"
    herder.configs["c"] = {"connector.class": "org.example.Src"}
    herder.fail_with = RuntimeError("boom")
    assert call(port, "GET", "/connectors/c/config") == b"HTTP/1.1 500 Server Error\r\n"
    herder.fail_with = WorkerStartingError("Worker is still starting up.")
    assert call(port, "GET", "/connectors/c/config") == b"HTTP/1.1 503 Service Unavailable\r\n"


def test_the_edges_refusals_carry_jettys_phrase(served: tuple[FakeHerder, int]) -> None:
    _, port = served
    assert call(port, "GET", "/", auth=False) == b"HTTP/1.1 401 Unauthorized\r\n"
    assert call(port, "GET", "/", host="attacker.example") == b"HTTP/1.1 403 Forbidden\r\n"
    big = json.dumps({"name": "c", "config": {"p": "x" * 2000}})
    assert call(port, "POST", "/connectors", big) == b"HTTP/1.1 413 Payload Too Large\r\n"
    typed = call(port, "POST", "/connectors", CONFIG, content_type="text/plain")
    assert typed == b"HTTP/1.1 415 Unsupported Media Type\r\n"


def test_the_servers_own_answers_carry_jettys_phrase(served: tuple[FakeHerder, int]) -> None:
    _, port = served
    long_uri = b"GET /" + b"x" * (70 * 1024) + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    assert first_line(port, long_uri) == b"HTTP/1.1 414 URI Too Long\r\n"
    big_headers = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + b"p" * (70 * 1024) + b"\r\n\r\n"
    assert first_line(port, big_headers) == b"HTTP/1.1 413 Payload Too Large\r\n"
    assert first_line(port, b"NONSENSE\r\n\r\n") == b"HTTP/1.1 400 Bad Request\r\n"
    version = first_line(port, b"GET / HTTP/2.5\r\nHost: 127.0.0.1\r\n\r\n")
    assert version == b"HTTP/1.1 505 HTTP Version Not Supported\r\n"
