"""TimestampRouter: Kafka's TimestampRouterTest, plus formats, placeholders and errors."""

from __future__ import annotations

import pytest

from connect_lite.api import ConfigError, DataError, SinkRecord, SourceRecord
from connect_lite.plugins.registry import Plugins
from connect_lite.plugins.types import PluginType
from connect_lite.transforms.timestamp_router import TimestampRouter


def router(**config: str) -> TimestampRouter:
    xform = TimestampRouter()
    xform.configure({k.replace("_", "."): v for k, v in config.items()})
    return xform


def test_default_configuration() -> None:
    record = SourceRecord(None, None, "test", None, kafka_partition=0, timestamp=1483425001864)
    transformed = router().apply(record)
    assert transformed.topic == "test-20170103"
    assert transformed.timestamp == 1483425001864 and transformed.kafka_partition == 0
    assert router().settings == {
        "topic.format": "${topic}-${timestamp}",
        "timestamp.format": "yyyyMMdd",
    }


def test_custom_formats_and_sink_records() -> None:
    xform = router(topic_format="${timestamp}/${topic}/${timestamp}", timestamp_format="yyyy-MM-HH")
    record = SinkRecord("orders", 1, 7, "k", "v", timestamp=1483425001864)
    assert xform.apply(record).topic == "2017-01-06/orders/2017-01-06"
    literal = router(topic_format="archive", timestamp_format="'year'yyyy")
    assert literal.apply(record).topic == "archive"


def test_topic_is_substituted_before_timestamp() -> None:
    # as Kafka: ${topic} first, then ${timestamp} anywhere in the result, both literally
    record = SourceRecord(None, None, "a$1-${timestamp}", None, timestamp=0)
    assert router().apply(record).topic == "a$1-19700101-19700101"


def test_missing_timestamp_is_a_data_error() -> None:
    with pytest.raises(DataError, match="Timestamp missing on record"):
        router().apply(SourceRecord(None, None, "test", None))


def test_bad_timestamp_format_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="Illegal pattern character 'b'"):
        router(timestamp_format="bad")
    with pytest.raises(ConfigError, match="Unterminated quote"):
        router(timestamp_format="yyyy'")


def test_registry_resolves_java_and_short_names() -> None:
    plugins = Plugins([])
    for name in ("org.apache.kafka.connect.transforms.TimestampRouter", "TimestampRouter"):
        assert plugins.find(name, [PluginType.TRANSFORMATION]).cls is TimestampRouter
