"""One contract suite for every store implementation (memory and SQLite)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from connect_lite.api.records import Partition, canonical_json
from connect_lite.protocol.states import ConnectorStatus, State, TargetState, TaskStatus
from connect_lite.storage.base import Stores, TopicUse
from connect_lite.storage.memory import open_memory_stores
from connect_lite.storage.sqlite import open_sqlite_stores

StoreFactory = Callable[[], Stores]


@pytest.fixture(params=["memory", "sqlite"])
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """Opens fresh stores of one implementation; closes all of them at teardown."""
    opened: list[Stores] = []

    def make() -> Stores:
        if request.param == "memory":
            stores = open_memory_stores()
        else:
            stores = open_sqlite_stores(str(tmp_path / f"state-{len(opened)}.db"))
        opened.append(stores)
        return stores

    yield make
    for stores in opened:
        stores.close()


@pytest.fixture
def stores(store_factory: StoreFactory) -> Stores:
    return store_factory()


def offsets_entry(partition: dict, offset: dict | None) -> dict:
    return {canonical_json(partition): (partition, offset)}


# ---- ConfigStore ---------------------------------------------------------------------------


def test_unknown_connector_reads_as_absent(stores: Stores) -> None:
    configs = stores.configs
    assert configs.connector_names() == []
    assert configs.get_connector_config("nope") is None
    assert configs.get_target_state("nope") is None
    assert configs.get_task_configs("nope") == []
    configs.remove_connector("nope")  # no error when absent


def test_create_replace_and_remove_connector(stores: Stores) -> None:
    configs = stores.configs
    configs.put_connector_config("a", {"connector.class": "X", "tasks.max": "1"})
    assert configs.get_connector_config("a") == {"connector.class": "X", "tasks.max": "1"}

    configs.put_connector_config("a", {"connector.class": "Y"})
    assert configs.get_connector_config("a") == {"connector.class": "Y"}
    assert configs.connector_names() == ["a"]

    configs.put_task_configs("a", [{"t": "0"}])
    configs.remove_connector("a")
    assert configs.get_connector_config("a") is None
    assert configs.get_target_state("a") is None
    assert configs.get_task_configs("a") == []
    assert configs.connector_names() == []


def test_returned_config_is_a_copy(stores: Stores) -> None:
    source = {"k": "v"}
    stores.configs.put_connector_config("a", source)
    source["k"] = "changed"
    got = stores.configs.get_connector_config("a")
    assert got == {"k": "v"}
    got["k"] = "mutated"  # type: ignore[index]
    assert stores.configs.get_connector_config("a") == {"k": "v"}


def test_new_connector_target_state_defaults_to_running(stores: Stores) -> None:
    stores.configs.put_connector_config("a", {})
    stores.configs.put_connector_config("b", {}, TargetState.STOPPED)
    assert stores.configs.get_target_state("a") is TargetState.RUNNING
    assert stores.configs.get_target_state("b") is TargetState.STOPPED


def test_existing_connector_keeps_target_state_unless_given(stores: Stores) -> None:
    configs = stores.configs
    configs.put_connector_config("a", {"v": "1"}, TargetState.PAUSED)
    configs.put_connector_config("a", {"v": "2"})
    assert configs.get_target_state("a") is TargetState.PAUSED
    configs.put_connector_config("a", {"v": "3"}, TargetState.RUNNING)
    assert configs.get_target_state("a") is TargetState.RUNNING
    assert configs.get_connector_config("a") == {"v": "3"}


def test_put_target_state(stores: Stores) -> None:
    configs = stores.configs
    configs.put_connector_config("a", {})
    for state in (TargetState.PAUSED, TargetState.STOPPED, TargetState.RUNNING):
        configs.put_target_state("a", state)
        assert configs.get_target_state("a") is state
    assert configs.get_connector_config("a") == {}


def test_put_target_state_on_unknown_connector_raises_key_error(stores: Stores) -> None:
    with pytest.raises(KeyError):
        stores.configs.put_target_state("nope", TargetState.PAUSED)
    assert stores.configs.get_target_state("nope") is None
    assert stores.configs.connector_names() == []


def test_task_configs_are_replaced_as_a_whole(stores: Stores) -> None:
    configs = stores.configs
    configs.put_connector_config("a", {})
    configs.put_task_configs("a", [{"task": "0"}, {"task": "1"}, {"task": "2"}])
    assert configs.get_task_configs("a") == [{"task": "0"}, {"task": "1"}, {"task": "2"}]
    configs.put_task_configs("a", [{"task": "new"}])
    assert configs.get_task_configs("a") == [{"task": "new"}]
    configs.put_task_configs("a", [])
    assert configs.get_task_configs("a") == []


def test_task_configs_for_unknown_connector_raise_key_error(stores: Stores) -> None:
    with pytest.raises(KeyError):
        stores.configs.put_task_configs("nope", [{"t": "0"}])
    assert stores.configs.get_task_configs("nope") == []


def test_connector_names_in_creation_order(stores: Stores) -> None:
    configs = stores.configs
    for name in ("zeta", "alpha", "mid"):
        configs.put_connector_config(name, {})
    configs.put_connector_config("alpha", {"updated": "yes"})  # replacing keeps its place
    assert configs.connector_names() == ["zeta", "alpha", "mid"]
    configs.remove_connector("zeta")
    configs.put_connector_config("zeta", {})  # re-created: now the newest
    assert configs.connector_names() == ["alpha", "mid", "zeta"]


def test_config_store_isolates_connectors(stores: Stores) -> None:
    configs = stores.configs
    configs.put_connector_config("a", {"n": "a"}, TargetState.PAUSED)
    configs.put_connector_config("b", {"n": "b"})
    configs.put_task_configs("a", [{"t": "a0"}])
    configs.put_task_configs("b", [{"t": "b0"}, {"t": "b1"}])
    configs.remove_connector("a")
    assert configs.get_connector_config("b") == {"n": "b"}
    assert configs.get_target_state("b") is TargetState.RUNNING
    assert configs.get_task_configs("b") == [{"t": "b0"}, {"t": "b1"}]


# ---- OffsetStore ---------------------------------------------------------------------------


def test_offsets_put_and_get(stores: Stores) -> None:
    offsets = stores.offsets
    part = {"file": "/tmp/a.txt"}
    assert offsets.get("c", part) is None
    offsets.put_many("c", offsets_entry(part, {"position": 10}))
    assert offsets.get("c", part) == {"position": 10}
    offsets.put_many("c", offsets_entry(part, {"position": 25}))
    assert offsets.get("c", part) == {"position": 25}


def test_partition_as_dict_or_partition_is_the_same_row(stores: Stores) -> None:
    offsets = stores.offsets
    partition = Partition({"b": 2, "a": "x"})
    offsets.put_many("c", {partition.key: (partition, {"o": 1})})
    assert offsets.get("c", {"a": "x", "b": 2}) == {"o": 1}
    offsets.put_many("c", offsets_entry({"a": "x", "b": 2}, {"o": 2}))
    assert offsets.get("c", partition) == {"o": 2}
    assert offsets.all("c") == [({"a": "x", "b": 2}, {"o": 2})]


def test_put_many_writes_every_entry(stores: Stores) -> None:
    offsets = stores.offsets
    entries = {}
    for i in range(5):
        entries.update(offsets_entry({"p": i}, {"o": i * 10}))
    offsets.put_many("c", entries)
    assert [offsets.get("c", {"p": i}) for i in range(5)] == [{"o": i * 10} for i in range(5)]


def test_tombstone_deletes_partition(stores: Stores) -> None:
    offsets = stores.offsets
    offsets.put_many(
        "c", {**offsets_entry({"p": 1}, {"o": 1}), **offsets_entry({"p": 2}, {"o": 2})}
    )
    offsets.put_many("c", {**offsets_entry({"p": 1}, None), **offsets_entry({"p": 3}, {"o": 3})})
    assert offsets.get("c", {"p": 1}) is None
    assert offsets.all("c") == [({"p": 2}, {"o": 2}), ({"p": 3}, {"o": 3})]
    offsets.put_many("c", offsets_entry({"p": 99}, None))  # tombstone of an unknown partition
    assert len(offsets.all("c")) == 2


def test_put_many_with_an_unstorable_offset_writes_nothing(stores: Stores) -> None:
    offsets = stores.offsets
    offsets.put_many("c", offsets_entry({"p": 1}, {"o": 1}))
    batch = {**offsets_entry({"p": 1}, {"o": 2}), **offsets_entry({"p": 2}, {"o": object()})}
    with pytest.raises(TypeError):
        offsets.put_many("c", batch)
    assert offsets.all("c") == [({"p": 1}, {"o": 1})]


def test_all_is_stable_and_holds_nested_json(stores: Stores) -> None:
    offsets = stores.offsets
    nested = {"pos": [1, 2, {"x": None}], "flag": True, "f": 1.5, "s": "é"}
    for name in ("b", "c", "a"):
        offsets.put_many("c", offsets_entry({"name": name}, nested))
    first = offsets.all("c")
    assert [p["name"] for p, _ in first] == sorted(["a", "b", "c"])
    assert all(o == nested for _, o in first)
    assert offsets.all("c") == first
    assert offsets.all("other") == []


def test_offsets_remove_connector_and_isolation(stores: Stores) -> None:
    offsets = stores.offsets
    part = {"p": 0}
    offsets.put_many("a", offsets_entry(part, {"o": "a"}))
    offsets.put_many("b", offsets_entry(part, {"o": "b"}))
    assert offsets.get("a", part) == {"o": "a"}
    assert offsets.get("b", part) == {"o": "b"}
    offsets.remove_connector("a")
    assert offsets.all("a") == []
    assert offsets.get("b", part) == {"o": "b"}
    offsets.remove_connector("never-existed")


# ---- StatusStore ---------------------------------------------------------------------------


def test_connector_status_put_get_replace(stores: Stores) -> None:
    statuses = stores.statuses
    assert statuses.get_connector("a") is None
    first = ConnectorStatus("a", State.RUNNING, "w1:8083", version="1.0")
    statuses.put_connector(first)
    assert statuses.get_connector("a") == first
    failed = ConnectorStatus("a", State.FAILED, "w2:8083", trace="Traceback...\n boom")
    statuses.put_connector(failed)
    assert statuses.get_connector("a") == failed


def test_task_status_put_get_and_sorted(stores: Stores) -> None:
    statuses = stores.statuses
    assert statuses.get_task("a", 0) is None
    assert statuses.get_tasks("a") == []
    for task in (10, 2, 0):
        statuses.put_task(TaskStatus("a", task, State.RUNNING, "w", version="2"))
    assert [s.task for s in statuses.get_tasks("a")] == [0, 2, 10]
    failed = TaskStatus("a", 2, State.FAILED, "w", trace="trace")
    statuses.put_task(failed)
    assert statuses.get_task("a", 2) == failed
    assert statuses.get_tasks("a")[1] == failed


def test_delete_task_status(stores: Stores) -> None:
    statuses = stores.statuses
    for task in range(3):
        statuses.put_task(TaskStatus("a", task, State.RUNNING, "w"))
    statuses.delete_task("a", 1)
    assert statuses.get_task("a", 1) is None
    assert [s.task for s in statuses.get_tasks("a")] == [0, 2]
    statuses.delete_task("a", 42)  # absent: no error


def test_delete_connector_status_removes_tasks_too(stores: Stores) -> None:
    statuses = stores.statuses
    statuses.put_connector(ConnectorStatus("a", State.RUNNING, "w"))
    statuses.put_connector(ConnectorStatus("b", State.PAUSED, "w"))
    statuses.put_task(TaskStatus("a", 0, State.RUNNING, "w"))
    statuses.put_task(TaskStatus("b", 0, State.PAUSED, "w"))
    statuses.delete_connector("a")
    assert statuses.get_connector("a") is None
    assert statuses.get_tasks("a") == []
    assert statuses.get_connector("b") == ConnectorStatus("b", State.PAUSED, "w")
    assert statuses.get_tasks("b") == [TaskStatus("b", 0, State.PAUSED, "w")]


# ---- TopicStore ----------------------------------------------------------------------------


def test_topic_first_record_wins(stores: Stores) -> None:
    topics = stores.topics
    first = TopicUse("a", "orders", 0, 1000)
    assert topics.put(first) is True
    assert topics.put(TopicUse("a", "orders", 3, 2000)) is False
    assert topics.topics("a") == [first]


def test_topics_sorted_by_name(stores: Stores) -> None:
    topics = stores.topics
    for i, name in enumerate(("zebra", "apple", "mango")):
        topics.put(TopicUse("a", name, i, i))
    assert [u.topic for u in topics.topics("a")] == ["apple", "mango", "zebra"]
    assert topics.topics("nope") == []


def test_topics_reset_and_remove(stores: Stores) -> None:
    topics = stores.topics
    for name in ("t1", "t2", "t3"):
        topics.put(TopicUse("a", name, 0, 5))
    topics.put(TopicUse("b", "t1", 1, 7))
    topics.remove("a", ["t1", "t3", "absent"])
    assert [u.topic for u in topics.topics("a")] == ["t2"]
    topics.reset("a")
    assert topics.topics("a") == []
    assert topics.topics("b") == [TopicUse("b", "t1", 1, 7)]
    assert topics.put(TopicUse("a", "t1", 2, 9)) is True  # recorded anew after a reset


# ---- Stores as a whole ---------------------------------------------------------------------


def test_separate_stores_share_nothing(store_factory: StoreFactory) -> None:
    one, two = store_factory(), store_factory()
    one.configs.put_connector_config("a", {})
    one.offsets.put_many("a", offsets_entry({"p": 0}, {"o": 0}))
    one.statuses.put_connector(ConnectorStatus("a", State.RUNNING, "w"))
    one.topics.put(TopicUse("a", "t", 0, 0))
    assert two.configs.connector_names() == []
    assert two.offsets.all("a") == []
    assert two.statuses.get_connector("a") is None
    assert two.topics.topics("a") == []


def test_removing_a_connector_config_leaves_other_kinds_of_state(stores: Stores) -> None:
    stores.configs.put_connector_config("a", {})
    stores.offsets.put_many("a", offsets_entry({"p": 0}, {"o": 0}))
    stores.statuses.put_connector(ConnectorStatus("a", State.RUNNING, "w"))
    stores.topics.put(TopicUse("a", "t", 0, 0))
    stores.configs.remove_connector("a")
    assert stores.offsets.get("a", {"p": 0}) == {"o": 0}
    assert stores.statuses.get_connector("a") is not None
    assert [u.topic for u in stores.topics.topics("a")] == ["t"]
