"""The app-wide services a request handler may use, kept in ``app.extensions``."""

from __future__ import annotations

from typing import cast

from flask import current_app

from connect_lite.control.herder_api import HerderAPI
from connect_lite.logs.loggers import Loggers

HERDER = "connect_lite.control.herder"
LOGGERS = "connect_lite.logs.loggers"


def herder() -> HerderAPI:
    """The herder of the app serving the current request."""
    return cast(HerderAPI, current_app.extensions[HERDER])


def loggers() -> Loggers:
    """The log-level service of the app serving the current request."""
    return cast(Loggers, current_app.extensions[LOGGERS])
