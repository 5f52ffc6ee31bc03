"""HttpClient returns every answer (status, body, headers, raw); ConnectClient raises the
worker's errors as ConnectRestError; both send basic auth. Against a local HTTP server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from connect_lite.testing import ConnectClient, ConnectRestError, HttpClient

SEEN: list[dict[str, Any]] = []


class Scripted(BaseHTTPRequestHandler):
    """Answers by path; records each request's method, path, headers and body."""

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        SEEN.append(
            {
                "method": self.command,
                "path": self.path,
                "headers": dict(self.headers),
                "body": self.rfile.read(length),
            }
        )
        status, content_type, body = {
            "/connectors": (200, "application/json", b'["a"]'),
            "/missing": (404, "application/json", b'{"error_code": 404, "message": "gone"}'),
            "/text": (500, "text/plain", b"boom"),
            "/empty": (204, "", b""),
        }[self.path]
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        self.send_header("X-Answered", "yes")
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def url() -> Iterator[str]:
    SEEN.clear()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_http_client_returns_error_answers_instead_of_raising(url: str) -> None:
    http = HttpClient(url)
    ok = http.get("/connectors")
    assert (ok.status, ok.body, ok.raw) == (200, ["a"], b'["a"]')
    assert ok.headers["x-answered"] == "yes"  # case-insensitive
    missing = http.delete("/missing")
    assert (missing.status, missing.body) == (404, {"error_code": 404, "message": "gone"})
    text = http.get("/text")
    assert (text.status, text.body, text.raw) == (500, "boom", b"boom")
    empty = http.put("/empty")
    assert (empty.status, empty.body, empty.raw) == (204, None, b"")


def test_http_client_sends_json_raw_bodies_headers_and_basic_auth(url: str) -> None:
    http = HttpClient(url, auth=("operator", "s3cret"))
    http.post("/connectors", {"name": "x"})
    http.request("PATCH", "/empty", raw=b"[1", content_type="text/plain", headers={"X-A": "b"})
    posted, patched = SEEN
    assert (posted["method"], posted["body"]) == ("POST", json.dumps({"name": "x"}).encode())
    assert posted["headers"]["Content-Type"] == "application/json"
    assert posted["headers"]["Authorization"] == "Basic b3BlcmF0b3I6czNjcmV0"
    assert (patched["method"], patched["body"]) == ("PATCH", b"[1")
    assert (patched["headers"]["Content-Type"], patched["headers"]["X-A"]) == ("text/plain", "b")


def test_connect_client_raises_the_workers_error(url: str) -> None:
    client = ConnectClient(url, auth=("operator", "s3cret"))
    assert client.connectors() == ["a"]
    with pytest.raises(ConnectRestError) as missing:
        client.request("GET", "/missing")
    assert (missing.value.status, missing.value.error_code, missing.value.message) == (
        404,
        404,
        "gone",
    )
    with pytest.raises(ConnectRestError) as text:
        client.request("GET", "/text")
    assert (text.value.status, text.value.message) == (500, "boom")
    assert all(seen["headers"]["Accept"] == "application/json" for seen in SEEN)
    assert all(seen["headers"]["Authorization"].startswith("Basic ") for seen in SEEN)
