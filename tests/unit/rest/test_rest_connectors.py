"""The /connectors routes over a fake herder: parsing, status codes and JSON shapes.

Error messages here are the fake's ("fake: ..."): these tests check that the HTTP layer
passes them through. Kafka's texts are checked over the real herder (test_rest_real_herder).
"""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient

from .fake_herder import (
    EXISTS,
    NO_CLASS,
    NO_STATUS,
    NO_TASK_STATUS,
    NOT_FOUND,
    NULL_VALUE,
    UNKNOWN,
    WORKER,
    FakeHerder,
)
from .helpers import SOURCE, error, src_config

# -- POST /connectors ------------------------------------------------------------------------


def test_create_returns_201_location_and_connector_info(client: FlaskClient) -> None:
    response = client.post("/connectors", json={"name": "src", "config": src_config()})
    assert response.status_code == 201
    assert response.content_type == "application/json"
    assert response.headers["Location"] == "http://localhost/connectors/src"
    assert response.get_json() == {
        "name": "src",
        "config": {"connector.class": SOURCE, "tasks.max": "2", "name": "src"},
        "tasks": [{"connector": "src", "task": 0}, {"connector": "src", "task": 1}],
        "type": "source",
    }


def test_create_trims_the_name_and_encodes_the_location(
    client: FlaskClient, herder: FakeHerder
) -> None:
    response = client.post("/connectors", json={"name": " \tmy conn\n", "config": src_config()})
    assert response.status_code == 201
    assert response.headers["Location"] == "http://localhost/connectors/my%20conn"
    assert herder.calls[-1][1] == "my conn"
    assert client.get("/connectors/my%20conn").get_json()["name"] == "my conn"


def test_create_with_mismatched_config_name_is_400(client: FlaskClient) -> None:
    body = {"name": "src", "config": src_config(name="other")}
    error(
        client.post("/connectors", json=body),
        400,
        "Connector name configuration (other) doesn't match connector name in the URL (src)",
    )


def test_create_passes_initial_state_as_given(client: FlaskClient, herder: FakeHerder) -> None:
    body = {"name": "src", "config": src_config(), "initial_state": "paused"}
    response = client.post("/connectors", json=body)
    assert response.status_code == 201
    assert herder.calls[-1][3] == "paused"
    assert response.get_json()["tasks"] == []


def test_create_without_initial_state_passes_none(client: FlaskClient, herder: FakeHerder) -> None:
    client.post("/connectors", json={"name": "src", "config": src_config(), "initial_state": None})
    assert herder.calls[-1][3] is None


def test_create_with_invalid_initial_state_is_400(client: FlaskClient) -> None:
    body = {"name": "src", "config": src_config(), "initial_state": "SLEEPING"}
    error(
        client.post("/connectors", json=body),
        400,
        "Invalid initial_state 'SLEEPING': must be one of RUNNING, PAUSED, STOPPED.",
    )


def test_create_with_unknown_field_is_400(client: FlaskClient) -> None:
    body = {"name": "src", "config": src_config(), "tasks": []}
    response = client.post("/connectors", json=body)
    assert response.status_code == 400
    assert response.get_json()["message"].startswith('Unrecognized field "tasks"')


def test_create_without_config_is_400(client: FlaskClient) -> None:
    error(
        client.post("/connectors", json={"name": "src"}),
        400,
        "The request body has no 'config' object.",
    )


def test_config_numbers_and_booleans_become_strings(
    client: FlaskClient, herder: FakeHerder
) -> None:
    raw = '{"name": "src", "config": {"connector.class": "' + SOURCE + '", "tasks.max": 3, '
    raw += '"flag": true, "off": false, "ratio": 1.50, "big": 1e3}}'
    response = client.post("/connectors", data=raw, content_type="application/json")
    assert response.status_code == 201
    sent = herder.calls[-1][2]
    assert sent["tasks.max"] == "3"
    assert (sent["flag"], sent["off"], sent["ratio"], sent["big"]) == (
        "true",
        "false",
        "1.50",
        "1e3",
    )
    assert all(type(value) is str for value in sent.values())


@pytest.mark.parametrize("value, kind", [({"a": "b"}, "an object"), (["x"], "an array")])
def test_nested_config_values_are_400(client: FlaskClient, value: Any, kind: str) -> None:
    body = {"name": "src", "config": src_config(nested=value)}
    error(
        client.post("/connectors", json=body),
        400,
        f"The value of 'nested' must be a string, not {kind}.",
    )


def test_null_config_values_reach_the_herder_as_none(
    client: FlaskClient, herder: FakeHerder
) -> None:
    body = {"name": "src", "config": src_config(topic=None)}
    error(client.post("/connectors", json=body), 400, NULL_VALUE)
    assert herder.calls[-1][2]["topic"] is None


def test_create_existing_is_409(client: FlaskClient, with_connector: str) -> None:
    body = {"name": "src", "config": src_config()}
    error(client.post("/connectors", json=body), 409, EXISTS.format("src"))


def test_herder_bad_request_is_400(client: FlaskClient) -> None:
    body = {"name": "src", "config": {"tasks.max": "1"}}
    error(client.post("/connectors", json=body), 400, NO_CLASS)


# -- GET /connectors -------------------------------------------------------------------------


def test_list_connectors_is_a_list_of_names(client: FlaskClient, with_connector: str) -> None:
    response = client.get("/connectors")
    assert response.status_code == 200
    assert response.get_json() == ["src"]


def test_list_connectors_expand_status(client: FlaskClient, with_connector: str) -> None:
    body = client.get("/connectors?expand=status").get_json()
    assert list(body) == ["src"]
    assert list(body["src"]) == ["status"]
    assert body["src"]["status"]["connector"]["state"] == "RUNNING"


def test_list_connectors_expand_both_repeated(client: FlaskClient, with_connector: str) -> None:
    body = client.get("/connectors?expand=info&expand=status").get_json()
    assert set(body["src"]) == {"info", "status"}
    assert body["src"]["info"]["type"] == "source"
    assert len(body["src"]["status"]["tasks"]) == 2


def test_list_connectors_ignores_unknown_expansions(
    client: FlaskClient, with_connector: str
) -> None:
    assert client.get("/connectors?expand=bogus").get_json() == {"src": {}}
    assert client.get("/connectors?expand=STATUS").get_json() == {"src": {}}


def test_list_connectors_omits_connectors_without_status(
    client: FlaskClient, herder: FakeHerder, with_connector: str
) -> None:
    client.post("/connectors", json={"name": "other", "config": src_config()})
    herder.missing_status.add("src")
    body = client.get("/connectors?expand=status&expand=info").get_json()
    assert list(body) == ["other"]


# -- one connector ---------------------------------------------------------------------------


def test_get_connector_and_config(client: FlaskClient, with_connector: str) -> None:
    info = client.get("/connectors/src").get_json()
    assert info["name"] == "src"
    assert info["tasks"] == [{"connector": "src", "task": 0}, {"connector": "src", "task": 1}]
    config = client.get("/connectors/src/config").get_json()
    assert config == {"connector.class": SOURCE, "tasks.max": "2", "name": "src"}


def test_unknown_connector_is_404(client: FlaskClient) -> None:
    error(client.get("/connectors/nope"), 404, NOT_FOUND.format("nope"))
    error(client.get("/connectors/nope/config"), 404, NOT_FOUND.format("nope"))
    error(client.get("/connectors/nope/tasks"), 404, NOT_FOUND.format("nope"))


def test_put_config_creates_with_201_and_location(client: FlaskClient, herder: FakeHerder) -> None:
    response = client.put("/connectors/new/config", json=src_config())
    assert response.status_code == 201
    assert response.headers["Location"] == "http://localhost/connectors/new"
    assert response.get_json()["config"]["name"] == "new"
    assert herder.calls[-1] == ("put", "new", src_config())  # the herder adds the name


def test_put_config_updates_with_200(client: FlaskClient, with_connector: str) -> None:
    response = client.put("/connectors/src/config", json=src_config(name="src", extra="1"))
    assert response.status_code == 200
    assert "Location" not in response.headers
    assert response.get_json()["config"]["extra"] == "1"


def test_put_config_name_mismatch_is_400(client: FlaskClient) -> None:
    error(
        client.put("/connectors/src/config", json=src_config(name="x")),
        400,
        "Connector name configuration (x) doesn't match connector name in the URL (src)",
    )


def test_put_config_body_must_be_an_object(client: FlaskClient) -> None:
    error(
        client.put("/connectors/src/config", json=["a"]),
        400,
        "Connector configuration must be a JSON object, not an array.",
    )


def test_patch_config_passes_nulls_and_strings_to_the_herder(
    client: FlaskClient, herder: FakeHerder, with_connector: str
) -> None:
    """JSON null reaches the herder as None (the merge that removes the key is the herder's,
    tested in test_rest_real_herder); numbers become strings; the answer is the herder's."""
    response = client.patch("/connectors/src/config", json={"tasks.max": None, "x": 5})
    assert response.status_code == 200
    assert herder.calls[-1] == ("patch", "src", {"tasks.max": None, "x": "5"})
    assert response.get_json()["config"] == herder.configs["src"]


def test_patch_unknown_connector_is_404(client: FlaskClient) -> None:
    error(client.patch("/connectors/nope/config", json={"a": "b"}), 404, NOT_FOUND.format("nope"))


# -- status and tasks ------------------------------------------------------------------------


def test_connector_status_shape(client: FlaskClient, with_connector: str) -> None:
    response = client.get("/connectors/src/status")
    assert response.status_code == 200
    task = {"state": "RUNNING", "worker_id": WORKER, "version": "1.0"}
    assert response.get_json() == {
        "name": "src",
        "connector": {"state": "RUNNING", "worker_id": WORKER, "version": "1.0"},
        "tasks": [{"id": 0, **task}, {"id": 1, **task}],
        "type": "source",
    }


def test_status_shows_where_each_tasks_last_batch_ran_on_spark(
    client: FlaskClient, herder: FakeHerder, with_connector: str
) -> None:
    from connect_lite.control.entities import LastBatch

    herder.last_batches["src"] = {1: LastBatch("connect-lite:src-1", ("0", "1"))}
    tasks = client.get("/connectors/src/status").get_json()["tasks"]
    assert "spark_last_batch" not in tasks[0]  # no batch yet (or not on this worker)
    assert tasks[1]["spark_last_batch"] == {
        "scheduler_pool": "connect-lite:src-1",
        "executors": 2,
        "executor_ids": ["0", "1"],
    }
    herder.last_batches["src"] = {1: LastBatch("connect-lite:src-1", None)}
    lagging = client.get("/connectors/src/status").get_json()["tasks"][1]["spark_last_batch"]
    assert lagging == {
        "scheduler_pool": "connect-lite:src-1",
        "executors": None,
        "executor_ids": None,
    }


def test_status_shows_trace_and_null_version(
    client: FlaskClient, herder: FakeHerder, with_connector: str
) -> None:
    from connect_lite.protocol.states import ConnectorStatus, State

    herder.statuses["src"] = ConnectorStatus("src", State.FAILED, WORKER, "Traceback: boom", None)
    connector = client.get("/connectors/src/status").get_json()["connector"]
    assert connector == {
        "state": "FAILED",
        "worker_id": WORKER,
        "trace": "Traceback: boom",
        "version": None,
    }


def test_unknown_connector_status_is_404(client: FlaskClient) -> None:
    error(client.get("/connectors/nope/status"), 404, NO_STATUS.format("nope"))


def test_task_configs(client: FlaskClient, with_connector: str) -> None:
    tasks = client.get("/connectors/src/tasks").get_json()
    assert tasks == [
        {
            "id": {"connector": "src", "task": t},
            "config": {"task.class": "org.example.Task", "topics": "t1"},
        }
        for t in (0, 1)
    ]


def test_task_status(client: FlaskClient, with_connector: str) -> None:
    response = client.get("/connectors/src/tasks/1/status")
    assert response.status_code == 200
    assert response.get_json() == {
        "id": 1,
        "state": "RUNNING",
        "worker_id": WORKER,
        "version": "1.0",
    }
    error(client.get("/connectors/src/tasks/7/status"), 404, NO_TASK_STATUS.format("src", 7))


def test_non_integer_task_id_is_404(client: FlaskClient, with_connector: str) -> None:
    error(client.get("/connectors/src/tasks/one/status"), 404, "HTTP 404 Not Found")
    error(client.post("/connectors/src/tasks/one/restart"), 404, "HTTP 404 Not Found")


@pytest.mark.parametrize("task", ["2147483648", "-2147483649", "99999999999999999999"])
def test_task_id_outside_a_java_int_is_404(
    client: FlaskClient, herder: FakeHerder, with_connector: str, task: str
) -> None:
    """As Jersey fails to parse it; the herder never sees it (SQLite cannot bind it: 500)."""
    error(client.get(f"/connectors/src/tasks/{task}/status"), 404, "HTTP 404 Not Found")
    error(client.post(f"/connectors/src/tasks/{task}/restart"), 404, "HTTP 404 Not Found")
    assert not [call for call in herder.calls if call[0] == "restart_task"]
    bounds = client.get("/connectors/src/tasks/-2147483648/status")
    error(bounds, 404, NO_TASK_STATUS.format("src", -2147483648))


# -- control -----------------------------------------------------------------------------------


@pytest.mark.parametrize("action, code", [("pause", 202), ("resume", 202), ("stop", 204)])
def test_target_state_changes(
    client: FlaskClient, herder: FakeHerder, with_connector: str, action: str, code: int
) -> None:
    response = client.put(f"/connectors/src/{action}")
    assert response.status_code == code
    assert response.data == b""
    assert herder.calls[-1] == (action, "src")


@pytest.mark.parametrize("action", ["pause", "resume", "stop"])
def test_target_state_of_unknown_connector_is_404(client: FlaskClient, action: str) -> None:
    error(client.put(f"/connectors/nope/{action}"), 404, UNKNOWN.format("nope"))


def test_plain_restart_is_204(client: FlaskClient, herder: FakeHerder, with_connector: str) -> None:
    response = client.post("/connectors/src/restart")
    assert response.status_code == 204
    assert response.data == b""
    assert herder.calls[-1] == ("restart", "src", False, False)


def test_restart_with_tasks_is_202_with_the_plan(
    client: FlaskClient, herder: FakeHerder, with_connector: str
) -> None:
    response = client.post("/connectors/src/restart?includeTasks=true&onlyFailed=TRUE")
    assert response.status_code == 202
    assert herder.calls[-1] == ("restart", "src", True, True)
    plan = response.get_json()
    assert plan["connector"]["state"] == "RESTARTING"
    assert [(t["id"], t["state"]) for t in plan["tasks"]] == [(0, "RESTARTING"), (1, "RESTARTING")]


@pytest.mark.parametrize("value, expected", [("True", True), ("yes", False), ("1", False)])
def test_boolean_query_params_follow_jersey(
    client: FlaskClient, herder: FakeHerder, with_connector: str, value: str, expected: bool
) -> None:
    client.post(f"/connectors/src/restart?onlyFailed={value}")
    assert herder.calls[-1] == ("restart", "src", False, expected)


def test_restart_unknown_connector_is_404(client: FlaskClient) -> None:
    error(client.post("/connectors/nope/restart"), 404, NOT_FOUND.format("nope"))


def test_restart_task(client: FlaskClient, herder: FakeHerder, with_connector: str) -> None:
    response = client.post("/connectors/src/tasks/1/restart")
    assert response.status_code == 204
    assert herder.calls[-1] == ("restart_task", "src", 1)


def test_delete(client: FlaskClient, with_connector: str) -> None:
    response = client.delete("/connectors/src")
    assert response.status_code == 204
    assert response.data == b""
    error(client.get("/connectors/src"), 404, NOT_FOUND.format("src"))
    error(client.delete("/connectors/src"), 404, NOT_FOUND.format("src"))
