"""KIP-158 settings are validated up front, by /config/validate and so on create."""

from __future__ import annotations

from pathlib import Path

import pytest

from connect_lite.config.validation import validate_connector_config
from connect_lite.config.worker import WorkerConfig
from connect_lite.plugins.registry import Plugins

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def plugins() -> Plugins:
    return Plugins([str(REPO / "plugins")])


def errors(plugins: Plugins, extra: dict[str, str], **worker: str) -> dict[str, list[str]]:
    config = {"connector.class": "FileStreamSource", "name": "n", "topic": "t", **extra}
    infos = validate_connector_config(
        plugins, WorkerConfig({"bootstrap.servers": "b:1", **worker}), config
    )
    found = {
        c["value"]["name"]: c["value"]["errors"] for c in infos.configs if c["value"]["errors"]
    }
    assert infos.error_count == sum(len(e) for e in found.values())
    return found


def test_default_settings_are_required_once_any_key_is_set(plugins: Plugins) -> None:
    found = errors(plugins, {"topic.creation.groups": "a"})
    assert found == {
        "topic.creation.default.replication.factor": [
            'Missing required configuration "topic.creation.default.replication.factor" '
            "which has no default value."
        ],
        "topic.creation.default.partitions": [
            'Missing required configuration "topic.creation.default.partitions" '
            "which has no default value."
        ],
    }
    assert errors(plugins, {}) == {}


@pytest.mark.parametrize("value", ["0", "-2"])
def test_zero_and_below_minus_one_are_errors(plugins: Plugins, value: str) -> None:
    found = errors(
        plugins,
        {
            "topic.creation.groups": "g",
            "topic.creation.default.replication.factor": value,
            "topic.creation.default.partitions": value,
            "topic.creation.g.partitions": value,
        },
    )
    assert found["topic.creation.default.partitions"] == [
        f"Invalid value {value} for configuration topic.creation.default.partitions: "
        "Number of partitions must be positive, or -1 to use the broker's default"
    ]
    assert found["topic.creation.default.replication.factor"] == [
        f"Invalid value {value} for configuration topic.creation.default.replication.factor: "
        "Replication factor must be positive and not larger than the number of brokers in the "
        "Kafka cluster, or -1 to use the broker's default"
    ]
    assert "topic.creation.g.partitions" in found


def test_duplicates_regexes_and_valid_configs(plugins: Plugins) -> None:
    base = {
        "topic.creation.default.replication.factor": "-1",
        "topic.creation.default.partitions": "-1",
    }
    found = errors(
        plugins, {**base, "topic.creation.groups": "a,a", "topic.creation.a.include": "ok,("}
    )
    assert found["topic.creation.groups"] == [
        "Invalid value [a, a] for configuration topic.creation.groups: Duplicate alias provided."
    ]
    assert "Syntax error in regular expression" in found["topic.creation.a.include"][0]
    nested = errors(
        plugins,
        {**base, "topic.creation.groups": "a", "topic.creation.a.exclude": "(" * 5000 + ")" * 5000},
    )
    assert nested["topic.creation.a.exclude"][0].endswith(
        "Syntax error in regular expression: too many nested groups"
    )
    assert (
        errors(
            plugins,
            {**base, "topic.creation.groups": "default,a", "topic.creation.a.exclude": "x.*"},
        )
        == {}
    )


def test_nothing_is_validated_when_the_worker_disables_topic_creation(plugins: Plugins) -> None:
    assert (
        errors(
            plugins,
            {"topic.creation.default.partitions": "0"},
            **{"topic.creation.enable": "false"},
        )
        == {}
    )
