"""GET /openapi.json: every route described, a valid OpenAPI 3.1 document, accurate schemas."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from connect_lite import __version__
from connect_lite.control.entities import LastBatch, WorkerHealth
from connect_lite.logs.loggers import Loggers
from connect_lite.rest import create_app
from connect_lite.rest.openapi import EXTENSION, build, document, openapi_path, problems, routes
from connect_lite.rest.openapi_operations import OPERATIONS, Operation, no_body

from .fake_herder import FakeHerder
from .helpers import src_config
from .openapi_check import conforms, validate_body


@pytest.fixture
def app(herder: FakeHerder, loggers: Loggers) -> Flask:
    return create_app(herder, loggers)


def served(app: Flask) -> set[tuple[str, str]]:
    """(OpenAPI path, method) of every route the app serves."""
    return {(openapi_path(rule.rule), method.lower()) for rule, method in routes(app)}


def documented(doc: dict[str, Any]) -> set[tuple[str, str]]:
    return {
        (path, method)
        for path, item in doc["paths"].items()
        for method in item
        if method != "parameters"
    }


def operations(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every operation of the document by its operationId."""
    return {
        op["operationId"]: op
        for item in doc["paths"].values()
        for method, op in item.items()
        if method != "parameters"
    }


# -- every route, and only those -------------------------------------------------------------


def test_every_route_is_described_and_every_description_is_served(app: Flask) -> None:
    assert problems(app) == []
    assert documented(build(app)) == served(app)
    assert ("/connectors/{connector}/tasks/{task}/status", "get") in served(app)


def test_a_route_without_a_description_is_named(app: Flask) -> None:
    app.add_url_rule("/connectors/<connector>/secret", "connectors.secret", lambda connector: "")
    assert problems(app) == [
        "GET /connectors/<connector>/secret (endpoint connectors.secret) has no description "
        "in openapi_operations.OPERATIONS"
    ]
    response = app.test_client().get("/openapi.json")
    assert response.status_code == 500
    assert "connectors.secret" in response.get_json()["message"]


def test_a_description_without_its_route_or_with_another_method_is_named(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    ghost = Operation("GET", "Nothing", {200: no_body("Never")})
    monkeypatch.setitem(OPERATIONS, "connectors.ghost", ghost)
    monkeypatch.setitem(
        OPERATIONS, "root.metrics", Operation("POST", "Metrics", {200: no_body("Metrics")})
    )
    assert problems(app) == [
        "GET /metrics (endpoint root.metrics) is described as POST",
        "OPERATIONS describes connectors.ghost, which the app does not serve",
    ]


def test_an_undescribed_path_parameter_is_named(app: Flask) -> None:
    app.add_url_rule("/connectors/<secret>/x", "connectors.connector_info", methods=["GET"])
    assert problems(app) == [
        "GET /connectors/<secret>/x (endpoint connectors.connector_info): path parameter "
        "secret has no description"
    ]


def test_the_status_page_is_described(app: Flask) -> None:
    assert problems(app) == []
    doc = build(app)
    assert documented(doc) == served(app)
    page, asset = doc["paths"]["/ui"]["get"], doc["paths"]["/ui/{asset}"]["get"]
    assert list(page["responses"]["200"]["content"]) == ["text/html"]
    assert page[EXTENSION] is True and asset[EXTENSION] is True
    assert set(asset["responses"]) >= {"200", "404"}
    assert doc["paths"]["/ui/{asset}"]["parameters"][0]["schema"] == {
        "type": "string",
        "minLength": 1,
    }


# -- the document ----------------------------------------------------------------------------


def test_openapi_json_answers_the_document_built_once(app: Flask) -> None:
    response = app.test_client().get("/openapi.json")
    assert response.status_code == 200
    assert response.content_type == "application/json"
    assert response.get_json() == build(app)
    assert document(app) is document(app)
    conforms(app, response)


def test_the_document_is_valid_openapi_3_1(app: Flask) -> None:
    validator = pytest.importorskip("openapi_spec_validator")
    doc = build(app)
    assert doc["openapi"] == "3.1.0"
    validator.validate(doc)


def test_the_validator_refuses_a_broken_document(app: Flask) -> None:
    validator = pytest.importorskip("openapi_spec_validator")
    broken = copy.deepcopy(build(app))
    broken["paths"]["/connectors/{connector}"]["delete"]["parameters"][0]["in"] = "body"
    with pytest.raises(Exception, match="body"):  # OpenAPI 2's body parameter
        validator.validate(broken)


def test_info_names_the_version_and_the_extensions(app: Flask) -> None:
    doc = build(app)
    assert doc["info"]["version"] == __version__
    assert EXTENSION in doc["info"]["description"]
    extensions = {i for i, op in operations(doc).items() if op.get(EXTENSION)}
    assert extensions == {"metrics", "openapi_document", "ui_page", "ui_asset"}
    delete = doc["paths"]["/connectors/{connector}"]["delete"]
    assert [(p["name"], p.get(EXTENSION)) for p in delete["parameters"]] == [
        ("includeOffsets", True)
    ]


def test_path_parameters_have_their_converters_types(app: Flask) -> None:
    item = build(app)["paths"]["/connectors/{connector}/tasks/{task}/restart"]
    schemas = {p["name"]: p["schema"] for p in item["parameters"]}
    assert schemas == {
        "connector": {"type": "string", "minLength": 1},
        "task": {"type": "integer", "minimum": -(2**31), "maximum": 2**31 - 1},
    }
    assert all(p["in"] == "path" and p["required"] for p in item["parameters"])


def test_shared_error_answers(app: Flask) -> None:
    doc = build(app)
    create = doc["paths"]["/connectors"]["post"]["responses"]
    assert set(create) == {"201", "400", "401", "403", "409", "413", "415", "500", "503"}
    assert create["401"] == {"$ref": "#/components/responses/Unauthorized"}
    assert "not valid JSON" in create["400"]["description"]  # its own 400, and the body's
    loggers = doc["paths"]["/admin/loggers"]["get"]["responses"]
    assert set(loggers) == {"200", "401", "403", "500"}  # no herder: no 503
    assert doc["components"]["schemas"]["ErrorMessage"]["required"] == ["error_code", "message"]


def test_metrics_and_health_answers(app: Flask) -> None:
    paths = build(app)["paths"]
    assert list(paths["/metrics"]["get"]["responses"]["200"]["content"]) == ["text/plain"]
    health = paths["/health"]["get"]["responses"]
    for code in ("200", "503"):
        assert health[code]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/WorkerStatus"
        }


def test_created_connectors_link_to_the_connector_operations(app: Flask) -> None:
    doc = build(app)
    ids = operations(doc)
    for path, method in (("/connectors", "post"), ("/connectors/{connector}/config", "put")):
        links = doc["paths"][path][method]["responses"]["201"]["links"]
        assert {"connector_info", "delete_connector", "alter_connector_offsets"} <= set(links)
        assert links["task_status"]["parameters"]["task"] == "0"  # every started connector's
        for link in links.values():
            assert link["operationId"] in ids
            assert link["parameters"]["connector"] == "$response.body#/name"
            target = ids[link["operationId"]]
            assert target["operationId"] != "create_connector"


def test_basic_auth_is_optional(app: Flask) -> None:
    doc = build(app)
    assert doc["security"] == [{}, {"basicAuth": []}]
    scheme = doc["components"]["securitySchemes"]["basicAuth"]
    assert scheme["type"] == "http" and scheme["scheme"] == "basic"
    assert "rest.basic.auth.credentials.file" in scheme["description"]


# -- the answers match the schemas ------------------------------------------------------------

STEPS: list[tuple[str, str, Any, int]] = [
    ("GET", "/", None, 200),
    ("GET", "/health", None, 200),
    ("GET", "/metrics", None, 200),
    ("POST", "/connectors", {"name": "src", "config": src_config()}, 201),
    ("POST", "/connectors", {"name": "src", "config": src_config()}, 409),
    ("POST", "/connectors", {"name": "x", "config": {"tasks.max": "1"}}, 400),
    ("POST", "/connectors", [1], 400),
    ("GET", "/connectors", None, 200),
    ("GET", "/connectors?expand=status&expand=info", None, 200),
    ("GET", "/connectors/src", None, 200),
    ("GET", "/connectors/src/config", None, 200),
    ("GET", "/connectors/src/status", None, 200),
    ("GET", "/connectors/src/tasks", None, 200),
    ("GET", "/connectors/src/tasks/1/status", None, 200),
    ("GET", "/connectors/src/tasks/7/status", None, 404),
    ("PUT", "/connectors/other/config", src_config(), 201),
    ("PUT", "/connectors/other/config", src_config(**{"tasks.max": "1"}), 200),
    ("PATCH", "/connectors/src/config", {"tasks.max": "1"}, 200),
    ("PUT", "/connectors/src/pause", None, 202),
    ("PUT", "/connectors/src/resume", None, 202),
    ("POST", "/connectors/src/restart", None, 204),
    ("POST", "/connectors/src/restart?includeTasks=true", None, 202),
    ("POST", "/connectors/src/tasks/0/restart", None, 204),
    ("PUT", "/connectors/src/stop", None, 204),
    ("GET", "/connectors/src/offsets", None, 200),
    ("PATCH", "/connectors/src/offsets", {"offsets": [{"partition": {"f": 1}}]}, 200),
    ("PATCH", "/connectors/src/offsets", {"offsets": []}, 400),
    ("DELETE", "/connectors/src/offsets", None, 200),
    ("GET", "/connectors/src/topics", None, 200),
    ("PUT", "/connectors/src/topics/reset", None, 202),
    ("GET", "/connector-plugins?connectorsOnly=false", None, 200),
    ("GET", "/admin/loggers", None, 200),
    ("GET", "/admin/loggers/root", None, 200),
    ("PUT", "/admin/loggers/connect_lite.test", {"level": "DEBUG"}, 200),
    ("PUT", "/admin/loggers/connect_lite.test?scope=cluster", {"level": "INFO"}, 204),
    ("PUT", "/admin/loggers/connect_lite.test", {"level": "LOUD"}, 404),
    ("PUT", "/admin/loggers/connect_lite.test", {}, 400),
    ("DELETE", "/connectors/src?includeOffsets=true", None, 204),
    ("GET", "/connectors/src", None, 404),
    ("GET", "/openapi.json", None, 200),
]


def test_answers_match_the_documented_schemas(
    client: FlaskClient, herder: FakeHerder, restore_levels: None
) -> None:
    herder.last_batches["src"] = {  # connect-lite's extra field in a connector's status
        0: LastBatch("connect-lite:src-0", ("0", "1")),
        1: LastBatch("connect-lite:src-1", None),
    }
    app = client.application
    for method, path, body, status in STEPS:
        response = client.open(path, method=method, json=body)
        assert response.status_code == status, (method, path, response.get_data(as_text=True))
        conforms(app, response)


@pytest.mark.parametrize("status, code", [("starting", 503), ("unhealthy", 500)])
def test_health_answers_match_the_documented_schemas(
    client: FlaskClient, herder: FakeHerder, status: str, code: int
) -> None:
    herder.health_value = WorkerHealth(status, "Not ready.")
    response = client.get("/health")
    assert response.status_code == code
    conforms(client.application, response)


def test_edge_answers_match_the_documented_schemas(client: FlaskClient) -> None:
    refused = client.post("/connectors", data="name=x", content_type="text/plain")
    assert refused.status_code == 415
    conforms(client.application, refused)


def test_the_schema_check_catches_a_wrong_answer(client: FlaskClient) -> None:
    info = client.post("/connectors", json={"name": "src", "config": src_config()}).get_json()
    del info["type"]
    with pytest.raises(AssertionError, match="'type' is a required property"):
        validate_body(client.application, "/connectors", "POST", 201, info)
