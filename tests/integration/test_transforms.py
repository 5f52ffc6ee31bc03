"""Kafka's transforms and predicates in a real worker: a source chain and a sink chain."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from connect_lite.testing import EmbeddedConnect, wait_for
from tests.integration.testkit import TEST_PLUGINS, lines

pytest_plugins = ["connect_lite.testing.pytest_plugin"]
pytestmark = [
    pytest.mark.integration,
    pytest.mark.connect_lite(reuse="module", plugin_paths=[TEST_PLUGINS]),
]
T = "org.apache.kafka.connect.transforms."
JSON = "org.apache.kafka.connect.json.JsonConverter"


def test_source_chain_routes_inserts_and_masks(connect: EmbeddedConnect) -> None:
    connect.create_topic("people", partitions=1)
    connect.client.create(
        "people-source",
        {
            "connector.class": "PeopleSource",
            "topic": "people-raw",
            "count": "25",
            "value.converter": JSON,
            "value.converter.schemas.enable": "false",
            "transforms": "route,insert,mask",
            "transforms.route.type": T + "RegexRouter",
            "transforms.route.regex": "(.*)-raw",
            "transforms.route.replacement": "$1",
            "transforms.insert.type": T + "InsertField$Value",
            "transforms.insert.topic.field": "topic",
            "transforms.insert.static.field": "origin",
            "transforms.insert.static.value": "lab",
            "transforms.mask.type": T + "MaskField$Value",
            "transforms.mask.fields": "email",
        },
    )
    connect.wait_running("people-source", tasks=1)
    records = connect.wait_topic_records("people", 25)
    assert [json.loads(r.value or b"") for r in records] == [
        {"id": i, "name": f"person-{i}", "email": "", "topic": "people", "origin": "lab"}
        for i in range(25)
    ]
    assert connect.client.topics("people-source") == ["people"]  # the routed topic only


def test_sink_chain_filters_with_a_predicate(connect: EmbeddedConnect, tmp_path: Path) -> None:
    schema = {
        "type": "struct",
        "fields": [
            {"field": "id", "type": "int64", "optional": False},
            {"field": "kind", "type": "string", "optional": False},
        ],
    }

    def envelope(i: int, kind: str) -> str:
        return json.dumps({"schema": schema, "payload": {"id": i, "kind": kind}})

    connect.create_topic("events", partitions=1)
    connect.create_topic("audit-events", partitions=1)
    connect.produce("events", [envelope(i, "order") for i in range(10)])
    connect.produce("audit-events", [envelope(i, "audit") for i in range(5)])
    connect.produce("events", [None])  # a tombstone, dropped by the second filter
    out = tmp_path / "kinds.jsonl"
    connect.client.create(
        "kinds-sink",
        {
            "connector.class": "RecordingSink",
            "topics": "events,audit-events",
            "output.file": str(out),
            "value.converter": JSON,
            "transforms": "dropAudit,dropTombstones,kind",
            "transforms.dropAudit.type": T + "Filter",
            "transforms.dropAudit.predicate": "isAudit",
            "transforms.dropTombstones.type": T + "Filter",
            "transforms.dropTombstones.predicate": "isTombstone",
            "transforms.kind.type": T + "ExtractField$Value",
            "transforms.kind.field": "kind",
            "transforms.kind.predicate": "isTombstone",
            "transforms.kind.negate": "true",
            "predicates": "isAudit,isTombstone",
            "predicates.isAudit.type": T + "predicates.TopicNameMatches",
            "predicates.isAudit.pattern": "audit-.*",
            "predicates.isTombstone.type": T + "predicates.RecordIsTombstone",
        },
    )
    connect.wait_running("kinds-sink", tasks=1)

    def all_committed(offsets: list[dict]) -> bool:
        by_topic = {o["partition"]["kafka_topic"]: o["offset"]["kafka_offset"] for o in offsets}
        return by_topic == {"events": 11, "audit-events": 5}

    connect.wait_offsets("kinds-sink", all_committed)
    rows = wait_for(lambda: [json.loads(line) for line in lines(out)], 30, what="sink output")
    assert [(r["topic"], r["offset"], r["value"]) for r in rows] == [
        ("events", i, "order") for i in range(10)
    ]
