"""Fixtures for the REST layer tests: a fake herder, a Loggers service and a Flask test client."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from flask.testing import FlaskClient

from connect_lite.logs.loggers import Loggers
from connect_lite.rest import create_app

from .fake_herder import FakeHerder
from .helpers import NOW_S


@pytest.fixture
def herder() -> FakeHerder:
    return FakeHerder()


@pytest.fixture
def restore_levels() -> Iterator[None]:
    """Put every logger's own level back after a test that changes levels."""
    manager = logging.Logger.manager
    before = {
        name: lg.level for name, lg in manager.loggerDict.items() if isinstance(lg, logging.Logger)
    }
    root_level = logging.getLogger().level
    yield
    logging.getLogger().setLevel(root_level)
    for name, lg in list(manager.loggerDict.items()):
        if isinstance(lg, logging.Logger):
            lg.setLevel(before.get(name, logging.NOTSET))


@pytest.fixture
def loggers(restore_levels: None) -> Loggers:
    return Loggers(clock=lambda: NOW_S)


@pytest.fixture
def client(herder: FakeHerder, loggers: Loggers) -> FlaskClient:
    return create_app(herder, loggers).test_client()


@pytest.fixture
def with_connector(client: FlaskClient) -> str:
    """A running source connector named ``src`` with two tasks."""
    config = {"connector.class": "org.example.FileSource", "tasks.max": "2"}
    response = client.post("/connectors", json={"name": "src", "config": config})
    assert response.status_code == 201
    return "src"
