"""Connectors' status details (Connector.status_details): sampled in the background, shown in
the connector's status and as a metric."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from connect_lite.api import SourceConnector, SourceTask
from connect_lite.control.connector_details import ConnectorDetails, reports_details
from connect_lite.control.entities import ConnectorStateInfo
from connect_lite.control.metrics import WorkerMetrics
from connect_lite.control.topic_tracking import TopicTracker
from connect_lite.protocol.states import ConnectorStatus, State
from connect_lite.rest.render import connector_state_info
from connect_lite.storage.memory import open_memory_stores


class _Plain(SourceConnector):
    def start(self, config: dict[str, str]) -> None: ...
    def task_class(self) -> type[SourceTask]:
        raise NotImplementedError

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return []

    def stop(self) -> None: ...


class Holding(_Plain):
    """Says what its config's ``held`` key says; fails when it says ``away``."""

    asked: list[dict[str, str]] = []

    def status_details(self, connector_config: dict[str, str]) -> dict[str, Any] | None:
        Holding.asked.append(connector_config)
        if connector_config["held"] == "away":
            raise ConnectionError("the database is away")
        return {"retained_wal_bytes": int(connector_config["held"]), "slot": "s",
                "bad": [1], "flag": True}  # fmt: skip


@dataclass
class Desc:
    cls: type


class FakePlugins:
    def find(self, name: str, types: Any, version: str | None = None) -> Desc:
        return Desc({"Holding": Holding, "Plain": _Plain}[name])

    def new_instance(self, desc: Desc) -> Any:
        return desc.cls()


def details_over(configs: dict[str, dict[str, str]]) -> tuple[ConnectorDetails, Any]:
    stores = open_memory_stores()
    for name, config in configs.items():
        stores.configs.put_connector_config(name, config)
    resolve = lambda config: {k: v.replace("${secret}", "42") for k, v in config.items()}  # noqa: E731
    return ConnectorDetails(FakePlugins(), stores.configs, resolve), stores  # type: ignore[arg-type]


def test_only_connectors_that_override_the_hook_are_asked_with_their_resolved_config() -> None:
    assert reports_details(Holding) and not reports_details(_Plain)
    Holding.asked.clear()
    details, _ = details_over({
        "cdc": {"connector.class": "Holding", "held": "${secret}"},
        "files": {"connector.class": "Plain"},
    })  # fmt: skip
    details.sample()
    assert Holding.asked == [{"connector.class": "Holding", "held": "42", "name": "cdc"}]
    # numbers and strings are kept; a list and a bool are not details
    assert details.get("cdc") == {"retained_wal_bytes": 42, "slot": "s"}
    assert details.get("files") is None and details.all() == {"cdc": details.get("cdc")}


def test_a_failed_sample_keeps_the_last_one_and_a_deleted_connector_is_forgotten() -> None:
    details, stores = details_over({"cdc": {"connector.class": "Holding", "held": "7"}})
    details.sample()
    stores.configs.put_connector_config("cdc", {"connector.class": "Holding", "held": "away"})
    details.sample()
    assert details.get("cdc") == {"retained_wal_bytes": 7, "slot": "s"}
    stores.configs.remove_connector("cdc")
    details.sample()
    assert details.all() == {}


def test_the_sampler_thread_samples_at_start_and_when_nudged() -> None:
    details, stores = details_over({"cdc": {"connector.class": "Holding", "held": "1"}})
    details.interval_s = 3600.0
    sampled = threading.Event()
    original = details.sample

    def sample() -> None:
        original()
        sampled.set()

    details.sample = sample  # type: ignore[method-assign]
    details.start()
    try:
        assert sampled.wait(10) and details.get("cdc") == {"retained_wal_bytes": 1, "slot": "s"}
        sampled.clear()
        stores.configs.put_connector_config("cdc", {"connector.class": "Holding", "held": "9"})
        details.nudge()
        assert sampled.wait(10) and details.get("cdc") == {"retained_wal_bytes": 9, "slot": "s"}
    finally:
        details.stop()


def test_the_status_shows_details_as_an_extra_field_and_the_metrics_as_a_gauge() -> None:
    status = ConnectorStatus("cdc", State.RUNNING, "w:1")
    plain = connector_state_info(ConnectorStateInfo("cdc", "source", status))
    assert "details" not in plain["connector"]
    found = {"retained_wal_bytes": 123, "slot": "s"}
    shown = connector_state_info(ConnectorStateInfo("cdc", "source", status, details=found))
    assert shown["connector"]["details"] == found
    assert shown["connector"]["state"] == "RUNNING"

    stores = open_memory_stores()
    tracker = TopicTracker(stores.topics, True, True)
    metrics = WorkerMetrics(stores.configs, tracker, details=lambda: {"cdc": found})
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(metrics.exposition().decode())
        for s in family.samples
    }
    key = (
        "kafka_connect_connector_status_detail",
        (("connector", "cdc"), ("detail", "retained_wal_bytes")),
    )
    assert samples[key] == 123.0
    assert not any(labels == (("connector", "cdc"), ("detail", "slot")) for _, labels in samples)
