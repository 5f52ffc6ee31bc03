"""Test harness for connectors: a broker and a connect-lite worker per test, and a pytest plugin."""

from connect_lite.kafka import ConsumedMessage
from connect_lite.kafka.broker import free_port
from connect_lite.testing.client import ConnectClient, ConnectRestError, HttpClient, HttpResponse
from connect_lite.testing.embedded import BUNDLED_PLUGINS, FAST_DEFAULTS, EmbeddedConnect
from connect_lite.testing.kafka_helpers import KafkaHelpers
from connect_lite.testing.mariadb import MariaDbServer
from connect_lite.testing.metrics import Metrics
from connect_lite.testing.postgres import PostgresServer
from connect_lite.testing.waits import WaitFailed, WaitTimeout, wait_for

__all__ = [
    "BUNDLED_PLUGINS",
    "FAST_DEFAULTS",
    "ConnectClient",
    "ConnectRestError",
    "ConsumedMessage",
    "EmbeddedConnect",
    "HttpClient",
    "HttpResponse",
    "KafkaHelpers",
    "MariaDbServer",
    "Metrics",
    "PostgresServer",
    "WaitFailed",
    "WaitTimeout",
    "free_port",
    "wait_for",
]
