"""KIP-891 in a real worker: three versions of one plugin set side by side, upgrades, REST."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from connect_lite.testing import EmbeddedConnect, wait_for
from tests.integration.testkit import unique

pytestmark = pytest.mark.integration

VERSIONS = ["1.0.0", "2.0.0", "3.0.0"]
SOURCE = "acme_versioned.VersionedSourceConnector"
SINK = "acme_versioned.VersionedSinkConnector"
CONVERTER = "acme_versioned.VersionedConverter"
HEADER_CONVERTER = "acme_versioned.VersionedHeaderConverter"
TRANSFORM = "acme_versioned.VersionedTransformation"
PREDICATE = "acme_versioned.VersionedPredicate"


def plugin_set(version: str | None) -> dict[str, str]:
    """Converters, header converter, a transform and its predicate; pinned unless None."""
    config = {
        "key.converter": CONVERTER,
        "value.converter": CONVERTER,
        "header.converter": HEADER_CONVERTER,
        "transforms": "tag",
        "transforms.tag.type": TRANSFORM,
        "transforms.tag.predicate": "all",
        "predicates": "all",
        "predicates.all.type": PREDICATE,
    }
    if version is not None:
        for key in (
            "connector",
            "key.converter",
            "value.converter",
            "header.converter",
            "transforms.tag",
            "predicates.all",
        ):
            config[f"{key}.plugin.version"] = version
    return config


def put_config(worker: EmbeddedConnect, name: str, config: dict[str, str]) -> None:
    response = worker.http.put(f"/connectors/{name}/config", config)
    assert response.status in (200, 201), response.body


def versions_in_status(worker: EmbeddedConnect, name: str) -> tuple[str, list[str]] | None:
    response = worker.http.get(f"/connectors/{name}/status")
    if response.status != 200:
        return None
    body = response.body
    failed = [t for t in body["tasks"] if t["state"] == "FAILED"]
    assert not failed and body["connector"]["state"] != "FAILED", body
    if body["connector"]["state"] != "RUNNING" or not body["tasks"]:
        return None
    if any(t["state"] != "RUNNING" for t in body["tasks"]):
        return None
    return body["connector"].get("version"), [t.get("version") for t in body["tasks"]]


def wait_version(worker: EmbeddedConnect, name: str, version: str) -> None:
    wait_for(
        lambda: versions_in_status(worker, name) == (version, [version]),
        120,
        what=f"{name} running version {version}",
    )


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def metrics(worker: EmbeddedConnect) -> str:
    response = worker.http.request("GET", "/metrics")
    assert response.status == 200
    return str(response.raw.decode())


def metric_labels(text: str, family: str, connector: str) -> list[dict[str, str]]:
    found = []
    for line in text.splitlines():
        if line.startswith(family + "{") and f'connector="{connector}"' in line:
            found.append(dict(re.findall(r'(\w+)="([^"]*)"', line)))
    return found


def test_three_versions_of_a_full_plugin_set_run_side_by_side(
    worker: EmbeddedConnect, tmp_path: Path
) -> None:
    u = unique("kip891")
    names = {}
    for version in VERSIONS:
        topic = f"{u}-{version}"
        source = f"{u}-src-{version}"
        sink = f"{u}-sink-{version}"
        put_config(
            worker,
            source,
            {"connector.class": SOURCE, "topic": topic, "max.records": "5", **plugin_set(version)},
        )
        put_config(
            worker,
            sink,
            {
                "connector.class": SINK,
                "topics": topic,
                "output.file": str(tmp_path / f"{version}.jsonl"),
                "consumer.override.auto.offset.reset": "earliest",
                **plugin_set(version),
            },
        )
        names[version] = (source, sink)
    for version, (source, sink) in names.items():
        wait_version(worker, source, version)
        wait_version(worker, sink, version)
    for version in VERSIONS:
        out = tmp_path / f"{version}.jsonl"
        wait_for(lambda out=out: len(rows(out)) >= 5, 120, what=f"5 records in {out}")
        got = rows(out)
        # each value passed through one version's converters: anything else fails untag()
        assert sorted(r["value"] for r in got) == [f"record-{n}" for n in range(5)]
        assert {r["version"] for r in got} == {version}
    text = metrics(worker)
    for version, (source, sink) in names.items():
        (connector,) = metric_labels(text, "kafka_connect_connector_info", source)
        assert connector["connector_class"] == SOURCE
        assert connector["connector_type"] == "source"
        assert connector["connector_version"] == version
        (task,) = metric_labels(text, "kafka_connect_connector_task_info", sink)
        assert task["task"] == "0"
        assert task["task_version"] == version
        for role in ("key_converter", "value_converter", "header_converter"):
            assert task[f"{role}_version"] == version
        assert task["header_converter_class"] == HEADER_CONVERTER
        (transform,) = metric_labels(text, "kafka_connect_connector_transform_info", source)
        assert transform["transform"] == "tag"
        assert (transform["transform_class"], transform["transform_version"]) == (
            TRANSFORM,
            version,
        )
        (predicate,) = metric_labels(text, "kafka_connect_connector_predicate_info", source)
        assert predicate["predicate"] == "all"
        assert predicate["predicate_version"] == version
    for source, sink in names.values():
        assert worker.http.delete(f"/connectors/{source}").status == 204
        assert worker.http.delete(f"/connectors/{sink}").status == 204


def test_companions_come_from_the_connectors_own_location(worker: EmbeddedConnect) -> None:
    name = unique("bundle")
    config = {
        "connector.class": SOURCE,
        "topic": name,
        "max.records": "0",
        "connector.plugin.version": "1.0.0",
        **plugin_set(None),
    }
    put_config(worker, name, config)
    wait_version(worker, name, "1.0.0")
    (task,) = metric_labels(metrics(worker), "kafka_connect_connector_task_info", name)
    assert task["key_converter_version"] == task["header_converter_version"] == "1.0.0"
    (transform,) = metric_labels(metrics(worker), "kafka_connect_connector_transform_info", name)
    assert transform["transform_version"] == "1.0.0"
    # an explicit requirement still wins over the bundled copy
    put_config(worker, name, {**config, "transforms.tag.plugin.version": "[2.0.0,)"})
    wait_for(
        lambda: (
            metric_labels(metrics(worker), "kafka_connect_connector_transform_info", name)[0][
                "transform_version"
            ]
            == "3.0.0"
        ),
        120,
        what="transform 3.0.0",
    )
    assert worker.http.delete(f"/connectors/{name}").status == 204


def test_in_place_upgrade_through_three_versions_and_rollback(worker: EmbeddedConnect) -> None:
    name = unique("upgrade")
    base = {"connector.class": SOURCE, "topic": name, "max.records": "0", **plugin_set(None)}
    steady = unique("steady")  # another connector keeps the old version throughout
    put_config(worker, steady, {**base, "topic": steady, "connector.plugin.version": "1.0.0"})
    for version in [*VERSIONS, "1.0.0"]:
        put_config(worker, name, {**base, "connector.plugin.version": version})
        wait_version(worker, name, version)
        task = worker.http.get(f"/connectors/{name}/tasks/0/status")
        assert task.status == 200 and task.body["version"] == version
        assert versions_in_status(worker, steady) == ("1.0.0", ["1.0.0"])
    # a range picks the highest installed version inside it
    put_config(worker, name, {**base, "connector.plugin.version": "[1.0.0,3.0.0)"})
    wait_version(worker, name, "2.0.0")
    for connector in (name, steady):
        assert worker.http.delete(f"/connectors/{connector}").status == 204


def test_a_version_nothing_matches_is_rejected_on_create(worker: EmbeddedConnect) -> None:
    name = unique("nomatch")
    config = {"connector.class": SOURCE, "connector.plugin.version": "[4.0,)"}
    response = worker.http.put(f"/connectors/{name}/config", config)
    assert response.status == 400
    assert (
        "Plugin acme_versioned.VersionedSourceConnector not found that matches the version "
        "range [4.0,), available versions: [1.0.0, 2.0.0, 3.0.0]" in response.body["message"]
    )


def validate(worker: EmbeddedConnect, config: dict[str, str]) -> dict[str, Any]:
    response = worker.http.put(
        "/connector-plugins/VersionedSourceConnector/config/validate", config
    )
    assert response.status == 200, response.body
    return {
        c["definition"]["name"] if c["definition"] else c["value"]["name"]: c
        for c in response.body["configs"]
    }


def test_validate_attributes_version_errors_as_kafka(worker: EmbeddedConnect) -> None:
    base = {"connector.class": SOURCE, "name": "v"}
    lowest_first = ["1.0.0", "2.0.0", "3.0.0"]  # as Kafka's recommenders list them
    missing = validate(worker, {**base, "connector.plugin.version": "(3.0.0,)"})
    message = (
        f"Plugin {SOURCE} not found that matches the version range (3.0.0,), "
        "available versions: [1.0.0, 2.0.0, 3.0.0]"
    )
    assert missing["connector.class"]["value"]["errors"] == [message]
    assert missing["connector.plugin.version"]["value"]["errors"] == [message]
    assert missing["connector.plugin.version"]["value"]["recommended_values"] == lowest_first

    configs = validate(
        worker,
        {
            **base,
            "transforms": "a,b",
            "transforms.a.type": TRANSFORM,
            "transforms.a.plugin.version": "9.0",
            "transforms.b.type": "NoSuchTransformation",
            "transforms.b.plugin.version": "1.0.0",
            "key.converter": CONVERTER,
            "header.converter": HEADER_CONVERTER,
        },
    )
    not_found = (
        f"Plugin {TRANSFORM} not found that matches the version range [9.0], "
        "available versions: [1.0.0, 2.0.0, 3.0.0]"
    )
    assert configs["transforms.a.type"]["value"]["errors"] == [not_found]
    assert configs["transforms.a.plugin.version"]["value"]["errors"] == [not_found]
    assert configs["transforms.b.type"]["value"]["errors"]  # the class does not exist
    assert configs["transforms.b.plugin.version"]["value"]["errors"] == []
    for key in ("connector.plugin.version", "transforms.a.plugin.version"):
        assert configs[key]["definition"]["default_value"] == "3.0.0"
        assert configs[key]["value"]["recommended_values"] == lowest_first
    for key in ("key.converter.plugin.version", "header.converter.plugin.version"):
        assert configs[key]["value"]["recommended_values"] == lowest_first
    converters = configs["key.converter"]["value"]["recommended_values"]
    headers = configs["header.converter"]["value"]["recommended_values"]
    assert CONVERTER in converters and HEADER_CONVERTER not in converters
    assert HEADER_CONVERTER in headers and CONVERTER not in headers
    transforms = configs["transforms.a.type"]["value"]["recommended_values"]
    assert TRANSFORM in transforms and PREDICATE not in transforms


def test_validate_uses_the_config_definition_of_the_picked_version(worker: EmbeddedConnect) -> None:
    base = {
        "connector.class": SOURCE,
        "name": "v",
        "transforms": "t",
        "transforms.t.type": TRANSFORM,
    }
    latest = validate(worker, {**base, "transforms.t.since.v3": "x", "since.v3": "y"})
    assert "since.v3" in latest  # the connector's 3.0.0 key
    assert latest["transforms.t.since.v3"]["value"]["errors"]  # INT in 3.0.0
    old = validate(
        worker,
        {
            **base,
            "connector.plugin.version": "2.0.0",
            "transforms.t.plugin.version": "[1.0,2.0)",
            "transforms.t.since.v3": "x",
        },
    )
    assert "since.v3" not in old and "transforms.t.since.v3" not in old
    assert old["connector.plugin.version"]["value"]["errors"] == []


def test_listing_and_config_of_a_given_version(worker: EmbeddedConnect) -> None:
    listed = worker.http.get("/connector-plugins").body
    assert [p["version"] for p in listed if p["class"] == SOURCE] == VERSIONS
    everything = worker.http.get("/connector-plugins?connectorsOnly=false").body
    assert [p["version"] for p in everything if p["class"] == HEADER_CONVERTER] == VERSIONS

    def names(query: str) -> list[str]:
        response = worker.http.get(f"/connector-plugins/VersionedSourceConnector/config{query}")
        assert response.status == 200, response.body
        return [key["name"] for key in response.body]

    assert "since.v3" in names("")
    assert "since.v3" in names("?version=latest")
    assert "since.v3" in names("?version=3.0.0")
    assert "since.v3" not in names("?version=1.0.0")
    assert "since.v3" not in names("?version=%5B1.0,3.0)")  # [1.0,3.0) picks 2.0.0
    transform = worker.http.get(f"/connector-plugins/{TRANSFORM}/config?version=2.0.0")
    assert [key["name"] for key in transform.body] == ["header.name"]

    unknown = worker.http.get("/connector-plugins/VersionedSourceConnector/config?version=9.9")
    assert unknown.status == 400
    assert unknown.body["message"] == (
        f"Plugin {SOURCE} not found that matches the version range [9.9], "
        "available versions: [1.0.0, 2.0.0, 3.0.0]"
    )
    invalid = worker.http.get("/connector-plugins/VersionedSourceConnector/config?version=(1.0")
    assert invalid.status == 400
    assert invalid.body["message"] == "Invalid version specification: (1.0"


def test_the_readme_demo_upgrades_and_rolls_back_one_counter(worker: EmbeddedConnect) -> None:
    a, b = unique("counter-a"), unique("counter-b")

    def counter(name: str, version: str) -> dict[str, str]:
        return {
            "connector.class": "CounterSource",
            "topic": name,
            "interval.ms": "200",
            "connector.plugin.version": version,
        }

    for name in (a, b):
        put_config(worker, name, counter(name, "1.0.0"))
        wait_version(worker, name, "1.0.0")
    put_config(worker, a, counter(a, "2.0.0"))
    wait_version(worker, a, "2.0.0")
    assert versions_in_status(worker, b) == ("1.0.0", ["1.0.0"])
    put_config(worker, a, counter(a, "1.0.0"))
    wait_version(worker, a, "1.0.0")
    listed = worker.http.get("/connector-plugins").body
    assert [p["version"] for p in listed if p["class"] == "counter.CounterSourceConnector"] == [
        "1.0.0",
        "2.0.0",
    ]
    for name in (a, b):
        assert worker.http.delete(f"/connectors/{name}").status == 204
