"""The restart trap: which stored connectors refer to topics the embedded broker no longer has,
and the one WARN line that names them."""

from __future__ import annotations

from collections.abc import Mapping

from connect_lite.control.lost_topics import LostTopics, lost_topics, restart_warning
from connect_lite.storage.base import Stores, TopicUse
from connect_lite.storage.memory import open_memory_stores

KINDS = {"FileStreamSource": "source", "FileStreamSink": "sink"}


def kind_of(config: Mapping[str, str]) -> str:
    return KINDS.get(config["connector.class"], "unknown")


def connector(
    stores: Stores, name: str, cls: str, topics: list[str], offsets: bool = False
) -> None:
    stores.configs.put_connector_config(name, {"connector.class": cls})
    for topic in topics:
        stores.topics.put(TopicUse(name, topic, 0, 1))
    if offsets:
        partition = {"filename": f"{name}.txt"}
        stores.offsets.put_many(name, {name: (partition, {"position": 10})})


def test_sources_with_offsets_and_sinks_that_consumed_gone_topics_are_named() -> None:
    stores = open_memory_stores()
    connector(stores, "src", "FileStreamSource", ["demo", "kept"], offsets=True)
    connector(stores, "sink", "FileStreamSink", ["demo"])
    connector(stores, "untracked", "FileStreamSource", [], offsets=True)  # tracking was off
    connector(stores, "never-ran", "FileStreamSource", ["demo"])  # no offsets: starts over
    connector(stores, "fine", "FileStreamSink", ["kept"])
    connector(stores, "secret", "FileStreamSink", ["${file:/s:topic}"])  # cannot be compared
    connector(stores, "other", "Mystery", ["demo"])
    assert lost_topics(stores, kind_of, {"kept"}) == LostTopics(
        sources={"src": ["demo"], "untracked": []}, sinks={"sink": ["demo"]}
    )


def test_nothing_is_lost_when_the_broker_has_every_topic() -> None:
    stores = open_memory_stores()
    connector(stores, "src", "FileStreamSource", ["demo"], offsets=True)
    connector(stores, "sink", "FileStreamSink", ["demo"])
    assert not lost_topics(stores, kind_of, {"demo"})


def test_the_warning_names_the_connectors_says_what_they_do_and_how_to_start_afresh() -> None:
    lost = LostTopics(sources={"src": ["demo"], "untracked": []}, sinks={"sink": ["demo", "b"]})
    assert restart_warning(lost, "/home/me/data/connect-lite.db") == (
        "The embedded broker keeps topics in memory and no longer has the topics these "
        "connectors used before this start: source connectors src (demo), untracked resume "
        "after their stored offsets, so the records they wrote before are gone and are not "
        "written again; sink connectors sink (demo, b) wait until their topics are created "
        "again. Only an external Kafka keeps topic data across a restart "
        "(embedded.broker.enable=false and bootstrap.servers). To start afresh, stop the worker "
        "and remove the state file /home/me/data/connect-lite.db, or reset a source's offsets "
        "(stop it, then DELETE /connectors/<name>/offsets)."
    )
    only_sinks = restart_warning(LostTopics(sinks={"sink": ["demo"]}), "f.db")
    assert "source connectors" not in only_sinks
    assert ": sink connectors sink (demo) wait until" in only_sinks
