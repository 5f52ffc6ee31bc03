"""Rendering what the herder returns into Kafka Connect's exact JSON shapes."""

from __future__ import annotations

from typing import Any

from flask import Response, current_app, json

from connect_lite.control.entities import (
    ConfigInfos,
    ConnectorInfo,
    ConnectorOffsets,
    ConnectorStateInfo,
    ConnectorStatus,
    LastBatch,
    Message,
    ServerInfo,
    TaskInfo,
    TaskStatus,
    WorkerHealth,
)
from connect_lite.logs.loggers import LoggerLevel
from connect_lite.plugins.types import PluginDesc

UNDEFINED_VERSION = "undefined"


def json_response(body: Any, status: int = 200) -> Response:
    """A JSON response with ``application/json`` as its content type."""
    return current_app.response_class(
        json.dumps(body) + "\n", status=status, mimetype="application/json"
    )


def empty(status: int) -> Response:
    """A response without a body (and so without a content type), such as 202 or 204."""
    response = current_app.response_class(status=status)
    del response.headers["Content-Type"]
    return response


def server_info(info: ServerInfo) -> dict[str, Any]:
    return {
        "version": info.version,
        "commit": info.commit,
        "kafka_cluster_id": info.kafka_cluster_id,
    }


def worker_status(health: WorkerHealth) -> dict[str, Any]:
    return {"status": health.status, "message": health.message}


def task_id(connector: str, task: int) -> dict[str, Any]:
    return {"connector": connector, "task": task}


def connector_info(info: ConnectorInfo) -> dict[str, Any]:
    return {
        "name": info.name,
        "config": info.config,
        "tasks": [task_id(info.name, task) for task in info.tasks],
        "type": info.type,
    }


def task_info(info: TaskInfo) -> dict[str, Any]:
    return {"id": task_id(info.connector, info.task), "config": info.config}


def _state(state: str, worker_id: str, trace: str | None, version: str | None) -> dict[str, Any]:
    rendered: dict[str, Any] = {"state": state, "worker_id": worker_id}
    if trace:
        rendered["trace"] = trace
    rendered["version"] = version
    return rendered


def connector_state(status: ConnectorStatus) -> dict[str, Any]:
    return _state(status.state.value, status.worker_id, status.trace, status.version)


def task_state(status: TaskStatus, last_batch: LastBatch | None = None) -> dict[str, Any]:
    state = _state(status.state.value, status.worker_id, status.trace, status.version)
    rendered = {"id": status.task, **state}
    if last_batch is not None:  # an extra field: Kafka's clients ignore unknown ones
        rendered["spark_last_batch"] = spark_last_batch(last_batch)
    return rendered


def spark_last_batch(batch: LastBatch) -> dict[str, Any]:
    ids = batch.executor_ids
    return {
        "scheduler_pool": batch.pool,
        "executors": batch.executors,
        "executor_ids": None if ids is None else list(ids),
    }


def connector_state_info(info: ConnectorStateInfo) -> dict[str, Any]:
    connector = connector_state(info.connector)
    if info.details:  # an extra field: Kafka's clients ignore unknown ones
        connector["details"] = dict(info.details)
    return {
        "name": info.name,
        "connector": connector,
        "tasks": [
            task_state(task, info.last_batches.get(task.task))
            for task in sorted(info.tasks, key=lambda t: t.task)
        ],
        "type": info.type,
    }


def plugin_info(plugin: PluginDesc) -> dict[str, Any]:
    rendered = {"class": plugin.class_name, "type": plugin.type.value}
    if plugin.version != UNDEFINED_VERSION:
        rendered["version"] = plugin.version
    return rendered


def config_infos(infos: ConfigInfos) -> dict[str, Any]:
    return {
        "name": infos.name,
        "error_count": infos.error_count,
        "groups": infos.groups,
        "configs": infos.configs,
    }


def logger_level(level: LoggerLevel) -> dict[str, Any]:
    return {"level": level.level, "last_modified": level.last_modified}


def connector_offsets(offsets: ConnectorOffsets) -> dict[str, Any]:
    return {"offsets": [{"partition": o.partition, "offset": o.offset} for o in offsets.offsets]}


def message(answer: Message) -> dict[str, Any]:
    return {"message": answer.message}


def active_topics(connector: str, topics: list[str]) -> dict[str, Any]:
    """KIP-558's answer: the connector name is the key, not a field."""
    return {connector: {"topics": list(topics)}}
