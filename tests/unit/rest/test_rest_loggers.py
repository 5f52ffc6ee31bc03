"""/admin/loggers and the Loggers service over Python's logging."""

from __future__ import annotations

import logging

import pytest
from flask.testing import FlaskClient

from connect_lite.api.errors import NotFoundError
from connect_lite.logs.loggers import TRACE, LoggerLevel, Loggers, level_name

from .helpers import NOW_S, error

NOW_MS = int(NOW_S * 1000)


@pytest.fixture
def family() -> list[logging.Logger]:
    """cltest.app at INFO with two children that inherit, and an unrelated sibling."""
    parent = logging.getLogger("cltest.app")
    parent.setLevel(logging.INFO)
    children = [logging.getLogger("cltest.app.a"), logging.getLogger("cltest.app.b.c")]
    for child in children:
        child.setLevel(logging.NOTSET)
    sibling = logging.getLogger("cltest.apple")
    sibling.setLevel(logging.INFO)
    return [parent, *children, sibling]


# -- the service ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "python_level, name",
    [
        (logging.DEBUG, "DEBUG"),
        (logging.INFO, "INFO"),
        (logging.WARNING, "WARN"),
        (logging.ERROR, "ERROR"),
        (logging.CRITICAL, "FATAL"),
        (TRACE, "TRACE"),
        (15, "INFO"),
        (1, "ALL"),
        (100, "OFF"),
    ],
)
def test_python_levels_map_to_log4j_names(python_level: int, name: str) -> None:
    assert level_name(python_level) == name


def test_all_reports_root_and_effective_levels(
    loggers: Loggers, family: list[logging.Logger]
) -> None:
    levels = loggers.all()
    assert levels["root"] == LoggerLevel(level_name(logging.getLogger().level), None)
    assert levels["cltest.app"] == LoggerLevel("INFO", None)
    assert levels["cltest.app.b.c"] == LoggerLevel("INFO", None)
    assert "cltest.app.b" not in levels  # a placeholder, not a logger
    assert list(levels) == sorted(levels)


def test_all_excludes_loggers_that_are_off(loggers: Loggers, family: list[logging.Logger]) -> None:
    loggers.set_level("cltest.app.a", "off")
    assert "cltest.app.a" not in loggers.all()
    assert loggers.get("cltest.app.a").level == "OFF"


def test_get_never_creates_a_logger(loggers: Loggers) -> None:
    with pytest.raises(NotFoundError, match=r"^Logger cltest\.never not found\.$"):
        loggers.get("cltest.never")
    assert "cltest.never" not in logging.Logger.manager.loggerDict
    assert loggers.get("ROOT") == loggers.get("root")


def test_set_level_changes_namespace_and_descendants_only(
    loggers: Loggers, family: list[logging.Logger]
) -> None:
    changed = loggers.set_level("cltest.app", "debug")
    assert changed == ["cltest.app", "cltest.app.a", "cltest.app.b.c"]
    for logger in family[:3]:
        assert logger.getEffectiveLevel() == logging.DEBUG
        assert loggers.get(logger.name) == LoggerLevel("DEBUG", NOW_MS)
    assert loggers.get("cltest.apple") == LoggerLevel("INFO", None)


def test_repeating_a_change_changes_nothing(family: list[logging.Logger]) -> None:
    clock = [1.0]
    loggers = Loggers(clock=lambda: clock[0])
    assert loggers.set_level("cltest.app", "WARN") != []
    clock[0] = 2.0
    assert loggers.set_level("cltest.app", "warn") == []
    assert loggers.get("cltest.app").last_modified == 1000


def test_set_level_only_reports_loggers_whose_level_differs(
    loggers: Loggers, family: list[logging.Logger]
) -> None:
    family[1].setLevel(logging.ERROR)
    assert loggers.set_level("cltest.app", "ERROR") == ["cltest.app", "cltest.app.b.c"]
    assert loggers.get("cltest.app.a").last_modified is None


def test_set_level_creates_the_namespace_logger(loggers: Loggers) -> None:
    assert loggers.set_level("cltest.fresh", "TRACE") == ["cltest.fresh"]
    assert logging.getLogger("cltest.fresh").level == TRACE


def test_invalid_level_is_not_found(loggers: Loggers) -> None:
    with pytest.raises(NotFoundError, match=r"^invalid log level 'LOUD'\.$"):
        loggers.set_level("cltest.app", "LOUD")


# -- the routes ----------------------------------------------------------------------------------


def test_list_loggers(client: FlaskClient, family: list[logging.Logger]) -> None:
    response = client.get("/admin/loggers")
    assert response.status_code == 200
    body = response.get_json()
    assert body["cltest.app.a"] == {"level": "INFO", "last_modified": None}
    assert "root" in body


def test_get_logger(client: FlaskClient, family: list[logging.Logger]) -> None:
    response = client.get("/admin/loggers/cltest.app")
    assert response.status_code == 200
    assert response.get_json() == {"level": "INFO", "last_modified": None}
    error(client.get("/admin/loggers/cltest.nope"), 404, "Logger cltest.nope not found.")


def test_put_level_worker_scope_returns_changed_names(
    client: FlaskClient, family: list[logging.Logger]
) -> None:
    response = client.put("/admin/loggers/cltest.app", json={"level": "DEBUG"})
    assert response.status_code == 200
    assert response.get_json() == ["cltest.app", "cltest.app.a", "cltest.app.b.c"]
    after = client.get("/admin/loggers/cltest.app.a").get_json()
    assert after == {"level": "DEBUG", "last_modified": NOW_MS}


def test_put_level_unknown_scope_is_worker_scope(
    client: FlaskClient, family: list[logging.Logger]
) -> None:
    response = client.put("/admin/loggers/cltest.app.a?scope=galaxy", json={"level": "ERROR"})
    assert response.status_code == 200
    assert response.get_json() == ["cltest.app.a"]


def test_put_level_cluster_scope_is_204(client: FlaskClient, family: list[logging.Logger]) -> None:
    response = client.put("/admin/loggers/cltest.app?scope=Cluster", json={"level": "ERROR"})
    assert response.status_code == 204
    assert response.data == b""
    assert family[0].level == logging.ERROR


@pytest.mark.parametrize("body", [{}, {"level": None}, {"other": "INFO"}, None])
def test_put_without_level_is_400(client: FlaskClient, body: object) -> None:
    kwargs = {} if body is None else {"json": body}
    response = client.put("/admin/loggers/cltest.app", **kwargs)
    error(response, 400, "Desired 'level' parameter was not specified in request.")


def test_put_invalid_level_is_404(client: FlaskClient) -> None:
    error(
        client.put("/admin/loggers/cltest.app", json={"level": "loud"}),
        404,
        "invalid log level 'loud'.",
    )


def test_set_level_on_root_covers_every_logger(
    loggers: Loggers, family: list[logging.Logger]
) -> None:
    changed = loggers.set_level("Root", "FATAL")
    assert "root" in changed
    assert "cltest.app.b.c" in changed
    assert logging.getLogger().level == logging.CRITICAL
    assert family[3].getEffectiveLevel() == logging.CRITICAL


class PeerProcess:
    """The loggers of another process of the worker (the data plane's), as Loggers sees them."""

    def __init__(self) -> None:
        self.levels = {
            "root": LoggerLevel("INFO", None),
            "connect_lite.task.src": LoggerLevel("INFO", None),
        }
        self.calls: list[tuple[str, str]] = []

    def loggers_all(self) -> dict[str, LoggerLevel]:
        return dict(self.levels)

    def loggers_set(self, namespace: str, level: str) -> list[str]:
        self.calls.append((namespace, level))
        changed = [n for n in self.levels if n.startswith(namespace)]
        for name in changed:
            self.levels[name] = LoggerLevel(level, NOW_MS)
        return changed


def test_a_peer_process_loggers_are_listed_and_changed_with_this_ones(
    loggers: Loggers, family: list[logging.Logger]
) -> None:
    peer = PeerProcess()
    loggers.peer = peer
    levels = loggers.all()
    assert levels["connect_lite.task.src"] == LoggerLevel("INFO", None)  # only in the peer
    assert levels["cltest.app"] == LoggerLevel("INFO", None)  # only here
    assert list(levels) == sorted(levels)
    assert loggers.get("connect_lite.task.src") == LoggerLevel("INFO", None)
    with pytest.raises(NotFoundError):
        loggers.get("nowhere.at.all")

    changed = loggers.set_level("connect_lite.task", "DEBUG")
    assert peer.calls == [("connect_lite.task", "DEBUG")]
    assert "connect_lite.task.src" in changed and changed == sorted(set(changed))
    assert loggers.get("connect_lite.task.src").level == "DEBUG"
