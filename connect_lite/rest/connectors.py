"""``/connectors``: create, configure, inspect, control and delete connectors and their tasks."""

from __future__ import annotations

import logging
from typing import Any, cast
from urllib.parse import quote

from flask import Blueprint, Response, request
from werkzeug.routing import IntegerConverter, Map

from connect_lite.api.errors import NotFoundError
from connect_lite.rest import render
from connect_lite.rest.parsing import (
    bool_arg,
    config_map,
    create_request,
    json_body,
    offsets_request,
)
from connect_lite.rest.services import herder

log = logging.getLogger(__name__)

bp = Blueprint("connectors", __name__)

CONNECTOR = "/connectors/<connector>"
TASK = CONNECTOR + "/tasks/<java_int:task>"


class JavaIntConverter(IntegerConverter):
    """A path parameter parsed as Jersey parses a Java int: signed, 32 bits; any other text
    matches no route (404). Registered as ``java_int`` by the app factory."""

    def __init__(self, map: Map) -> None:
        super().__init__(map, min=-(2**31), max=2**31 - 1, signed=True)


def _location(name: str) -> str:
    """The absolute URL of a connector, for the Location header of a 201."""
    return request.url_root + "connectors/" + quote(name, safe="/:@!$&'()*+,;=")


@bp.get("/connectors")
def list_connectors() -> Response:
    names = herder().connectors()
    expand = request.args.getlist("expand")
    if not expand:
        return render.json_response(names)
    wanted = set(expand)  # case-sensitive, as in Kafka
    expanded = {}
    for name in names:
        try:
            expanded[name] = _expansions(name, wanted)
        except NotFoundError as exc:
            log.debug("Connector %s left out of the expanded list: %s", name, exc)
    return render.json_response(expanded)


def _expansions(name: str, wanted: set[str]) -> dict[str, Any]:
    """The requested expansions of one connector; unknown expansion names are ignored."""
    found: dict[str, Any] = {}
    if "status" in wanted:
        found["status"] = render.connector_state_info(herder().connector_status(name))
    if "info" in wanted:
        found["info"] = render.connector_info(herder().connector_info(name))
    return found


@bp.post("/connectors")
def create_connector() -> Response:
    req = create_request()
    config = cast(dict[str, str], req.config)  # JSON nulls stay None: the herder reports them
    info = herder().create_connector(req.name, config, req.initial_state)
    response = render.json_response(render.connector_info(info), 201)
    response.headers["Location"] = _location(info.name)
    return response


@bp.get(CONNECTOR)
def connector_info(connector: str) -> Response:
    return render.json_response(render.connector_info(herder().connector_info(connector)))


@bp.get(CONNECTOR + "/config")
def connector_config(connector: str) -> Response:
    return render.json_response(herder().connector_config(connector))


@bp.put(CONNECTOR + "/config")
def put_connector_config(connector: str) -> Response:
    config = config_map(json_body())
    created, info = herder().put_connector_config(connector, cast(dict[str, str], config))
    response = render.json_response(render.connector_info(info), 201 if created else 200)
    if created:
        response.headers["Location"] = _location(info.name)
    return response


@bp.patch(CONNECTOR + "/config")
def patch_connector_config(connector: str) -> Response:
    patch = config_map(json_body(), "The config patch")
    return render.json_response(
        render.connector_info(herder().patch_connector_config(connector, patch))
    )


@bp.get(CONNECTOR + "/status")
def connector_status(connector: str) -> Response:
    status = herder().connector_status(connector)
    return render.json_response(render.connector_state_info(status))


@bp.get(CONNECTOR + "/tasks")
def task_configs(connector: str) -> Response:
    tasks = herder().task_configs(connector)
    return render.json_response([render.task_info(task) for task in tasks])


@bp.get(TASK + "/status")
def task_status(connector: str, task: int) -> Response:
    return render.json_response(render.task_state(herder().task_status(connector, task)))


@bp.put(CONNECTOR + "/pause")
def pause_connector(connector: str) -> Response:
    herder().pause_connector(connector)
    return render.empty(202)


@bp.put(CONNECTOR + "/resume")
def resume_connector(connector: str) -> Response:
    herder().resume_connector(connector)
    return render.empty(202)


@bp.put(CONNECTOR + "/stop")
def stop_connector(connector: str) -> Response:
    herder().stop_connector(connector)
    return render.empty(204)


@bp.post(CONNECTOR + "/restart")
def restart_connector(connector: str) -> Response:
    plan = herder().restart_connector(
        connector, bool_arg("includeTasks", False), bool_arg("onlyFailed", False)
    )
    if plan is None:
        return render.empty(204)
    return render.json_response(render.connector_state_info(plan), 202)


@bp.post(TASK + "/restart")
def restart_task(connector: str, task: int) -> Response:
    herder().restart_task(connector, task)
    return render.empty(204)


@bp.delete(CONNECTOR)
def delete_connector(connector: str) -> Response:
    # includeOffsets=true also resets the connector's offsets: a connect-lite extension.
    herder().delete_connector(connector, bool_arg("includeOffsets", False))
    return render.empty(204)


@bp.get(CONNECTOR + "/offsets")
def connector_offsets(connector: str) -> Response:
    return render.json_response(render.connector_offsets(herder().connector_offsets(connector)))


@bp.patch(CONNECTOR + "/offsets")
def alter_connector_offsets(connector: str) -> Response:
    answer = herder().alter_connector_offsets(connector, offsets_request())
    return render.json_response(render.message(answer))


@bp.delete(CONNECTOR + "/offsets")
def reset_connector_offsets(connector: str) -> Response:
    return render.json_response(render.message(herder().reset_connector_offsets(connector)))


@bp.get(CONNECTOR + "/topics")
def connector_topics(connector: str) -> Response:
    return render.json_response(
        render.active_topics(connector, herder().connector_topics(connector))
    )


@bp.put(CONNECTOR + "/topics/reset")
def reset_connector_topics(connector: str) -> Response:
    herder().reset_connector_topics(connector)
    return render.empty(202)
