"""A real HTTP server on a socket for the HTTP sink's tests: it records every request, and
answers as a test scripts it (a status, a Retry-After, a delay), optionally behind basic auth.

``with RecordingServer() as server:`` serves on 127.0.0.1 and a free port until the block
ends; ``server.url("/path")`` is its address. By default every request gets 200.
``server.script(503, 503)`` makes the next two requests answer 503; ``server.down = True``
answers 503 to all until set back.
"""

from __future__ import annotations

import base64
import json
import ssl
import threading
import time
import urllib.parse
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode()

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Answer:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


class RecordingServer:
    """Records requests (``requests``: the ones answered 2xx; ``seen``: all of them)."""

    def __init__(
        self,
        user: str | None = None,
        password: str | None = None,
        oauth: tuple[str, str] | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        """``tls``: serve https with that server context. ``user``/``password``: basic auth on
        every path. ``oauth`` (client id, secret):
        ``/token`` issues tokens for the client credentials grant (``token_requests``), and
        every other path wants ``Authorization: Bearer`` with the last one issued."""
        self.requests: list[Request] = []
        self.seen: list[Request] = []
        self.token_requests: list[Request] = []
        self._oauth = oauth
        self._token: str | None = None
        self.down = False
        self._script: deque[Answer] = deque()
        self._lock = threading.Lock()
        self._auth = None
        if user is not None:
            token = base64.b64encode(f"{user}:{password or ''}".encode()).decode()
            self._auth = f"Basic {token}"
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._scheme = "http"
        if tls is not None:
            self._scheme = "https"
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> RecordingServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def url(self, path: str = "/") -> str:
        return f"{self._scheme}://127.0.0.1:{self.port}{path}"

    def script(self, *answers: int | Answer) -> None:
        """The next requests' answers, in order (an int: that status)."""
        with self._lock:
            self._script.extend(a if isinstance(a, Answer) else Answer(a) for a in answers)

    def expire_token(self) -> None:
        """The issued token is refused from now on (401), as an expired one is."""
        with self._lock:
            self._token = "expired"

    def _issue(self, request: Request) -> tuple[Answer, bytes]:
        assert self._oauth is not None
        client, secret = self._oauth
        form = dict(urllib.parse.parse_qsl(request.text))
        basic = base64.b64encode(f"{client}:{secret}".encode()).decode()
        by_header = request.headers.get("authorization") == f"Basic {basic}"
        by_form = form.get("client_id") == client and form.get("client_secret") == secret
        if form.get("grant_type") != "client_credentials" or not (by_header or by_form):
            return Answer(401), b'{"error":"invalid_client"}'
        self._token = f"token-{len(self.token_requests)}"
        return Answer(), json.dumps({"access_token": self._token, "expires_in": 3600}).encode()

    def accepted(self) -> list[Request]:
        with self._lock:
            return list(self.requests)

    def _answer(self, request: Request) -> tuple[Answer, bytes | None]:
        with self._lock:
            if self._oauth is not None and request.path == "/token":
                self.token_requests.append(request)
                return self._issue(request)
            return self._answer_api(request), None

    def _answer_api(self, request: Request) -> Answer:
        """Called with the lock held."""
        self.seen.append(request)
        if self._auth is not None and request.headers.get("authorization") != self._auth:
            return Answer(401, {"WWW-Authenticate": 'Basic realm="test"'})
        bearer = request.headers.get("authorization")
        if self._oauth is not None and bearer != f"Bearer {self._token}":
            return Answer(401, {"WWW-Authenticate": "Bearer"})
        if self.down:
            return Answer(503)
        answer = self._script.popleft() if self._script else Answer()
        if 200 <= answer.status < 300:
            self.requests.append(request)
        return answer

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the sink's pool expects
            disable_nagle_algorithm = True  # else each answer waits ~40 ms for a delayed ACK

            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k.lower(): v for k, v in self.headers.items()}
                answer, payload = owner._answer(Request(self.command, self.path, headers, body))
                if answer.delay_s:
                    time.sleep(answer.delay_s)
                if payload is None:
                    payload = json.dumps({"status": answer.status}).encode()
                self.send_response(answer.status)
                for key, value in answer.headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the tests read ``seen``."""

        return Handler
