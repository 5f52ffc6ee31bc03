"""Session-wide fixtures: one embedded Tansu broker shared by every test that asks for it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from connect_lite.kafka.broker import EmbeddedBroker


@pytest.fixture(scope="session")
def broker() -> Iterator[EmbeddedBroker]:
    """A started embedded broker on a free loopback port, stopped at the end of the session."""
    with EmbeddedBroker() as started:
        yield started


@pytest.fixture(scope="session")
def bootstrap_servers(broker: EmbeddedBroker) -> str:
    """``127.0.0.1:PORT`` of the session broker."""
    return broker.bootstrap_servers
