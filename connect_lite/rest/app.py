"""The Flask application factory: the composition root of the REST layer."""

from __future__ import annotations

from typing import Any

from flask import Flask
from flask.json.provider import DefaultJSONProvider

from connect_lite.config.rest_security import RestSecurity
from connect_lite.control.herder_api import HerderAPI
from connect_lite.logs.loggers import Loggers
from connect_lite.rest import connectors, error_mapping, openapi, plugins, root, ui
from connect_lite.rest import loggers as logger_routes
from connect_lite.rest.edge import Edge
from connect_lite.rest.services import HERDER, LOGGERS

BLUEPRINTS = (root.bp, connectors.bp, plugins.bp, logger_routes.bp, openapi.bp, ui.bp)


class _JSONProvider(DefaultJSONProvider):
    sort_keys = False  # keep config maps in the order the client and the herder gave them


class _ConnectApp(Flask):
    json_provider_class = _JSONProvider


def create_app(herder: HerderAPI, loggers: Loggers, security: RestSecurity | None = None) -> Flask:
    """A Flask app serving Kafka Connect's REST API over ``herder`` and ``loggers``, behind
    the edge checks of ``security`` (default: no auth, no CORS, 8 MiB bodies)."""
    app = _ConnectApp("connect_lite.rest")
    app.extensions[HERDER] = herder
    app.extensions[LOGGERS] = loggers
    app.url_map.strict_slashes = False  # "/connectors/" is "/connectors", without a redirect
    app.url_map.converters["java_int"] = connectors.JavaIntConverter
    error_mapping.register(app)
    Edge(security or RestSecurity()).install(app)
    app.url_value_preprocessor(_decode_slashes)
    for blueprint in BLUEPRINTS:
        app.register_blueprint(blueprint)
    return app


def _decode_slashes(endpoint: str | None, values: dict[str, Any] | None) -> None:
    """The server leaves ``%2F`` encoded in paths; path parameters get it decoded, as Jersey
    decodes them, so ``/connectors/a%2Fb`` names ``a/b`` (refused on create, 404 else)."""
    for key, value in (values or {}).items():
        if isinstance(value, str) and "%2" in value:
            values[key] = value.replace("%2F", "/").replace("%2f", "/")  # type: ignore[index]
