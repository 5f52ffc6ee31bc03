"""Filter, and whole chains built from Kafka-style connector configs with predicates."""

from __future__ import annotations

from typing import Any

import pytest

from connect_lite.api import ConfigError, Headers, SinkRecord, SourceRecord
from connect_lite.control.components import transform_chain
from connect_lite.pipeline.plugin_calls import apply_transforms
from connect_lite.plugins.registry import Plugins
from connect_lite.plugins.types import PluginType
from connect_lite.transforms.filter import Filter
from tests.chain_config import chain_config

FILTER = "org.apache.kafka.connect.transforms.Filter"
PREDICATES = "org.apache.kafka.connect.transforms.predicates"


@pytest.fixture(scope="module")
def plugins() -> Plugins:
    return Plugins([])


def run(plugins: Plugins, config: dict[str, str], records: list[Any]) -> list[Any]:
    """Build the chain as a task does and apply it record by record; drops are left out."""
    chain = [
        (make(), predicate() if predicate else None, negate)
        for make, predicate, negate in transform_chain(plugins, chain_config(config))
    ]
    failures: dict[int, Any] = {}
    out = [apply_transforms(chain, r, i, failures) for i, r in enumerate(records)]
    assert failures == {}
    return [r for r in out if r is not None]


def drop_tombstones(**extra: str) -> dict[str, str]:
    return {
        "name": "c",
        "transforms": "dropTombstones",
        "transforms.dropTombstones.type": FILTER,
        "transforms.dropTombstones.predicate": "isTombstone",
        "predicates": "isTombstone",
        "predicates.isTombstone.type": f"{PREDICATES}.RecordIsTombstone",
        **{f"transforms.dropTombstones.{k}": v for k, v in extra.items()},
    }


RECORDS = [
    SourceRecord(None, None, "t", "a", key="1"),
    SourceRecord(None, None, "t", None, key="2"),
    SourceRecord(None, None, "t", "c", key="3"),
]


def test_filter_drops_every_record() -> None:
    f = Filter()
    f.configure({})
    assert f.settings == {}
    assert f.apply(RECORDS[0]) is None
    assert f.apply(SinkRecord("t", 0, 0, None, "v")) is None


def test_filter_registry_names(plugins: Plugins) -> None:
    for name in (FILTER, "Filter"):
        assert plugins.find(name, [PluginType.TRANSFORMATION]).cls is Filter


def test_chain_drops_tombstones(plugins: Plugins) -> None:
    assert [r.key for r in run(plugins, drop_tombstones(), RECORDS)] == ["1", "3"]
    explicit = drop_tombstones(negate="false")
    assert [r.key for r in run(plugins, explicit, RECORDS)] == ["1", "3"]


def test_chain_negated_keeps_only_tombstones(plugins: Plugins) -> None:
    assert [r.key for r in run(plugins, drop_tombstones(negate="true"), RECORDS)] == ["2"]


def test_filter_without_predicate_drops_everything(plugins: Plugins) -> None:
    config = {"transforms": "all", "transforms.all.type": "Filter"}
    assert run(plugins, config, RECORDS) == []


def test_chain_with_topic_and_header_predicates(plugins: Plugins) -> None:
    config = {
        "transforms": "tag,keepOrders,dropTagged",
        "transforms.tag.type": "InsertHeader",
        "transforms.tag.header": "seen",
        "transforms.tag.value.literal": "true",
        "transforms.tag.predicate": "isAudit",
        "transforms.keepOrders.type": "Filter",
        "transforms.keepOrders.predicate": "isOrders",
        "transforms.keepOrders.negate": "true",
        "transforms.dropTagged.type": "Filter",
        "transforms.dropTagged.predicate": "hasSeen",
        "predicates": "isOrders,isAudit,hasSeen",
        "predicates.isOrders.type": f"{PREDICATES}.TopicNameMatches",
        "predicates.isOrders.pattern": "orders(-.*)?",
        "predicates.isAudit.type": "TopicNameMatches",
        "predicates.isAudit.pattern": ".*-audit",
        "predicates.hasSeen.type": "HasHeaderKey",
        "predicates.hasSeen.name": "seen",
    }
    records = [
        SourceRecord(None, None, "orders", "o1"),
        SourceRecord(None, None, "orders-audit", "o2"),
        SourceRecord(None, None, "payments", "p1"),
        SourceRecord(None, None, "orders-eu", "o3", headers=Headers().add("other", 1)),
    ]
    kept = run(plugins, config, records)
    assert [r.value for r in kept] == ["o1", "o3"]
    assert kept[1].headers == Headers().add("other", 1)


def test_chain_with_header_transforms(plugins: Plugins) -> None:
    config = {
        "transforms": "fromValue,drop",
        "transforms.fromValue.type": "org.apache.kafka.connect.transforms.HeaderFrom$Value",
        "transforms.fromValue.fields": "id",
        "transforms.fromValue.headers": "record-id",
        "transforms.fromValue.operation": "move",
        "transforms.fromValue.predicate": "notTombstone",
        "transforms.fromValue.negate": "true",
        "transforms.drop.type": "DropHeaders",
        "transforms.drop.headers": "trace",
        "predicates": "notTombstone",
        "predicates.notTombstone.type": "RecordIsTombstone",
    }
    records = [
        SourceRecord(None, None, "t", {"id": 5, "x": 1}, headers=Headers().add("trace", "z")),
        SourceRecord(None, None, "t", None, headers=Headers().add("trace", "z")),
    ]
    first, tombstone = run(plugins, config, records)
    assert first.value == {"x": 1} and first.headers == Headers().add("record-id", 5)
    assert tombstone.value is None and tombstone.headers == Headers()


def test_chain_with_undefined_predicate_fails_to_build(plugins: Plugins) -> None:
    config = {
        "transforms": "f",
        "transforms.f.type": "Filter",
        "transforms.f.predicate": "nope",
    }
    with pytest.raises(ConfigError, match="nope"):
        transform_chain(plugins, chain_config(config))
