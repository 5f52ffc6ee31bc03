"""The REST API: Kafka Connect's routes and JSON shapes over the herder, served by cheroot."""

from connect_lite.rest.app import create_app
from connect_lite.rest.server import RestServer

__all__ = ["RestServer", "create_app"]
