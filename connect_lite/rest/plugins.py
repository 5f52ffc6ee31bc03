"""``/connector-plugins``: installed plugins, their config definitions and config validation."""

from __future__ import annotations

from typing import cast

from flask import Blueprint, Response, request

from connect_lite.rest import render
from connect_lite.rest.parsing import bool_arg, config_map, json_body
from connect_lite.rest.services import herder

bp = Blueprint("plugins", __name__)


@bp.get("/connector-plugins")
def list_plugins() -> Response:
    plugins = herder().plugins(connectors_only=bool_arg("connectorsOnly", True))
    return render.json_response([render.plugin_info(plugin) for plugin in plugins])


@bp.get("/connector-plugins/<plugin>/config")
def plugin_config(plugin: str) -> Response:
    return render.json_response(herder().plugin_config(plugin, request.args.get("version")))


@bp.put("/connector-plugins/<plugin>/config/validate")
def validate_config(plugin: str) -> Response:
    # JSON nulls stay None: validation reports them on their key.
    config = cast(dict[str, str], config_map(json_body()))
    return render.json_response(render.config_infos(herder().validate_config(plugin, config)))
