"""KIP-158 against a real broker: topics are created by the first matching group, before the
first send. Expectations hold on Apache Kafka too (single broker, so replication factor 1);
the only Tansu-specific fact used is that its auto-creation would not give the partitions asked."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from connect_lite.kafka.admin import Admin, TopicDescription
from connect_lite.testing import EmbeddedConnect, wait_for

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def admin(bootstrap_servers: str) -> Admin:
    return Admin({"bootstrap.servers": bootstrap_servers})


def rules(u: str) -> dict[str, str]:
    return {
        "topic.creation.groups": "foo,bar",
        "topic.creation.default.replication.factor": "1",
        "topic.creation.default.partitions": "1",
        "topic.creation.foo.include": f"orders-{u}.*",
        "topic.creation.foo.exclude": f"orders-{u}-tmp.*",
        "topic.creation.foo.partitions": "5",
        "topic.creation.foo.cleanup.policy": "compact",
        "topic.creation.bar.include": f"orders-{u}-tmp.*,audit-{u}",
        "topic.creation.bar.partitions": "2",
        "topic.creation.bar.retention.ms": "3600000",
    }


def source(
    worker: EmbeddedConnect, topic: str, extra: dict[str, str], name: str | None = None
) -> str:
    name = name or f"tc-{uuid.uuid4().hex[:8]}"
    config = {"connector.class": "ScriptedSource", "topic": topic, "max.records": "5", **extra}
    response = worker.http.post("/connectors", {"name": name, "config": config})
    assert response.status == 201, response.body
    return name


def described(admin: Admin, topic: str) -> TopicDescription:
    return wait_for(lambda: admin.describe_topic(topic), 120, what=f"topic {topic} to exist")


def all_sent(worker: EmbeddedConnect, name: str, count: int = 5) -> None:
    def done() -> bool:
        body: Any = worker.http.get(f"/connectors/{name}/offsets").body
        return any(o["offset"] == {"next": count} for o in body["offsets"])

    wait_for(done, 120, what=f"{name} to commit all {count} records")


def test_groups_full_match_exclude_and_inheritance(worker: EmbeddedConnect, admin: Admin) -> None:
    u = uuid.uuid4().hex[:8]
    for topic in (f"orders-{u}", f"orders-{u}-tmp", f"misc-{u}", f"audit-{u}"):
        source(worker, topic, rules(u))
    foo = described(admin, f"orders-{u}")
    assert (foo.partitions, foo.replication_factor) == (5, 1)  # foo's partitions, default RF
    assert foo.configs.get("cleanup.policy") == "compact"
    assert "retention.ms" not in foo.configs or foo.configs["retention.ms"] != "3600000"
    bar = described(admin, f"orders-{u}-tmp")  # excluded from foo: exclude wins
    assert bar.partitions == 2 and bar.configs.get("retention.ms") == "3600000"
    assert bar.configs.get("cleanup.policy") != "compact"  # configs are not inherited
    assert described(admin, f"audit-{u}").partitions == 2
    misc = described(admin, f"misc-{u}")
    assert misc.partitions == 1 and misc.configs.get("cleanup.policy") != "compact"


def test_an_existing_topic_is_left_unchanged(worker: EmbeddedConnect, admin: Admin) -> None:
    topic = f"existing-{uuid.uuid4().hex[:8]}"
    assert admin.create_topic(topic, 2, 1, {}) is True
    name = source(
        worker,
        topic,
        {
            "topic.creation.default.replication.factor": "1",
            "topic.creation.default.partitions": "6",
            "topic.creation.default.cleanup.policy": "compact",
        },
    )
    all_sent(worker, name)
    after = admin.describe_topic(topic)
    assert after is not None and after.partitions == 2
    assert after.configs.get("cleanup.policy") != "compact"


def test_regex_router_decides_the_created_topic(worker: EmbeddedConnect, admin: Admin) -> None:
    u = uuid.uuid4().hex[:8]
    name = source(
        worker,
        f"raw-{u}",
        {
            "transforms": "route",
            "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
            "transforms.route.regex": "raw-(.*)",
            "transforms.route.replacement": "routed-$1",
            "topic.creation.groups": "routed",
            "topic.creation.routed.include": "routed-.*",
            "topic.creation.routed.partitions": "3",
            "topic.creation.default.replication.factor": "1",
            "topic.creation.default.partitions": "1",
        },
    )
    assert described(admin, f"routed-{u}").partitions == 3
    all_sent(worker, name)
    assert f"raw-{u}" not in admin.list_topics()


def test_validation_errors_through_validate_and_create(worker: EmbeddedConnect) -> None:
    bad = {
        "connector.class": "ScriptedSource",
        "name": "bad-tc",
        "topic": "t",
        "topic.creation.groups": "a,a",
        "topic.creation.default.partitions": "0",
        "topic.creation.default.replication.factor": "-2",
        "topic.creation.a.include": "(",
    }
    validate = worker.http.put("/connector-plugins/ScriptedSource/config/validate", bad)
    assert validate.status == 200 and validate.body["error_count"] == 4
    errors = [e for c in validate.body["configs"] for e in c["value"]["errors"]]
    assert (
        "Invalid value [a, a] for configuration topic.creation.groups: Duplicate alias provided."
        in errors
    )
    assert any("Number of partitions must be positive, or -1" in e for e in errors)
    assert any("Replication factor must be positive" in e for e in errors)
    assert any("Syntax error in regular expression" in e for e in errors)
    created = worker.http.post("/connectors", {"name": "bad-tc", "config": bad})
    assert created.status == 400
    assert created.body["message"].startswith(
        "Connector configuration is invalid and contains the following 4 error(s):"
    )
    missing = {**bad, "topic.creation.groups": "", "topic.creation.a.include": ""}
    del missing["topic.creation.default.partitions"]
    put = worker.http.put("/connectors/bad-tc/config", missing)
    assert put.status == 400
    assert (
        'Missing required configuration "topic.creation.default.partitions"' in put.body["message"]
    )
    assert worker.http.get("/connectors/bad-tc").status == 404


def test_a_failing_creation_fails_the_task_with_the_error(worker: EmbeddedConnect) -> None:
    topic = f"unreachable-{uuid.uuid4().hex[:8]}"
    name = source(
        worker,
        topic,
        {
            "admin.override.bootstrap.servers": "127.0.0.1:1",
            "topic.creation.default.replication.factor": "1",
            "topic.creation.default.partitions": "1",
        },
    )
    status = wait_for(
        lambda: (
            (s := worker.client.status(name))["tasks"] and s["tasks"][0]["state"] == "FAILED" and s
        ),
        180,
        what="the task to fail",
    )
    trace = status["tasks"][0]["trace"]
    assert f"Unable to create topic '{topic}'" in trace and "'default'" in trace


@pytest.fixture
def worker_without_topic_creation(
    new_worker: Callable[..., EmbeddedConnect],
) -> EmbeddedConnect:
    return new_worker(worker_properties={"topic.creation.enable": "false"}).start()


def test_disabled_on_the_worker_leaves_topics_to_the_broker(
    worker_without_topic_creation: EmbeddedConnect, admin: Admin
) -> None:
    worker = worker_without_topic_creation
    topic = f"untouched-{uuid.uuid4().hex[:8]}"
    name = source(
        worker,
        topic,
        {
            "topic.creation.default.replication.factor": "1",
            "topic.creation.default.partitions": "7",
        },
    )
    all_sent(worker, name)
    created = admin.describe_topic(topic)
    assert created is not None and created.partitions != 7  # the broker's auto-creation decided
    assert (
        "topic.creation.* is ignored: the worker has topic.creation.enable=false"
        in worker.log_text()
    )
