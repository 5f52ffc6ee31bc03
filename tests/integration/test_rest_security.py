"""A real worker on the network: TLS and mTLS, basic auth, browser safety, limits, bad inputs.

One worker serves every test here: an http and an https listener side by side, basic auth, CORS
for one origin, mTLS required on https, and a 1 MiB body limit.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import select
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from connect_lite.rest.server import BODY_DEADLINE_S
from connect_lite.testing import EmbeddedConnect, free_port, wait_for
from tests.integration.testkit import REPO, source_config, unique, worker_options
from tests.tls_certs import PASSWORD, Pki, make_pki

pytestmark = pytest.mark.integration

USER, SECRET = "operator", "s3cret-pass"
ORIGIN = "https://ui.example"
MAX_BODY = 1024 * 1024


@dataclass
class Answer:
    status: int
    headers: http.client.HTTPMessage
    body: Any


@dataclass
class Secured:
    """The secured worker and how to reach it."""

    worker: EmbeddedConnect
    pki: Pki
    http_port: int
    https_port: int

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        auth: tuple[str, str] | None = (USER, SECRET),
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
        tls: ssl.SSLContext | None = None,
        timeout: float = 60,
    ) -> Answer:
        if tls is None:
            conn: http.client.HTTPConnection = http.client.HTTPConnection(
                "127.0.0.1", self.http_port, timeout=timeout
            )
        else:
            conn = http.client.HTTPSConnection(
                "127.0.0.1", self.https_port, timeout=timeout, context=tls
            )
        sent = headers.copy() if headers else {}
        if auth is not None:
            token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
            sent["Authorization"] = f"Basic {token}"
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        if data is not None and headers is None:
            sent["Content-Type"] = "application/json"
        try:
            conn.request(method, path, body=data, headers=sent)
            response = conn.getresponse()
            payload = response.read()
        finally:
            conn.close()
        parsed = json.loads(payload) if payload.startswith((b"{", b"[")) else payload
        return Answer(response.status, response.headers, parsed)

    def client_tls(self, cert: Path | None = None, key: Path | None = None) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=str(self.pki.ca_pem))
        if cert is not None:
            context.load_cert_chain(str(cert), str(key))
        return context

    def connect(self, tls: ssl.SSLContext | None = None) -> socket.socket:
        """A raw connection to the http listener, or with ``tls`` to the https one."""
        port = self.http_port if tls is None else self.https_port
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        if tls is None:
            return sock
        try:
            return tls.wrap_socket(sock, server_hostname="127.0.0.1")
        except BaseException:
            sock.close()
            raise


@pytest.fixture(scope="module")
def secured(bootstrap_servers: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Secured]:
    workdir = tmp_path_factory.mktemp("secured")
    pki = make_pki(workdir / "pki")
    credentials = workdir / "credentials.properties"
    credentials.write_text(f"# users of the REST API\n{USER}={SECRET}\nviewer: view-only\n")
    http_port, https_port = free_port(), free_port()
    extra = {
        "listeners": f"http://127.0.0.1:{http_port},https://127.0.0.1:{https_port}",
        "listeners.https.ssl.keystore.type": "PEM",
        "listeners.https.ssl.keystore.location": str(pki.server_pem),
        "listeners.https.ssl.truststore.type": "PKCS12",
        "listeners.https.ssl.truststore.location": str(pki.ca_p12),
        "listeners.https.ssl.truststore.password": PASSWORD,
        "listeners.https.ssl.client.auth": "required",
        "rest.extension.classes": "org.apache.kafka.connect.rest.basic.auth.extension."
        "BasicAuthSecurityRestExtension",
        "rest.basic.auth.credentials.file": str(credentials),
        "access.control.allow.origin": ORIGIN,
        "access.control.allow.methods": "GET,POST,PUT,DELETE",
        "rest.max.request.bytes": str(MAX_BODY),
    }
    options = worker_options(workdir=workdir, worker_properties=extra, rest_auth=(USER, SECRET))
    with EmbeddedConnect(bootstrap_servers=bootstrap_servers, **options) as worker:
        assert worker.rest_url == f"http://127.0.0.1:{http_port}"
        yield Secured(worker, pki, http_port, https_port)
    log = worker.log_text()
    assert SECRET not in log and "view-only" not in log
    assert base64.b64encode(f"{USER}:{SECRET}".encode()).decode() not in log


def test_tls_handshake_with_a_client_certificate(secured: Secured) -> None:
    signed = secured.client_tls(secured.pki.client_cert, secured.pki.client_key)
    root = secured.call("GET", "/", tls=signed)
    assert root.status == 200 and root.body["version"]
    assert secured.call("GET", "/connectors", tls=signed).status == 200
    # mTLS required: no certificate, or one the CA never signed, is refused in the handshake
    for refused in (
        secured.client_tls(),
        secured.client_tls(secured.pki.rogue_cert, secured.pki.rogue_key),
    ):
        with pytest.raises((ssl.SSLError, ConnectionError)):
            secured.call("GET", "/", tls=refused)
    # a client that does not trust the test CA refuses the server
    with pytest.raises(ssl.SSLCertVerificationError):
        secured.call("GET", "/", tls=ssl.create_default_context())
    # plain HTTP on the https port is answered with an error, never with data
    plain = http.client.HTTPConnection("127.0.0.1", secured.https_port, timeout=10)
    try:
        plain.request("GET", "/connectors")
        assert plain.getresponse().status == 400
    except ConnectionError:
        pass  # or the connection is dropped
    finally:
        plain.close()


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/"),
        ("GET", "/health"),
        ("GET", "/connectors"),
        ("GET", "/connector-plugins"),
        ("GET", "/admin/loggers"),
        ("GET", "/metrics"),
        ("POST", "/connectors"),
        ("DELETE", "/connectors/none"),
    ],
)
def test_basic_auth_on_every_route(secured: Secured, method: str, path: str) -> None:
    body = {"name": unique("auth"), "config": source_config(unique("t"))}
    for auth in (None, (USER, "wrong"), ("nobody", SECRET)):
        refused = secured.call(method, path, body if method == "POST" else None, auth=auth)
        assert refused.status == 401, (auth, refused.body)
        assert refused.headers["WWW-Authenticate"] == 'Basic realm="connect-lite"'
        assert refused.body == {"error_code": 401, "message": "User cannot access the resource."}
    allowed = secured.call(method, path, body if method == "POST" else None)
    assert allowed.status in {200, 201, 404}, allowed.body
    assert allowed.status == {"POST": 201, "DELETE": 404}.get(method, 200)
    if method == "POST":
        assert secured.call("DELETE", f"/connectors/{body['name']}").status == 204
    viewer = secured.call("GET", "/connectors", auth=("viewer", "view-only"))
    assert viewer.status == 200


def test_a_body_must_be_json(secured: Secured) -> None:
    name = unique("typed")
    raw = json.dumps(source_config(unique("t"))).encode()
    for headers in ({"Content-Type": "text/plain"}, {"Content-Type": ""}, {}):
        # with {}, http.client sends no Content-Type at all
        answer = secured.call("PUT", f"/connectors/{name}/config", raw=raw, headers=headers)
        assert answer.status == 415, headers
        assert answer.body == {"error_code": 415, "message": "HTTP 415 Unsupported Media Type"}
    assert secured.call("GET", f"/connectors/{name}").status == 404


def test_a_foreign_host_is_refused_on_a_loopback_listener(secured: Secured) -> None:
    rebound = secured.call("GET", "/connectors", headers={"Host": "attacker.example"})
    assert rebound.status == 403
    assert "attacker.example" in rebound.body["message"]
    for host in (f"127.0.0.1:{secured.http_port}", f"localhost:{secured.http_port}"):
        assert secured.call("GET", "/connectors", headers={"Host": host}).status == 200


def test_a_body_over_the_limit_is_413(secured: Secured) -> None:
    name = unique("big")
    config = {**source_config(unique("t")), "padding": "x" * (MAX_BODY + 1)}
    answer = secured.call("POST", "/connectors", {"name": name, "config": config})
    assert answer.status == 413
    assert answer.body == {"error_code": 413, "message": "HTTP 413 Request Entity Too Large"}
    assert secured.call("GET", f"/connectors/{name}").status == 404


def _first_line(secured: Secured, request: bytes) -> bytes:
    """The status line the http listener answers ``request`` with, as it comes off the socket."""
    with secured.connect() as sock:
        sock.sendall(request)
        return sock.makefile("rb").readline()


def _status_line(
    secured: Secured,
    method: str,
    path: str,
    body: Any = None,
    *,
    auth: bool = True,
    headers: dict[str, str] | None = None,
) -> bytes:
    data = b"" if body is None else json.dumps(body).encode()
    sent = {"Host": "127.0.0.1", "Connection": "close", **(headers or {})}
    if auth:
        sent["Authorization"] = "Basic " + base64.b64encode(f"{USER}:{SECRET}".encode()).decode()
    if data:
        sent = {"Content-Type": "application/json", **sent, "Content-Length": str(len(data))}
    head = "".join(f"{k}: {v}\r\n" for k, v in sent.items())
    return _first_line(secured, f"{method} {path} HTTP/1.1\r\n{head}\r\n".encode() + data)


def test_status_lines_carry_jettys_reason_phrases(secured: Secured) -> None:
    """Kafka's Jetty writes "HTTP/1.1 404 Not Found" (its own phrases, not RFC 9110's for 413
    and 500), and clients quote the phrase: so on every path, the app's, the edge's and the
    HTTP server's own."""
    name = unique("phrases")
    create = {"name": name, "config": source_config(unique("t"))}
    text = {"Content-Type": "text/plain"}
    foreign = {"Host": "attacker.example"}
    expected: list[tuple[str, str, Any, dict[str, str] | None, str]] = [
        ("GET", "/", None, None, "200 OK"),
        ("POST", "/connectors", create, None, "201 Created"),
        ("PUT", f"/connectors/{name}/pause", None, None, "202 Accepted"),
        ("POST", "/connectors", create, None, "409 Conflict"),
        ("DELETE", f"/connectors/{name}", None, None, "204 No Content"),
        ("GET", f"/connectors/{name}", None, None, "404 Not Found"),
        ("GET", "/nowhere", None, None, "404 Not Found"),
        ("DELETE", "/connectors", None, None, "405 Method Not Allowed"),
        ("POST", "/connectors", {"name": "x"}, None, "400 Bad Request"),
        ("PUT", "/connectors/x/config", {"a": "b"}, text, "415 Unsupported Media Type"),
        ("GET", "/", None, foreign, "403 Forbidden"),
    ]
    for method, path, body, headers, status in expected:
        line = _status_line(secured, method, path, body, headers=headers)
        assert line == f"HTTP/1.1 {status}\r\n".encode(), (method, path)
    assert _status_line(secured, "GET", "/", auth=False) == b"HTTP/1.1 401 Unauthorized\r\n"
    broken = {"name": unique("broken"), "config": source_config("t", **{"fail.on.start": "true"})}
    assert _status_line(secured, "POST", "/connectors", broken) == b"HTTP/1.1 500 Server Error\r\n"
    token = base64.b64encode(f"{USER}:{SECRET}".encode()).decode()
    too_big = (  # refused on its Content-Length, before any of it is read
        "POST /connectors HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Authorization: Basic {token}\r\nContent-Length: {MAX_BODY + 1}\r\n\r\n{{"
    ).encode()
    assert _first_line(secured, too_big) == b"HTTP/1.1 413 Payload Too Large\r\n"
    long_uri = b"GET /" + b"x" * (70 * 1024) + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    assert _first_line(secured, long_uri) == b"HTTP/1.1 414 URI Too Long\r\n"
    assert _first_line(secured, b"NONSENSE\r\n\r\n") == b"HTTP/1.1 400 Bad Request\r\n"
    assert secured.call("DELETE", f"/connectors/{broken['name']}").status == 204


def test_cors_preflight(secured: Secured) -> None:
    asked = {"Origin": ORIGIN, "Access-Control-Request-Method": "PUT"}
    preflight = secured.call("OPTIONS", "/connectors", auth=None, headers=asked)
    assert preflight.status == 204
    assert preflight.headers["Access-Control-Allow-Origin"] == ORIGIN
    assert preflight.headers["Access-Control-Allow-Methods"] == "GET,POST,PUT,DELETE"
    foreign = {"Origin": "https://evil.example", "Access-Control-Request-Method": "PUT"}
    assert secured.call("OPTIONS", "/connectors", auth=None, headers=foreign).status == 403
    real = secured.call("GET", "/connectors", headers={"Origin": ORIGIN})
    assert real.headers["Access-Control-Allow-Origin"] == ORIGIN


DENIED = {
    "producer.override.plugin.library.paths": "/tmp/evil.so",
    "consumer.override.sasl.kerberos.kinit.cmd": "touch /tmp/pwned",
    "admin.override.sasl.oauthbearer.token.endpoint.url": "http://127.0.0.1:9/token",
}


@pytest.mark.parametrize("key", sorted(DENIED))
def test_denied_override_is_refused_on_create_update_and_validate(
    secured: Secured, key: str
) -> None:
    name = unique("denied")
    config = {**source_config(unique("t")), key: DENIED[key]}
    created = secured.call("POST", "/connectors", {"name": name, "config": config})
    assert created.status == 400, created.body
    assert key.split(".override.", 1)[1] in created.body["message"]
    assert secured.call("GET", f"/connectors/{name}").status == 404

    clean = secured.call("PUT", f"/connectors/{name}/config", source_config(unique("t")))
    assert clean.status == 201, clean.body
    updated = secured.call("PUT", f"/connectors/{name}/config", config)
    assert updated.status == 400, updated.body
    assert key not in secured.call("GET", f"/connectors/{name}/config").body

    validated = secured.call(
        "PUT", "/connector-plugins/ScriptedSource/config/validate", {"name": name, **config}
    )
    assert validated.status == 200
    assert validated.body["error_count"] == 1
    [entry] = [c for c in validated.body["configs"] if c["value"]["name"] == key]
    assert len(entry["value"]["errors"]) == 1
    assert secured.call("DELETE", f"/connectors/{name}").status == 204


def test_bad_inputs_are_4xx(secured: Secured) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    assert secured.call("POST", "/connectors", raw=deep).status == 400
    name = unique("offsets")
    assert (
        secured.call("PUT", f"/connectors/{name}/config", source_config(unique("t"))).status == 201
    )
    assert secured.call("PUT", f"/connectors/{name}/stop").status == 204
    nested: Any = {"position": 0}
    for _ in range(900):
        nested = {"n": nested}
    offsets = {"offsets": [{"partition": {"file": "f"}, "offset": nested}]}
    deep_offsets = secured.call("PATCH", f"/connectors/{name}/offsets", offsets)
    assert deep_offsets.status == 400, deep_offsets.body
    huge = (
        b'{"offsets": [{"partition": {"file": "f"}, "offset": {"position": ' + b"7" * 5000 + b"}}]}"
    )
    assert secured.call("PATCH", f"/connectors/{name}/offsets", raw=huge).status == 400
    malformed = {**source_config(unique("t")), "connector.plugin.version": "[1.0"}
    validated = secured.call(
        "PUT", "/connector-plugins/ScriptedSource/config/validate", {"name": "v", **malformed}
    )
    assert validated.status == 200 and validated.body["error_count"] == 1
    created = secured.call("POST", "/connectors", {"name": unique("v"), "config": malformed})
    assert created.status == 400 and "Unbounded range: [1.0" in created.body["message"]
    long_name = "n" * 300_000
    named = secured.call("POST", "/connectors", {"name": long_name, "config": source_config("t")})
    assert named.status == 400 and "at most 249 characters" in named.body["message"]
    assert len(named.body["message"]) < 500
    slash = secured.call("PUT", "/connectors/a%2Fb/config", source_config(unique("t")))
    assert slash.status == 400, slash.body
    assert "a/b" not in secured.call("GET", "/connectors").body
    assert "a%2Fb" not in secured.call("GET", "/connectors").body
    assert secured.call("GET", "/connectors/a%2Fb").status == 404
    assert secured.call("DELETE", f"/connectors/{name}").status == 204
    assert secured.call("GET", "/health").status == 200


def test_slow_clients_do_not_starve_health_and_time_out(secured: Secured) -> None:
    """16 clients trickle a request one byte every 2 s; /health still answers, and the server
    cuts them off at its header deadline instead of waiting for them forever."""
    request = b"GET /connectors HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: " + b"p" * 200
    slow = [socket.create_connection(("127.0.0.1", secured.http_port)) for _ in range(16)]
    ports = {sock.getsockname()[1] for sock in slow}
    closed = threading.Event()
    cut: list[float] = []
    sending: set[int] = set()
    started = time.monotonic()

    def trickle(sock: socket.socket) -> None:
        try:
            for byte in request:
                if closed.is_set():
                    return
                sock.sendall(bytes([byte]))
                sending.add(sock.getsockname()[1])
                time.sleep(2)  # the pace of a slow client, not a wait
        except OSError:
            cut.append(time.monotonic() - started)

    def all_held() -> bool:
        """every slow client's bytes read by the server (each holds a request thread)"""
        unread = _unread_bytes(secured.http_port)
        return len(sending) == len(ports) and all(unread.get(port) == 0 for port in ports)

    threads = [threading.Thread(target=trickle, args=(s,), daemon=True) for s in slow]
    for thread in threads:
        thread.start()
    try:
        wait_for(all_held, 30, interval=0.05)
        for _ in range(5):
            assert secured.call("GET", "/health").status == 200
        for thread in threads:
            thread.join(timeout=60)
        assert len(cut) == 16, f"{len(cut)} of 16 slow clients were cut off"
    finally:
        closed.set()
        for sock in slow:
            sock.close()


def _unread_bytes(server_port: int) -> dict[int, int]:
    """Client port -> bytes the server has not read yet (its receive queue), for each
    established connection to ``server_port`` on 127.0.0.1, as Linux lists them."""
    unread = {}
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        _, local, remote, state, queues, *_ = line.split()
        if state == "01" and int(local.rsplit(":", 1)[1], 16) == server_port:
            unread[int(remote.rsplit(":", 1)[1], 16)] = int(queues.split(":")[1], 16)
    return unread


HUGE = 100_000_000
"""A Content-Length the slow clients below never send: reading it would take forever."""


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_refused_slow_bodies_are_answered_unread_and_leave_threads_to_others(
    secured: Secured, scheme: str
) -> None:
    """40 clients without credentials (more than the 32 request threads) each start a 100 MB
    POST and trickle it a byte every 2 s. Each gets its 401 at once, without the server reading
    the body, and its connection closed; authenticated calls answer meanwhile."""
    tls = None
    if scheme == "https":
        tls = secured.client_tls(secured.pki.client_cert, secured.pki.client_key)
    head = (
        "POST /connectors HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {HUGE}\r\n\r\n{{"
    ).encode()
    slow: list[socket.socket] = []
    try:
        started = time.monotonic()
        for _ in range(40):
            # each sends its head at once: a client silent before its headers holds a request
            # thread until the header deadline, however it means to go on (the residual)
            slow.append(secured.connect(tls))
            slow[-1].sendall(head)
        took: dict[str, tuple[int, float]] = {}

        def authenticated() -> None:  # on its own thread: this one trickles meanwhile
            for path in ("/health", "/"):
                began = time.monotonic()
                status = secured.call("GET", path, tls=tls, timeout=30).status
                took[path] = (status, time.monotonic() - began)

        caller = threading.Thread(target=authenticated, daemon=True)
        caller.start()
        answers = _trickle_until_closed(slow, started, within_s=30)
        caller.join(timeout=60)
        assert took.get("/health", (0, 0))[0] == 200, took
        assert took.get("/", (0, 0))[0] == 200, took
        assert all(seconds < 10 for _, seconds in took.values()), took
        for answer, closed_after in answers:
            assert answer.startswith(b"HTTP/1.1 401 "), answer[:300]
            assert b"\r\nConnection: close\r\n" in answer
            assert closed_after < 20
        assert secured.call("GET", "/health", tls=tls).status == 200
    finally:
        for sock in slow:
            sock.close()


def _trickle_until_closed(
    socks: list[socket.socket], started: float, within_s: float
) -> list[tuple[bytes, float]]:
    """Send each connection one byte every 2 s until the server closes it; return what each
    received and when it was closed (seconds after ``started``). Fails after ``within_s``.
    One thread does it all: a TLS connection must not be read and written at once."""
    received = {sock: b"" for sock in socks}
    closed: dict[socket.socket, float] = {}
    for sock in socks:
        sock.setblocking(False)
    next_byte = time.monotonic() + 2
    while len(closed) < len(socks):
        now = time.monotonic()
        assert now - started < within_s, f"{len(socks) - len(closed)} connections still open"
        still_open = [sock for sock in socks if sock not in closed]
        ready, _, _ = select.select(still_open, [], [], 0.2)
        for sock in ready:
            data, ended = _read_ready(sock)
            received[sock] += data
            if ended:
                closed[sock] = time.monotonic() - started
        if now >= next_byte:
            next_byte += 2
            for sock in still_open:
                with contextlib.suppress(OSError):  # full, or closed: read above
                    sock.send(b" ")
    return [(received[sock], closed[sock]) for sock in socks]


def _read_ready(sock: socket.socket) -> tuple[bytes, bool]:
    """What a non-blocking connection has to read, and whether it has ended."""
    data = b""
    while True:
        try:
            piece = sock.recv(65536)
        except (BlockingIOError, ssl.SSLWantReadError):
            return data, False
        except OSError:  # reset
            return data, True
        if not piece:
            return data, True
        data += piece


def test_an_authenticated_body_that_trickles_is_cut_at_its_deadline(secured: Secured) -> None:
    """Credentials do not buy unbounded time: a body must arrive within BODY_DEADLINE_S,
    even one that never waits long enough between bytes for a read to time out."""
    name = unique("trickled")
    token = base64.b64encode(f"{USER}:{SECRET}".encode()).decode()
    head = (
        "POST /connectors HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Authorization: Basic {token}\r\nContent-Length: 100000\r\n\r\n"
        f'{{"name": "{name}", "config": '
    ).encode()
    with secured.connect() as sock:
        sock.sendall(head)
        started = time.monotonic()
        [(answer, cut_after)] = _trickle_until_closed(
            [sock], started, within_s=BODY_DEADLINE_S + 30
        )
    assert cut_after > BODY_DEADLINE_S - 5, answer[:300]  # its deadline, not an earlier limit
    assert secured.call("GET", f"/connectors/{name}").status == 404
    assert secured.call("GET", "/health").status == 200


def test_a_bad_keystore_stops_the_start_naming_the_key(tmp_path: Path) -> None:
    """Exit 2 with one line naming the key, before the broker, the state file or Spark."""
    missing = tmp_path / "missing.p12"
    props = tmp_path / "worker.properties"
    props.write_text(
        "embedded.broker.enable=true\n"
        f"listeners=https://127.0.0.1:{free_port()}\n"
        f"ssl.keystore.location={missing}\n"
        f"state.storage.file={tmp_path / 'state.db'}\n"
    )
    run = subprocess.run(
        [sys.executable, str(REPO / "app.py"), str(props)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2, run.stderr
    assert f"ssl.keystore.location: cannot read {missing}" in run.stderr
    assert not (tmp_path / "state.db").exists()
