"""pytest plugin: a session broker and a ``connect`` fixture (an EmbeddedConnect per test).

Enabled by the ``pytest11`` entry point of the connect-lite distribution, or with
``pytest_plugins = ["connect_lite.testing.pytest_plugin"]`` in a root conftest.py.

- ``connect_broker`` (session): one embedded Kafka broker for the whole run.
- ``connect`` (function): a started :class:`EmbeddedConnect` on that broker, torn down after
  the test. With ``@pytest.mark.connect_lite(reuse="module")`` (on the module: ``pytestmark``)
  or ``--connect-lite-reuse=module``, the tests of a module share one worker; its connectors
  are deleted, with their offsets, after each test.
- ``@pytest.mark.connect_lite(plugin_paths=[...], worker_properties={...})`` configures the
  worker (any EmbeddedConnect keyword argument).
- ``connect_factory`` (function): ``connect_factory(**kwargs)`` makes an EmbeddedConnect (not
  started) on the session broker unless ``bootstrap_servers`` or ``start_broker`` say
  otherwise; every one made is closed after the test. For tests that need several workers,
  a worker on a given state file, or one expected to fail at start-up.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from connect_lite.kafka import EmbeddedBroker
from connect_lite.testing.client import ConnectRestError
from connect_lite.testing.embedded import EmbeddedConnect

MARKER = "connect_lite"
_REUSE_CHOICES = ("function", "module")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("connect-lite")
    group.addoption(
        "--connect-lite-reuse",
        choices=_REUSE_CHOICES,
        default=None,
        help="Scope of the worker behind the `connect` fixture (default: function).",
    )
    parser.addini(
        "connect_lite_reuse", "Default scope of the `connect` worker: function or module."
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(reuse='function'|'module', **EmbeddedConnect kwargs): "
        "configure the worker of the `connect` fixture",
    )


def _marker_kwargs(node: pytest.Item | pytest.Collector) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    for mark in reversed(list(node.iter_markers(MARKER))):  # closest marker wins
        kwargs.update(mark.kwargs)
    return kwargs


def _reuse(request: pytest.FixtureRequest, kwargs: dict[str, Any]) -> str:
    scope = kwargs.pop("reuse", None)
    scope = scope or request.config.getoption("--connect-lite-reuse")
    scope = scope or request.config.getini("connect_lite_reuse") or "function"
    if scope not in _REUSE_CHOICES:
        raise pytest.UsageError(f"connect-lite reuse must be one of {_REUSE_CHOICES}: {scope!r}")
    return str(scope)


@pytest.fixture(scope="session")
def connect_broker() -> Iterator[EmbeddedBroker]:
    """An embedded Kafka broker (Tansu, in memory) shared by the whole test session."""
    with EmbeddedBroker() as broker:
        yield broker


@pytest.fixture(scope="module")
def connect_module_worker(
    request: pytest.FixtureRequest, connect_broker: EmbeddedBroker
) -> Iterator[EmbeddedConnect]:
    """The worker shared by a module's tests when reuse is ``module``."""
    kwargs = _marker_kwargs(request.node)
    kwargs.pop("reuse", None)
    with EmbeddedConnect(bootstrap_servers=connect_broker.bootstrap_servers, **kwargs) as worker:
        yield worker


@pytest.fixture
def connect(
    request: pytest.FixtureRequest, connect_broker: EmbeddedBroker
) -> Iterator[EmbeddedConnect]:
    """A running connect-lite worker on the session broker (see the module docstring)."""
    kwargs = _marker_kwargs(request.node)
    if _reuse(request, kwargs) == "module":
        worker: EmbeddedConnect = request.getfixturevalue("connect_module_worker")
        try:
            yield worker
        finally:
            _delete_all_connectors(worker)
        return
    with EmbeddedConnect(bootstrap_servers=connect_broker.bootstrap_servers, **kwargs) as worker:
        yield worker


@pytest.fixture
def connect_factory(request: pytest.FixtureRequest) -> Iterator[Callable[..., EmbeddedConnect]]:
    """``connect_factory(**kwargs)``: a new EmbeddedConnect, not started, on the session broker
    (unless ``bootstrap_servers`` or ``start_broker=False`` is given); closed after the test."""
    made: list[EmbeddedConnect] = []

    def make(**kwargs: Any) -> EmbeddedConnect:
        if kwargs.get("start_broker", True) and "bootstrap_servers" not in kwargs:
            broker: EmbeddedBroker = request.getfixturevalue("connect_broker")
            kwargs["bootstrap_servers"] = broker.bootstrap_servers
        made.append(EmbeddedConnect(**kwargs))
        return made[-1]

    try:
        yield make
    finally:
        for connect in reversed(made):
            connect.close()


def _delete_all_connectors(worker: EmbeddedConnect) -> None:
    """Leave a shared worker clean for the next test (best effort: it may be down)."""
    with contextlib.suppress(OSError, ConnectRestError):
        for name in worker.client.connectors():
            with contextlib.suppress(ConnectRestError):
                worker.client.delete(name, include_offsets=True)
