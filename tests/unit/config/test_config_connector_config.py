"""The typed view of a connector config's framework keys."""

from __future__ import annotations

import pytest

from connect_lite.api.errors import ConfigError
from connect_lite.config.connector_config import ConnectorConfig, SinkSubscription


def test_sink_values_and_defaults() -> None:
    config = ConnectorConfig(
        {
            "name": "s",
            "connector.class": "X",
            "topics": "a, b",
            "tasks.max": "3",
            "transforms": "t1,t2",
            "transforms.t1.type": "T",
            "transforms.t1.field": "f",
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": " dlq ",
        },
        "sink",
    )
    assert config.name == "s"
    assert config.tasks_max == 3 and config.tasks_max_enforce is True
    assert config.topics == ["a", "b"] and config.topics_regex is None
    assert config.transforms == ["t1", "t2"] and config.predicates == []
    assert config.prefixed("transforms.t1.") == {"type": "T", "field": "f"}
    assert config.errors_tolerance_all is True
    assert config.errors_retry_timeout_ms == 0 and config.errors_retry_delay_max_ms == 60000
    assert config.errors_log_enable is False and config.errors_log_include_messages is False
    assert config.dlq_topic == "dlq" and config.dlq_replication_factor == 3
    assert config.dlq_context_headers_enable is False


def test_source_values() -> None:
    config = ConnectorConfig(
        {"name": "s", "connector.class": "X", "topic.creation.groups": "g1,g2"}, "source"
    )
    assert config.topic_creation_groups == ["g1", "g2"]
    assert config.tasks_max == 1 and config.errors_tolerance_all is False


def test_bad_value_raises() -> None:
    with pytest.raises(ConfigError, match=r"tasks\.max"):
        ConnectorConfig({"name": "s", "connector.class": "X", "tasks.max": "0"}, "source")


def sink(**extra: str) -> ConnectorConfig:
    return ConnectorConfig({"name": "s", "connector.class": "X", **extra}, "sink")


def test_consumer_group_id_is_the_override_or_connect_name() -> None:
    assert sink(topics="t").consumer_group_id == "connect-s"
    assert sink(topics="t", **{"consumer.override.group.id": "g"}).consumer_group_id == "g"


def test_task_topic_settings_are_the_set_values_as_given() -> None:
    assert sink(topics="a, b").task_topic_settings() == {"topics": "a, b"}
    regex = sink(**{"topics": "", "topics.regex": "x.*"})
    assert regex.task_topic_settings() == {"topics.regex": "x.*"}


def test_plugin_config_leaves_out_version_keys() -> None:
    config = sink(topics="t", **{"connector.plugin.version": "1.0", "x.plugin.version": "2"})
    assert config.plugin_config == {"name": "s", "connector.class": "X", "topics": "t"}


def test_transforms_drop_empty_aliases() -> None:
    assert sink(topics="t", transforms=" a, ,b ").transforms == ["a", "b"]


def test_sink_subscription_comes_from_the_task_config() -> None:
    assert SinkSubscription.of_task({"topics": " a,, b "}) == SinkSubscription(["a", "b"], None)
    assert SinkSubscription.of_task({"topics.regex": "x.*"}) == SinkSubscription([], "x.*")
    assert SinkSubscription.of_task({"topics.regex": ""}) == SinkSubscription([], None)
