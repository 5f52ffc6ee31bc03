"""Predicates: ports of Kafka's TopicNameMatchesTest and HasHeaderKeyTest, and tombstones."""

from __future__ import annotations

import pytest

from connect_lite.api import ConfigError, Headers, SinkRecord, SourceRecord
from connect_lite.plugins.registry import Plugins
from connect_lite.plugins.types import PluginType
from connect_lite.transforms.base import java_pattern
from connect_lite.transforms.predicates import HasHeaderKey, RecordIsTombstone, TopicNameMatches


def topic_record(topic: str | None) -> SourceRecord:
    return SourceRecord(None, None, topic, None)  # type: ignore[arg-type]  # Kafka tests a null topic


def test_pattern_required_in_config() -> None:
    with pytest.raises(ConfigError, match='Missing required configuration "pattern"'):
        TopicNameMatches().configure({})


def test_pattern_may_not_be_empty_in_config() -> None:
    with pytest.raises(ConfigError) as error:
        TopicNameMatches().configure({"pattern": ""})
    assert str(error.value) == "Invalid value  for configuration pattern: String must be non-empty"


def test_pattern_is_valid_regex_in_config() -> None:
    with pytest.raises(ConfigError) as error:
        TopicNameMatches().configure({"pattern": "["})
    assert str(error.value) == (
        "Invalid value [ for configuration pattern: Invalid regex: "
        "Unclosed character class near index 0\n[\n^"
    )


def test_config_validate_reports_one_error() -> None:
    assert TopicNameMatches().config().validate({"pattern": "my-prefix-.*"})["pattern"].errors == []
    errors = TopicNameMatches().config().validate({"pattern": "*"})["pattern"].errors
    assert errors == [
        "Invalid value * for configuration pattern: Invalid regex: "
        "Dangling meta character '*' near index 0\n*\n^"
    ]


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("(", "Unclosed group near index 1\n("),
        ("a)", "Unmatched closing ')' near index 0\na)\n^"),
        ("[abc", "Unclosed character class near index 3\n[abc\n   ^"),
    ],
)
def test_java_style_regex_messages(pattern: str, message: str) -> None:
    errors = TopicNameMatches().config().validate({"pattern": pattern})["pattern"].errors
    assert errors == [
        f"Invalid value {pattern} for configuration pattern: Invalid regex: {message}"
    ]


def test_topic_name_matches_whole_topic() -> None:
    predicate = TopicNameMatches()
    predicate.configure({"pattern": "my-prefix-.*"})
    assert predicate.settings == {"pattern": "my-prefix-.*"}
    assert predicate.test(topic_record("my-prefix-"))
    assert predicate.test(topic_record("my-prefix-foo"))
    assert not predicate.test(topic_record("x-my-prefix-"))
    assert not predicate.test(topic_record("x-my-prefix-foo"))
    assert not predicate.test(topic_record("your-prefix-"))
    assert not predicate.test(topic_record("your-prefix-foo"))
    assert not predicate.test(topic_record(None))
    assert predicate.test(SinkRecord("my-prefix-sink", 0, 0, None, None))


def test_java_only_regex_syntax() -> None:
    assert java_pattern(r"\Qa.b\E-.*") == r"a\.b-.*"
    assert java_pattern(r"(?<env>dev|prod)-\k<env>") == r"(?P<env>dev|prod)-(?P=env)"
    assert java_pattern(r"(?<=x)[(?<a]\\Q") == r"(?<=x)[(?<a]\\Q"
    predicate = TopicNameMatches()
    predicate.configure({"pattern": r"(?<env>dev|prod)\Q.orders\E"})
    assert predicate.test(topic_record("dev.orders"))
    assert not predicate.test(topic_record("dev-orders"))


def test_header_name_required_and_non_empty() -> None:
    with pytest.raises(ConfigError, match='Missing required configuration "name"'):
        HasHeaderKey().configure({})
    errors = HasHeaderKey().config().validate({"name": ""})["name"].errors
    assert errors == ["Invalid value  for configuration name: String must be non-empty"]
    assert HasHeaderKey().config().validate({"name": "foo"})["name"].errors == []


def headers_record(*keys: str) -> SourceRecord:
    return SourceRecord(None, None, "t", None, headers=Headers.of((k, None) for k in keys))


def test_has_header_key() -> None:
    predicate = HasHeaderKey()
    predicate.configure({"name": "foo"})
    assert predicate.test(headers_record("foo"))
    assert predicate.test(headers_record("foo", "bar"))
    assert predicate.test(headers_record("bar", "foo", "bar", "foo"))
    assert not predicate.test(headers_record("bar"))
    assert not predicate.test(headers_record("bar", "bar"))
    assert not predicate.test(headers_record())


def test_record_is_tombstone() -> None:
    predicate = RecordIsTombstone()
    predicate.configure({})
    assert predicate.settings == {}
    assert predicate.test(SourceRecord(None, None, "t", None, key="k"))
    assert predicate.test(SinkRecord("t", 0, 0, "k", None))
    assert not predicate.test(SourceRecord(None, None, "t", "", key="k"))
    assert not predicate.test(SinkRecord("t", 0, 0, None, {"a": 1}))


@pytest.mark.parametrize("cls", [TopicNameMatches, HasHeaderKey, RecordIsTombstone])
def test_registry_names(cls: type) -> None:
    plugins = Plugins([])
    java = f"org.apache.kafka.connect.transforms.predicates.{cls.__name__}"
    for name in (java, cls.__name__):
        assert plugins.find(name, [PluginType.PREDICATE]).cls is cls
