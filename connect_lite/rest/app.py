"""The Flask application factory: the composition root of the REST layer."""

from __future__ import annotations

from flask import Flask
from flask.json.provider import DefaultJSONProvider

from connect_lite.rest import connectors, error_mapping, plugins, root
from connect_lite.rest import loggers as logger_routes
from connect_lite.rest.parsing import check_content_type
from connect_lite.rest.services import HERDER, LOGGERS
from connect_lite.runtime.herder_api import HerderAPI
from connect_lite.runtime.loggers import Loggers

BLUEPRINTS = (root.bp, connectors.bp, plugins.bp, logger_routes.bp)


class _JSONProvider(DefaultJSONProvider):
    sort_keys = False  # keep config maps in the order the client and the herder gave them


class _ConnectApp(Flask):
    json_provider_class = _JSONProvider


def create_app(herder: HerderAPI, loggers: Loggers) -> Flask:
    """A Flask app serving Kafka Connect's REST API over ``herder`` and ``loggers``."""
    app = _ConnectApp("connect_lite.rest")
    app.extensions[HERDER] = herder
    app.extensions[LOGGERS] = loggers
    app.url_map.strict_slashes = False  # "/connectors/" is "/connectors", without a redirect
    error_mapping.register(app)
    app.before_request(check_content_type)
    for blueprint in BLUEPRINTS:
        app.register_blueprint(blueprint)
    return app
