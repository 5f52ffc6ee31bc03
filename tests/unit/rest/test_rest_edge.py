"""The REST edge: Host check, CORS, basic auth, body limits and hostile JSON, before any route."""

from __future__ import annotations

import base64
import io
import json
import logging
from typing import Any

import pytest
from flask.testing import FlaskClient

from connect_lite.config.rest_security import RestSecurity
from connect_lite.logs.loggers import Loggers
from connect_lite.rest import create_app
from connect_lite.rest.edge import LOOPBACK_ENVIRON

from .fake_herder import FakeHerder

USERS = {"alice": "s3cret", "bob": "hunter2"}


def make_client(herder: FakeHerder, loggers: Loggers, **settings: Any) -> FlaskClient:
    return create_app(herder, loggers, RestSecurity(**settings)).test_client()


def basic(user: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def test_loopback_listener_refuses_a_foreign_host(herder: FakeHerder, loggers: Loggers) -> None:
    client = make_client(herder, loggers, allowed_hosts=frozenset({"connect.internal"}))
    flagged = {LOOPBACK_ENVIRON: True}
    for host in ("127.0.0.1:8083", "localhost", "[::1]:8083", "LOCALHOST:1", "connect.internal"):
        response = client.get("/connectors", headers={"Host": host}, environ_base=flagged)
        assert response.status_code == 200, host
    rebound = client.get("/connectors", headers={"Host": "attacker.example"}, environ_base=flagged)
    assert rebound.status_code == 403
    assert rebound.get_json() == {
        "error_code": 403,
        "message": "Host 'attacker.example' is not allowed on a loopback listener; "
        "add it to rest.allowed.hosts",
    }
    # a listener on another interface serves any Host (it is meant to be reached by name)
    assert client.get("/connectors", headers={"Host": "attacker.example"}).status_code == 200


def test_basic_auth_guards_every_route(herder: FakeHerder, loggers: Loggers) -> None:
    client = make_client(herder, loggers, credentials=USERS)
    for path in ("/", "/connectors", "/connector-plugins", "/nowhere", "/health"):
        missing = client.get(path)
        assert missing.status_code == 401, path
        assert missing.headers["WWW-Authenticate"] == 'Basic realm="connect-lite"'
        assert missing.get_json() == {
            "error_code": 401,
            "message": "User cannot access the resource.",
        }
    assert client.get("/connectors", headers=basic("alice", "wrong")).status_code == 401
    assert client.get("/connectors", headers=basic("mallory", "s3cret")).status_code == 401
    assert client.get("/connectors", headers={"Authorization": "Basic !!!"}).status_code == 401
    assert client.get("/connectors", headers=basic("alice", "s3cret")).status_code == 200
    created = client.post(
        "/connectors",
        json={"name": "src", "config": {"connector.class": "X"}},
        headers=basic("bob", "hunter2"),
    )
    assert created.status_code == 201
    refused = client.post("/connectors", json={"name": "other", "config": {}})
    assert refused.status_code == 401
    assert "other" not in herder.configs


def test_passwords_and_authorization_headers_are_never_logged(
    herder: FakeHerder, loggers: Loggers, caplog: pytest.LogCaptureFixture
) -> None:
    client = make_client(herder, loggers, credentials=USERS)
    with caplog.at_level(logging.DEBUG):
        client.get("/connectors", headers=basic("alice", "wrong-password"))
        client.get("/connectors", headers=basic("alice", "s3cret"))
    text = caplog.text + repr([r.__dict__ for r in caplog.records])
    assert "s3cret" not in text and "wrong-password" not in text
    assert base64.b64encode(b"alice:s3cret").decode() not in text


def test_cors_off_by_default(client: FlaskClient) -> None:
    response = client.get("/connectors", headers={"Origin": "https://ui.example"})
    assert "Access-Control-Allow-Origin" not in response.headers
    preflight = client.options(
        "/connectors",
        headers={"Origin": "https://ui.example", "Access-Control-Request-Method": "POST"},
    )
    assert "Access-Control-Allow-Origin" not in preflight.headers


def test_cors_preflight_and_simple_requests(herder: FakeHerder, loggers: Loggers) -> None:
    client = make_client(
        herder,
        loggers,
        cors_origins=("https://ui.example",),
        cors_methods=("GET", "POST", "PUT", "DELETE"),
        credentials=USERS,
    )
    preflight = client.options(
        "/connectors",
        headers={"Origin": "https://ui.example", "Access-Control-Request-Method": "PUT"},
    )
    assert preflight.status_code == 204  # a browser sends no credentials in a preflight
    assert preflight.headers["Access-Control-Allow-Origin"] == "https://ui.example"
    assert preflight.headers["Access-Control-Allow-Methods"] == "GET,POST,PUT,DELETE"
    assert "Authorization" in preflight.headers["Access-Control-Allow-Headers"]
    foreign = client.options(
        "/connectors",
        headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "PUT"},
    )
    assert foreign.status_code == 403
    assert "Access-Control-Allow-Origin" not in foreign.headers
    real = client.get(
        "/connectors", headers={"Origin": "https://ui.example", **basic("alice", "s3cret")}
    )
    assert real.status_code == 200
    assert real.headers["Access-Control-Allow-Origin"] == "https://ui.example"


def test_body_over_the_limit_is_413_before_any_route(herder: FakeHerder, loggers: Loggers) -> None:
    client = make_client(herder, loggers, max_request_bytes=100)
    config = {"connector.class": "X", "padding": "x" * 200}
    response = client.post("/connectors", json={"name": "big", "config": config})
    assert response.status_code == 413
    assert response.get_json() == {
        "error_code": 413,
        "message": "HTTP 413 Request Entity Too Large",
    }
    assert "big" not in herder.configs
    small = client.post("/connectors", json={"name": "s", "config": {"connector.class": "X"}})
    assert small.status_code == 201


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested deeper than the 64 levels allowed"),
        ('{"a":' * 65 + "1" + "}" * 65, "nested deeper than the 64 levels allowed"),
        (
            json.dumps({"offsets": [{"partition": {"f": 1}, "offset": {"p": 0}}]}).replace(
                "0}", "1" * 5000 + "}"
            ),
            "a number of 5000 digits is longer than the 1000 allowed",
        ),
    ],
)
def test_hostile_json_is_400(client: FlaskClient, raw: str, message: str) -> None:
    response = client.post("/connectors", data=raw, content_type="application/json")
    assert response.status_code == 400
    assert message in response.get_json()["message"]
    patched = client.patch("/connectors/x/offsets", data=raw, content_type="application/json")
    assert patched.status_code == 400


def test_nesting_up_to_the_bound_is_parsed(client: FlaskClient) -> None:
    raw = '{"name": "n", "config": {"connector.class": "X"}, "x": ' + "[" * 61 + "]" * 61 + "}"
    response = client.post("/connectors", data=raw, content_type="application/json")
    assert response.status_code == 400  # an unknown field, not the depth
    assert "nested" not in response.get_json()["message"]


def test_a_chunked_body_over_the_limit_is_413_not_cut_short(
    herder: FakeHerder, loggers: Loggers
) -> None:
    client = make_client(herder, loggers, max_request_bytes=1000)
    body = json.dumps({"name": "big", "config": {"connector.class": "X", "p": "x" * 3000}})

    def chunks(data: str) -> io.BytesIO:
        return io.BytesIO(data.encode())  # the server hands the app a de-chunked stream

    big = client.post(
        "/connectors",
        input_stream=chunks(body),
        headers={"Transfer-Encoding": "chunked", "Content-Type": "application/json"},
    )
    assert big.status_code == 413
    assert "big" not in herder.configs
    small = json.dumps({"name": "small", "config": {"connector.class": "X"}})
    ok = client.post(
        "/connectors",
        input_stream=chunks(small),
        headers={"Transfer-Encoding": "chunked", "Content-Type": "application/json"},
    )
    assert ok.status_code == 201, ok.get_json()


@pytest.mark.parametrize("coding", ["Chunked", "chunked, chunked", "gzip, chunked"])
def test_any_transfer_coding_means_a_body_that_must_be_json(
    client: FlaskClient, herder: FakeHerder, coding: str
) -> None:
    response = client.post(
        "/connectors",
        data='{"name": "n", "config": {"connector.class": "X"}}',
        headers={"Transfer-Encoding": coding, "Content-Type": "text/plain"},
    )
    assert response.status_code == 415
    assert "n" not in herder.configs


def test_a_password_must_match_exactly(herder: FakeHerder, loggers: Loggers) -> None:
    client = make_client(herder, loggers, credentials={"alice": "s3cret"})
    for password in ("", "\0" * 32, "s3cret ", "S3CRET", "s3cre"):
        assert client.get("/connectors", headers=basic("alice", password)).status_code == 401
    no_colon = {"Authorization": "Basic " + base64.b64encode(b"alice").decode()}
    assert client.get("/connectors", headers=no_colon).status_code == 401


def test_host_names_ignore_a_trailing_dot_and_allowed_hosts_their_port(
    herder: FakeHerder, loggers: Loggers
) -> None:
    from connect_lite.config.worker import WorkerConfig

    security = WorkerConfig(
        {"bootstrap.servers": "b:1", "rest.allowed.hosts": "Connect.Internal:8083"}
    ).rest_security()
    client = create_app(herder, loggers, security).test_client()
    flagged = {LOOPBACK_ENVIRON: True}
    for host in ("localhost.", "localhost.:8083", "connect.internal", "connect.internal.:1"):
        response = client.get("/connectors", headers={"Host": host}, environ_base=flagged)
        assert response.status_code == 200, host
    other = client.get("/connectors", headers={"Host": "internal"}, environ_base=flagged)
    assert other.status_code == 403


def test_cors_lets_an_allowed_origin_send_credentials(herder: FakeHerder, loggers: Loggers) -> None:
    named = make_client(herder, loggers, cors_origins=("https://ui.example",))
    response = named.get("/connectors", headers={"Origin": "https://ui.example"})
    assert response.headers["Access-Control-Allow-Credentials"] == "true"
    anyone = make_client(herder, loggers, cors_origins=("*",))
    wildcard = anyone.get("/connectors", headers={"Origin": "https://ui.example"})
    assert wildcard.headers["Access-Control-Allow-Origin"] == "*"
    assert "Access-Control-Allow-Credentials" not in wildcard.headers


@pytest.mark.parametrize("number", ["1e999999", "-1e400", "1.0e309"])
def test_a_number_too_large_for_a_double_is_400(client: FlaskClient, number: str) -> None:
    raw = '{"offsets": [{"partition": {"f": 1}, "offset": {"p": ' + number + "}}]}"
    response = client.patch("/connectors/x/offsets", data=raw, content_type="application/json")
    assert response.status_code == 400
    assert "too large for a double" in response.get_json()["message"]


FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@pytest.mark.parametrize(
    "headers",
    [
        {"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example", **FORM},
        {"Sec-Fetch-Site": "same-site", "Origin": "https://other.localhost"},
        {"Origin": "https://evil.example", **FORM},  # a browser without Sec-Fetch-Site
        {"Sec-Fetch-Site": "cross-site"},  # Origin withheld (a form with no-referrer)
    ],
)
def test_a_cross_site_form_cannot_restart_or_delete(
    client: FlaskClient, with_connector: str, herder: FakeHerder, headers: dict[str, str]
) -> None:
    """A bodiless POST needs no CORS preflight: an HTML form on any site could send one with
    the browser's saved password. Any request of another site that changes something is 403."""
    for method, path in (
        ("POST", f"/connectors/{with_connector}/restart"),
        ("POST", f"/connectors/{with_connector}/tasks/0/restart"),
        ("PUT", f"/connectors/{with_connector}/pause"),
        ("DELETE", f"/connectors/{with_connector}"),
    ):
        response = client.open(path, method=method, headers=headers)
        assert response.status_code == 403, (method, path)
        assert "another site" in response.get_json()["message"]
    assert (
        client.get(f"/connectors/{with_connector}/status").get_json()["connector"]["state"]
        == "RUNNING"
    )
    assert client.get("/connectors", headers=headers).status_code == 200  # reading is fine


@pytest.mark.parametrize(
    "headers",
    [
        {},  # curl, kcctl and every client that is not a browser
        {"Sec-Fetch-Site": "same-origin", "Origin": "http://localhost"},  # the status page
        {"Sec-Fetch-Site": "none"},  # typed into the address bar
        {"Origin": "http://localhost"},  # an older browser on the page's own origin
    ],
)
def test_own_origin_and_non_browser_changes_pass(
    client: FlaskClient, with_connector: str, headers: dict[str, str]
) -> None:
    response = client.put(f"/connectors/{with_connector}/pause", headers=headers)
    assert response.status_code == 202


def test_an_allowed_cors_origin_may_change_things(herder: FakeHerder, loggers: Loggers) -> None:
    client = make_client(herder, loggers, cors_origins=("https://ui.example",))
    config = {"connector.class": "org.example.FileSource", "tasks.max": "1"}
    headers = {"Sec-Fetch-Site": "cross-site", "Origin": "https://ui.example"}
    created = client.post("/connectors", json={"name": "c", "config": config}, headers=headers)
    assert created.status_code == 201
    evil = {"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}
    assert client.delete("/connectors/c", headers=evil).status_code == 403
    assert client.delete("/connectors/c", headers=headers).status_code == 204


def test_a_star_origin_exempts_no_cross_site_change_when_a_password_is_needed(
    herder: FakeHerder, loggers: Loggers
) -> None:
    config = {"connector.class": "org.example.FileSource", "tasks.max": "1"}
    cross = {"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}
    open_client = make_client(herder, loggers, cors_origins=("*",))
    assert open_client.post("/connectors", json={"name": "c", "config": config}).status_code == 201
    assert open_client.put("/connectors/c/pause", headers=cross).status_code == 202
    guarded = make_client(herder, loggers, cors_origins=("*",), credentials=USERS)
    refused = guarded.post(
        "/connectors/c/restart", headers={**cross, **FORM, **basic("alice", "s3cret")}
    )
    assert refused.status_code == 403
