"""One create reads the connector config once (does it exist?) and no task configs back."""

from __future__ import annotations

import pytest

from connect_lite.protocol.states import TargetState
from tests.unit.control.real_herder import HerderParts

COUNTER = {"connector.class": "CounterSource", "topic": "t", "tasks.max": "1"}


def test_one_create_reads_the_config_once_and_no_task_configs(parts: HerderParts) -> None:
    info = parts.herder.create_connector("c", dict(COUNTER))
    reads = {k: v for k, v in parts.configs.calls.items() if k.startswith("get_")}
    assert reads == {"get_connector_config": 1}  # does it exist already?
    (task,) = parts.configs.inner.get_task_configs("c")
    assert task == {**COUNTER, "name": "c", "task.class": task["task.class"]}
    assert parts.started == [("c", 0, task, TargetState.RUNNING)]
    assert info.tasks == [0] and info.config == {**COUNTER, "name": "c"}


@pytest.mark.parametrize("state", [None, "PAUSED", "STOPPED"])
def test_a_create_answers_what_a_read_gives(parts: HerderParts, state: str | None) -> None:
    herder = parts.herder
    assert herder.create_connector("c", dict(COUNTER), state) == herder.connector_info("c")


def test_a_put_answers_what_a_read_gives(parts: HerderParts) -> None:
    herder = parts.herder
    created, info = herder.put_connector_config("c", dict(COUNTER))
    assert created and info == herder.connector_info("c")
    herder.pause_connector("c")
    created, info = herder.put_connector_config("c", {**COUNTER, "topic": "u"})
    assert not created and info == herder.connector_info("c") and info.tasks == [0]
    assert [s[3] for s in parts.started] == [TargetState.RUNNING]  # paused: none started
