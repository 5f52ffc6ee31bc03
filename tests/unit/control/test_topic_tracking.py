"""KIP-558 recording: once per topic, first task wins, settings, sink reconfiguration."""

from __future__ import annotations

import threading
import time

import pytest

from connect_lite.api.errors import ForbiddenError
from connect_lite.api.records import canonical_json
from connect_lite.config import user_regex
from connect_lite.config.connector_config import ConnectorConfig
from connect_lite.config.resolution import Redactor
from connect_lite.control.concealed_stores import ConcealedOffsets
from connect_lite.control.topic_tracking import TopicTracker
from connect_lite.storage.memory import open_memory_stores


def tracker(enabled: bool = True, allow_reset: bool = True) -> TopicTracker:
    return TopicTracker(open_memory_stores().topics, enabled, allow_reset)


def sink_config(topics: dict[str, str]) -> ConnectorConfig:
    return ConnectorConfig({"name": "s", "connector.class": "X", **topics}, "sink")


def test_records_once_per_topic_and_keeps_the_first_task() -> None:
    t = tracker()
    writes: list[str] = []
    put = t.store.put
    t.store.put = lambda use: writes.append(use.topic) or put(use)  # type: ignore[method-assign, func-returns-value]
    t.record("c", ["a", "b"], 0)
    t.record("c", ["a", "b", "a"], 1)
    assert writes == ["a", "b"]
    assert t.topics("c") == ["a", "b"]
    assert {u.topic: u.task for u in t.store.topics("c")} == {"a": 0, "b": 0}
    assert t.topics("other") == []


def test_concurrent_tasks_racing_on_a_topic_are_harmless() -> None:
    t = tracker()
    threads = [threading.Thread(target=t.record, args=("c", ["x", "y"], n)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert t.topics("c") == ["x", "y"]


def test_reset_then_new_traffic_records_again() -> None:
    t = tracker()
    t.record("c", ["a"], 0)
    t.reset("c")
    assert t.topics("c") == []
    t.record("c", ["a"], 0)
    assert t.topics("c") == ["a"]


def test_disabled_records_nothing_and_forbids_both_endpoints() -> None:
    t = tracker(enabled=False, allow_reset=False)
    t.record("c", ["a"], 0)
    assert t.store.topics("c") == []
    for call in (lambda: t.topics("c"), lambda: t.reset("c")):
        with pytest.raises(ForbiddenError, match=r"^Topic tracking is disabled\.$"):
            call()


def test_reset_disallowed_but_forget_still_clears() -> None:
    t = tracker(allow_reset=False)
    t.record("c", ["a"], 0)
    with pytest.raises(ForbiddenError, match=r"^Topic tracking reset is disabled\.$"):
        t.reset("c")
    t.forget("c")
    assert t.topics("c") == []


def test_sink_reconfiguration_keeps_only_consumed_topics() -> None:
    t = tracker()
    t.record("s", ["orders", "payments", "audit-1", "audit-2"], 0)
    t.keep_only_consumed("s", sink_config({"topics": "orders, payments"}))
    assert t.topics("s") == ["orders", "payments"]
    t.keep_only_consumed("s", sink_config({"topics.regex": "pay.*"}))
    assert t.topics("s") == ["payments"]
    t.record("s", ["orders"], 0)  # the in-memory view was refreshed: recorded again
    assert t.topics("s") == ["orders", "payments"]


def test_a_topic_named_by_a_resolved_secret_is_recorded_as_its_reference() -> None:
    redactor = Redactor()
    redactor.add({"S3cretPassw0rd": "${file:/s.properties:password}"})
    t = TopicTracker(open_memory_stores().topics, True, True, redactor.exact)
    t.record("c", ["S3cretPassw0rd", "S3cretPassw0rd-suffix", "plain"], 0)
    t.record("c", ["S3cretPassw0rd"], 0)
    # Whole names only: a name that merely contains the value is another topic.
    assert t.topics("c") == ["${file:/s.properties:password}", "S3cretPassw0rd-suffix", "plain"]
    # A sink reconfigured with the same reference keeps the topic it consumes.
    config = ConnectorConfig(
        {"name": "c", "connector.class": "X", "topics": "S3cretPassw0rd,plain"}, "sink"
    )
    t.keep_only_consumed("c", config)
    assert t.topics("c") == ["${file:/s.properties:password}", "plain"]


def test_offsets_of_a_partition_named_by_a_secret_are_kept_under_its_reference() -> None:
    redactor = Redactor()
    redactor.add({"/secret/dir/in.txt": "${env:IN_FILE}"})
    store = ConcealedOffsets(open_memory_stores().offsets, redactor.exact)
    partition = {"filename": "/secret/dir/in.txt"}
    store.put_many("c", {canonical_json(partition): (partition, {"position": 7})})
    assert store.all("c") == [({"filename": "${env:IN_FILE}"}, {"position": 7})]
    assert store.inner.get("c", partition) is None  # the value itself is nowhere
    assert store.get("c", partition) == {"position": 7}  # the task finds its offset
    # Offsets (positions) are kept as the task wrote them, even when they match a value.
    other = {"filename": "elsewhere"}
    store.put_many("c", {canonical_json(other): (other, {"position": "/secret/dir/in.txt"})})
    assert store.get("c", other) == {"position": "/secret/dir/in.txt"}


def test_reconfiguration_matches_topics_regex_without_holding_the_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    t = tracker()
    t.record("s", ["a" * 30, "_internal", "orders"], 0)
    began = time.monotonic()
    t.keep_only_consumed("s", sink_config({"topics.regex": "(a+)+b|_internal|orders"}))  # RE2
    assert time.monotonic() - began < 5  # hours with re
    assert t.topics("s") == ["_internal", "orders"]
    t.keep_only_consumed("s", sink_config({"topics.regex": "^(?!_).*"}))  # in a child
    assert t.topics("s") == ["orders"]
    t.record("s", ["a" * 30], 0)
    monkeypatch.setattr(user_regex, "TIMEOUT_MS", 100)
    t.keep_only_consumed("s", sink_config({"topics.regex": "(a+)+(?!x)b"}))  # too slow
    assert t.topics("s") == ["a" * 30, "orders"]  # nothing dropped
