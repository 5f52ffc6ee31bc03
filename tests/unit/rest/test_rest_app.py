"""Server info, health, plugins, and what every route shares: errors, bodies, trailing slashes."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

from connect_lite.api.errors import ForbiddenError, TimeoutError_
from connect_lite.control.entities import WorkerHealth

from .fake_herder import NULL_VALUE, UNKNOWN_PLUGIN, FakeHerder
from .helpers import error, src_config

# -- root and health ---------------------------------------------------------------------------


def test_server_info(client: FlaskClient) -> None:
    response = client.get("/")
    assert response.status_code == 200
    assert response.content_type == "application/json"
    assert response.get_json() == {
        "version": "4.1.0",
        "commit": "abc123",
        "kafka_cluster_id": "cluster-1",
    }


@pytest.mark.parametrize("status, code", [("healthy", 200), ("starting", 503), ("unhealthy", 500)])
def test_health_codes_with_worker_status_body(
    client: FlaskClient, herder: FakeHerder, status: str, code: int
) -> None:
    herder.health_value = WorkerHealth(status, f"Worker is {status}.")
    response = client.get("/health")
    assert response.status_code == code
    assert response.get_json() == {"status": status, "message": f"Worker is {status}."}


def test_an_unavailable_worker_is_503_with_its_reason(
    client: FlaskClient, herder: FakeHerder
) -> None:
    reason = "Worker cannot run tasks: Spark failed to start: no JVM."
    herder.health_value = WorkerHealth("unhealthy", reason, unavailable=True)
    response = client.get("/health")
    assert response.status_code == 503
    assert response.get_json() == {"status": "unhealthy", "message": reason}


# -- plugins -----------------------------------------------------------------------------------


def test_connector_plugins_default_to_connectors_only(
    client: FlaskClient, herder: FakeHerder
) -> None:
    response = client.get("/connector-plugins")
    assert response.status_code == 200
    assert response.get_json() == [
        {"class": "org.example.FileSink", "type": "sink", "version": "1.0"},
        {"class": "org.example.FileSource", "type": "source", "version": "2.1"},
    ]
    assert herder.calls[-1] == ("plugins", True)


def test_all_plugins_omit_undefined_versions(client: FlaskClient, herder: FakeHerder) -> None:
    body = client.get("/connector-plugins?connectorsOnly=false").get_json()
    assert herder.calls[-1] == ("plugins", False)
    assert body[-1] == {"class": "org.example.Mask", "type": "transformation"}


def test_plugin_config_passes_the_version(client: FlaskClient, herder: FakeHerder) -> None:
    response = client.get("/connector-plugins/org.example.FileSink/config?version=[1.0,2.0)")
    assert response.status_code == 200
    assert response.get_json()[0]["name"] == "file"
    assert herder.calls[-1] == ("plugin_config", "org.example.FileSink", "[1.0,2.0)")
    client.get("/connector-plugins/org.example.FileSink/config")
    assert herder.calls[-1] == ("plugin_config", "org.example.FileSink", None)


def test_unknown_plugin_config_is_404(client: FlaskClient) -> None:
    error(client.get("/connector-plugins/Nope/config"), 404, UNKNOWN_PLUGIN.format("Nope"))


def test_validate_returns_config_infos(client: FlaskClient, herder: FakeHerder) -> None:
    body = {"connector.class": "org.example.FileSink", "tasks.max": 1, "topics": None}
    response = client.put("/connector-plugins/FileSink/config/validate", json=body)
    assert response.status_code == 200
    assert herder.calls[-1] == (
        "validate",
        "FileSink",
        {"connector.class": "org.example.FileSink", "tasks.max": "1", "topics": None},
    )
    assert response.get_json() == {
        "name": "org.example.FileSink",
        "error_count": 1,
        "groups": ["Common"],
        "configs": [
            {
                "definition": None,
                "value": {
                    "name": "topics",
                    "errors": [NULL_VALUE],
                },
            }
        ],
    }


# -- errors --------------------------------------------------------------------------------------


def test_unknown_route_is_404(client: FlaskClient) -> None:
    error(client.get("/nothing/here"), 404, "HTTP 404 Not Found")
    error(client.get("/connectors/src/tasks-config"), 404, "HTTP 404 Not Found")


def test_wrong_method_is_405(client: FlaskClient) -> None:
    response = client.delete("/connectors")
    error(response, 405, "HTTP 405 Method Not Allowed")
    assert "POST" in response.headers["Allow"]
    error(client.get("/connectors/src/pause"), 405, "HTTP 405 Method Not Allowed")


def test_non_json_body_is_415(client: FlaskClient) -> None:
    response = client.post("/connectors", data="name=src", content_type="text/plain")
    error(response, 415, "HTTP 415 Unsupported Media Type")
    form = client.put("/connectors/src/config", data={"a": "b"})
    error(form, 415, "HTTP 415 Unsupported Media Type")


def test_routing_errors_win_over_415(client: FlaskClient) -> None:
    error(client.post("/nowhere", data="x", content_type="text/plain"), 404, "HTTP 404 Not Found")
    wrong_method = client.patch("/connectors", data="x", content_type="text/plain")
    error(wrong_method, 405, "HTTP 405 Method Not Allowed")


def test_json_with_charset_is_accepted_and_an_untyped_body_is_415(client: FlaskClient) -> None:
    raw = '{"name": "src", "config": {"connector.class": "org.example.FileSource"}}'
    typed = client.post("/connectors", data=raw, content_type="application/json; charset=utf-8")
    assert typed.status_code == 201
    # A body without a JSON type is what an HTML form or a simple cross-site fetch sends.
    untyped = client.put("/connectors/other/config", data='{"connector.class": "X"}')
    error(untyped, 415, "HTTP 415 Unsupported Media Type")
    empty_type = client.put(
        "/connectors/other/config", data='{"connector.class": "X"}', headers={"Content-Type": ""}
    )
    error(empty_type, 415, "HTTP 415 Unsupported Media Type")
    assert client.get("/connectors/other").status_code == 404


def test_body_less_requests_need_no_content_type(client: FlaskClient) -> None:
    client.post("/connectors", json={"name": "src", "config": src_config()})
    assert client.put("/connectors/src/pause", content_type="text/plain").status_code == 202


@pytest.mark.parametrize("raw", ['{"name": "src", "config": {', "not json", '{"a": NaN}'])
def test_malformed_json_is_400(client: FlaskClient, raw: str) -> None:
    response = client.post("/connectors", data=raw, content_type="application/json")
    assert response.status_code == 400
    assert response.content_type == "application/json"
    assert response.get_json()["message"].startswith("Request body is not valid JSON: ")


def test_empty_body_is_400(client: FlaskClient) -> None:
    response = client.post("/connectors", content_type="application/json")
    error(response, 400, "Request body is missing: a JSON object is required.")


def test_wrong_json_types_are_400(client: FlaskClient) -> None:
    error(
        client.post("/connectors", json=["src"]),
        400,
        "The request body must be a JSON object, not an array.",
    )
    error(
        client.post("/connectors", json={"name": {"x": 1}, "config": {}}),
        400,
        "'name' must be a string, not an object.",
    )
    error(
        client.post("/connectors", json={"name": "src", "config": "a=b"}),
        400,
        "Connector configuration must be a JSON object, not a string.",
    )


@pytest.mark.parametrize(
    "exc, code",
    [
        (ForbiddenError("Topic tracking is disabled."), 403),
        (TimeoutError_("Request timed out"), 500),
        (RuntimeError("kaboom"), 500),
    ],
)
def test_domain_and_unexpected_errors(
    client: FlaskClient, herder: FakeHerder, exc: Exception, code: int
) -> None:
    herder.configs["src"] = src_config()
    herder.fail_with = exc
    error(client.get("/connectors/src"), code, str(exc))


def test_unexpected_error_without_message_has_null_message(
    client: FlaskClient, herder: FakeHerder
) -> None:
    herder.configs["src"] = src_config()
    herder.fail_with = KeyError()
    error(client.get("/connectors/src/config"), 500, None)


# -- compatibility ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "method, path, code",
    [
        ("GET", "/", 200),
        ("GET", "/health/", 200),
        ("GET", "/connectors/", 200),
        ("GET", "/connectors/src/", 200),
        ("GET", "/connectors/src/config/", 200),
        ("GET", "/connectors/src/status/", 200),
        ("GET", "/connectors/src/tasks/", 200),
        ("GET", "/connectors/src/tasks/0/status/", 200),
        ("PUT", "/connectors/src/pause/", 202),
        ("PUT", "/connectors/src/resume/", 202),
        ("POST", "/connectors/src/restart/", 204),
        ("POST", "/connectors/src/tasks/0/restart/", 204),
        ("PUT", "/connectors/src/stop/", 204),
        ("GET", "/connector-plugins/", 200),
        ("GET", "/connector-plugins/org.example.FileSink/config/", 200),
        ("GET", "/admin/loggers/", 200),
        ("GET", "/admin/loggers/root/", 200),
        ("DELETE", "/connectors/src/", 204),
    ],
)
def test_trailing_slash_is_accepted_without_redirect(
    client: FlaskClient, method: str, path: str, code: int
) -> None:
    client.post("/connectors", json={"name": "src", "config": src_config()})
    response = client.open(path, method=method)
    assert response.status_code == code


def test_trailing_slash_on_bodies(client: FlaskClient) -> None:
    created = client.post("/connectors/", json={"name": "src", "config": src_config()})
    assert created.status_code == 201
    assert client.put("/connectors/src/config/", json=src_config()).status_code == 200
    assert client.patch("/connectors/src/config/", json={"x": "1"}).status_code == 200
    validate = "/connector-plugins/FileSource/config/validate/"
    assert client.put(validate, json=src_config()).status_code == 200
    assert client.put("/admin/loggers/cltest.slash/", json={"level": "INFO"}).status_code == 200


def test_connector_names_in_paths_are_url_decoded(client: FlaskClient) -> None:
    client.post("/connectors", json={"name": "a b+ü", "config": src_config()})
    response = client.get("/connectors/a%20b%2B%C3%BC/status")
    assert response.status_code == 200
    assert response.get_json()["name"] == "a b+ü"
