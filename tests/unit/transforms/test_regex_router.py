"""RegexRouter: Kafka's full-match rename with Java replacement syntax."""

from __future__ import annotations

import pytest

from connect_lite.api import ConfigError, SinkRecord, SourceRecord
from connect_lite.transforms.regex_router import TOPIC_CACHE_SIZE, RegexRouter, java_replacement


def router(regex: str, replacement: str) -> RegexRouter:
    r = RegexRouter()
    r.configure({"regex": regex, "replacement": replacement})
    return r


def test_renames_on_full_match_only() -> None:
    r = router("(.*)-raw", "$1-clean")
    record = SourceRecord({"p": 1}, {"o": 1}, "orders-raw", "v")
    renamed = r.apply(record)
    assert renamed.topic == "orders-clean" and renamed.value == "v"
    assert renamed.source_offset == {"o": 1}
    assert r.apply(SourceRecord(None, None, "orders-raw-x", "v")).topic == "orders-raw-x"
    sink = SinkRecord("orders-raw", 0, 5, None, "v")
    assert r.apply(sink).topic == "orders-clean"


def test_java_replacement_syntax() -> None:
    assert java_replacement("$1") == "\\g<1>"
    assert java_replacement("${name}-x") == "\\g<name>-x"
    assert java_replacement("cost\\$5") == "cost$5"
    assert java_replacement("a\\\\b") == "a\\\\b"
    assert (
        router("(?P<name>\\w+)\\.(\\d+)", "${name}_$2")
        .apply(SourceRecord(None, None, "events.42", "v"))
        .topic
        == "events_42"
    )


def test_config_errors() -> None:
    with pytest.raises(ConfigError):
        RegexRouter().configure({"regex": "(", "replacement": "x"})
    with pytest.raises(ConfigError):
        RegexRouter().configure({"regex": "a"})
    assert RegexRouter.__connect_class_name__ == "org.apache.kafka.connect.transforms.RegexRouter"


def test_remembered_routes_give_the_same_topics_and_stay_bounded() -> None:
    r = router("(\\w+)-(\\d+)", "$2.$1")
    fresh = router("(\\w+)-(\\d+)", "$2.$1")
    for i in range(TOPIC_CACHE_SIZE + 5):
        topic = f"t-{i % (TOPIC_CACHE_SIZE + 3)}"
        assert (
            r.apply(SourceRecord(None, None, topic, "v")).topic == f"{i % (TOPIC_CACHE_SIZE + 3)}.t"
        )
        assert r.apply(SourceRecord(None, None, topic, "v")) == fresh.apply(
            SourceRecord(None, None, topic, "v")
        )
        assert len(r._routes) <= TOPIC_CACHE_SIZE
    unmatched = SourceRecord(None, None, "no match", "v")
    assert r.apply(unmatched) is unmatched
    assert r.apply(unmatched) is unmatched  # remembered as "no match"
    assert r._routes["no match"] is None
