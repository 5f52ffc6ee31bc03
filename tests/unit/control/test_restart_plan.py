"""Which instances a restart request marks RESTARTING (Kafka's RestartPlan)."""

from __future__ import annotations

import pytest

from connect_lite.control.restart_plan import restart_plan
from connect_lite.protocol.states import ConnectorStatus, State, TaskStatus

R, F, X = State.RUNNING, State.FAILED, State.RESTARTING


@pytest.mark.parametrize(
    "include_tasks, only_failed, was, connector, tasks",
    [
        (True, False, R, X, [X, X]),
        (False, True, F, X, [R, F]),
        (True, True, R, R, [R, X]),
    ],
)
def test_plan(
    include_tasks: bool, only_failed: bool, was: State, connector: State, tasks: list[State]
) -> None:
    current = ConnectorStatus("c", was, "w", "trace", "1.0")
    statuses = [TaskStatus("c", 0, R, "w"), TaskStatus("c", 1, F, "w", "boom", "1.0")]
    plan = restart_plan("source", current, statuses, include_tasks, only_failed)
    assert (plan.name, plan.type) == ("c", "source")
    assert plan.connector == ConnectorStatus("c", connector, "w", "trace", "1.0")
    assert [t.state for t in plan.tasks] == tasks
    assert plan.tasks[1] == TaskStatus("c", 1, tasks[1], "w", "boom", "1.0")
