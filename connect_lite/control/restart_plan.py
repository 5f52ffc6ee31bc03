"""Kafka's RestartPlan: the statuses a restart request gives a connector and its tasks."""

from __future__ import annotations

import dataclasses

from connect_lite.control.entities import ConnectorStateInfo
from connect_lite.protocol.states import ConnectorStatus, State, TaskStatus


def restart_plan(
    connector_type: str,
    current: ConnectorStatus,
    tasks: list[TaskStatus],
    include_tasks: bool,
    only_failed: bool,
) -> ConnectorStateInfo:
    """The connector's statuses with RESTARTING for each instance the request restarts:
    the connector and, with ``include_tasks``, its tasks; with ``only_failed``, only the
    FAILED ones."""

    def selected(state: State) -> bool:
        return not only_failed or state is State.FAILED

    connector = current
    if selected(current.state):
        connector = dataclasses.replace(current, state=State.RESTARTING)
    planned = [
        dataclasses.replace(task, state=State.RESTARTING)
        if include_tasks and selected(task.state)
        else task
        for task in tasks
    ]
    return ConnectorStateInfo(current.connector, connector_type, connector, planned)
