"""Session-wide fixtures: one embedded Tansu broker shared by every test that asks for it.

It is the broker of connect_lite.testing's pytest plugin (``connect_broker``), so the workers
of the ``connect`` and ``connect_factory`` fixtures and the tests' own clients share it.
"""

from __future__ import annotations

import pytest

from connect_lite.kafka.broker import EmbeddedBroker

pytest_plugins = ["connect_lite.testing.pytest_plugin"]


@pytest.fixture(scope="session")
def broker(connect_broker: EmbeddedBroker) -> EmbeddedBroker:
    """A started embedded broker on a free loopback port, stopped at the end of the session."""
    return connect_broker


@pytest.fixture(scope="session")
def bootstrap_servers(broker: EmbeddedBroker) -> str:
    """``127.0.0.1:PORT`` of the session broker."""
    return broker.bootstrap_servers
