"""``/admin/loggers``: read and change log levels at runtime (KIP-495)."""

from __future__ import annotations

from flask import Blueprint, Response, request

from connect_lite.api.errors import BadRequestError
from connect_lite.rest import render
from connect_lite.rest.parsing import json_object, string_value
from connect_lite.rest.services import loggers

bp = Blueprint("loggers", __name__)


@bp.get("/admin/loggers")
def list_loggers() -> Response:
    levels = loggers().all()
    return render.json_response({name: render.logger_level(lv) for name, lv in levels.items()})


@bp.get("/admin/loggers/<name>")
def get_logger(name: str) -> Response:
    return render.json_response(render.logger_level(loggers().get(name)))


@bp.put("/admin/loggers/<name>")
def set_level(name: str) -> Response:
    body = json_object("The request body", required=False)
    level = string_value(body.get("level"), "'level'")
    if level is None:
        raise BadRequestError("Desired 'level' parameter was not specified in request.")
    changed = loggers().set_level(name, level)
    if request.args.get("scope", "worker").lower() == "cluster":
        return render.empty(204)  # standalone: the cluster is this worker
    return render.json_response(changed)
