"""``GET /`` (server info) and ``GET /health``."""

from __future__ import annotations

from flask import Blueprint, Response

from connect_lite.rest import render
from connect_lite.rest.services import herder

bp = Blueprint("root", __name__)

HEALTH_STATUS = {"healthy": 200, "starting": 503, "unhealthy": 500}
"""The HTTP status for each worker status; the body is the WorkerStatus in every case."""


@bp.get("/")
def server_info() -> Response:
    return render.json_response(render.server_info(herder().server_info()))


@bp.get("/health")
def health() -> Response:
    status = herder().health()
    code = 503 if status.unavailable else HEALTH_STATUS.get(status.status, 500)
    return render.json_response(render.worker_status(status), code)


@bp.get("/metrics")
def metrics() -> Response:
    metrics = herder().metrics()
    return Response(metrics.body, mimetype=None, content_type=metrics.content_type)
