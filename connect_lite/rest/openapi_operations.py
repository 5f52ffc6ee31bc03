"""What each REST route does, keyed by Flask endpoint, for the OpenAPI document.

Paths and path parameters come from the app's url_map (``openapi.py``); this table adds the
rest: summaries, query parameters, bodies and every status a route answers on its own. The
answers every route shares (401, 403, 500; 503 where the herder is called; 413 and 415
where a body may be sent; 400 for a bad JSON body) are added by ``openapi.py``.
A route without an entry here fails ``tests/unit/rest/test_rest_openapi.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from connect_lite.rest.openapi_schemas import STRING, Schema, array, ref

Answer = dict[str, Any]
"""An OpenAPI response object."""


@dataclass(frozen=True)
class Operation:
    """One route's description. ``herder``: it calls the herder, so it answers 503 while the
    worker starts or stops. ``links``: endpoints its 201 answer links to, with the created
    connector's name as their ``connector`` (for stateful tests and client generators)."""

    method: str
    summary: str
    responses: dict[int, Answer]
    description: str | None = None
    query: tuple[dict[str, Any], ...] = ()
    body: Schema | None = None
    herder: bool = True
    extension: bool = False
    operation_id: str | None = None
    links: tuple[str, ...] = ()


def json_answer(description: str, schema: Schema, **extra: Any) -> Answer:
    return {
        "description": description,
        "content": {"application/json": {"schema": schema}},
        **extra,
    }


def no_body(description: str) -> Answer:
    return {"description": description}


def error(description: str) -> Answer:
    """An answer with Kafka's ``{"error_code", "message"}`` body."""
    return json_answer(description, ref("ErrorMessage"))


def query(
    name: str, schema: Schema, description: str, extension: bool = False, **extra: Any
) -> dict[str, Any]:
    parameter: dict[str, Any] = {
        "name": name,
        "in": "query",
        "description": description,
        "schema": schema,
    }
    if extension:
        parameter["x-connect-lite-extension"] = True
    return {**parameter, **extra}


def flag(name: str, default: bool, description: str, extension: bool = False) -> dict[str, Any]:
    """A boolean query parameter, read as Jersey reads it."""
    text = f"{description} Only 'true' (any case) is true."
    return query(name, {"type": "boolean", "default": default}, text, extension)


CREATED = json_answer(
    "Created", ref("ConnectorInfo"), headers={"Location": {"$ref": "#/components/headers/Location"}}
)
CONNECTOR_NOT_FOUND = error("Connector {connector} not found")
UNKNOWN_CONNECTOR = error("Unknown connector {connector}")
INVALID_CONFIG = "The config is invalid (the message lists every error), or its name differs."
CONNECTOR_OPERATIONS = (
    "connectors.connector_info",
    "connectors.connector_config",
    "connectors.put_connector_config",
    "connectors.patch_connector_config",
    "connectors.connector_status",
    "connectors.task_configs",
    "connectors.pause_connector",
    "connectors.resume_connector",
    "connectors.stop_connector",
    "connectors.restart_connector",
    "connectors.delete_connector",
    "connectors.connector_offsets",
    "connectors.alter_connector_offsets",
    "connectors.reset_connector_offsets",
    "connectors.connector_topics",
    "connectors.reset_connector_topics",
    "connectors.task_status",
    "connectors.restart_task",
)
"""The operations on /connectors/{connector} a created connector links to."""
FIRST_TASK = {"connectors.task_status": "0", "connectors.restart_task": "0"}
"""Links to task operations name task 0: every connector that starts has it."""
NOT_STOPPED = "The connector is not STOPPED, or still has tasks."
STARTED_BEFORE_ANSWER = (
    "The config is validated and stored, and the connector and its tasks are started, before "
    "the answer. A connector that then fails to start keeps its config and is FAILED; the "
    "answer is a 500 (Failed to transition connector ... to state STARTED)."
)

PATH_PARAMETERS: dict[str, str] = {
    "connector": "The connector's name",
    "task": "The task's id",
    "plugin": "A plugin's class name or alias",
    "name": "A logger's name; 'root' (any case) is the root logger",
    "asset": "A file the page loads",
}
"""The description of each path parameter, by its name in the route."""

OPERATIONS: dict[str, Operation] = {
    # -- root.py ------------------------------------------------------------------------------
    "root.server_info": Operation(
        "GET", "Server info", {200: json_answer("Version, commit, cluster id", ref("ServerInfo"))}
    ),
    "root.health": Operation(
        "GET",
        "Worker health",
        {
            200: json_answer("Healthy", ref("WorkerStatus")),
            500: json_answer(
                "Unhealthy: the herder did not answer within 10 s (or an unexpected error)",
                {"anyOf": [ref("WorkerStatus"), ref("ErrorMessage")]},
            ),
            503: json_answer(
                "Starting or shutting down, or the worker cannot run tasks (Spark failed to start)",
                ref("WorkerStatus"),
            ),
        },
        herder=False,  # it asks the herder, but its 503 carries a WorkerStatus
    ),
    "root.metrics": Operation(
        "GET",
        "Metrics in Prometheus text format",
        {
            200: {
                "description": "The Prometheus text exposition",
                "content": {"text/plain": {"schema": STRING}},
            }
        },
        extension=True,
    ),
    # -- connectors.py ------------------------------------------------------------------------
    "connectors.list_connectors": Operation(
        "GET",
        "List connectors",
        {
            200: json_answer(
                "Names; with expand, an object of each connector's expansions (a connector "
                "whose status is gone is left out)",
                {
                    "oneOf": [
                        array(STRING),
                        {"type": "object", "additionalProperties": ref("ConnectorExpansions")},
                    ]
                },
            )
        },
        query=(
            query(
                "expand",
                array(STRING),
                "'status' and/or 'info'; other values are ignored.",
                style="form",
                explode=True,
            ),
        ),
    ),
    "connectors.create_connector": Operation(
        "POST",
        "Create a connector",
        {201: CREATED, 400: error(INVALID_CONFIG), 409: error("Connector {name} already exists")},
        description=STARTED_BEFORE_ANSWER,
        body=ref("CreateConnectorRequest"),
        links=CONNECTOR_OPERATIONS,
    ),
    "connectors.connector_info": Operation(
        "GET",
        "A connector's config, task ids and type",
        {200: json_answer("The connector", ref("ConnectorInfo")), 404: CONNECTOR_NOT_FOUND},
    ),
    "connectors.connector_config": Operation(
        "GET",
        "A connector's config, as stored (provider references unresolved)",
        {200: json_answer("The config", ref("ConnectorConfig")), 404: CONNECTOR_NOT_FOUND},
    ),
    "connectors.put_connector_config": Operation(
        "PUT",
        "Create or replace a connector's config",
        {
            200: json_answer("Replaced", ref("ConnectorInfo")),
            201: CREATED,
            400: error(INVALID_CONFIG),
        },
        description=STARTED_BEFORE_ANSWER,
        body=ref("ConnectorConfigRequest"),
        links=CONNECTOR_OPERATIONS,
    ),
    "connectors.patch_connector_config": Operation(
        "PATCH",
        "Merge keys into a connector's config",
        {
            200: json_answer("Updated", ref("ConnectorInfo")),
            400: error(INVALID_CONFIG),
            404: CONNECTOR_NOT_FOUND,
        },
        body=ref("ConnectorConfigPatch"),
    ),
    "connectors.connector_status": Operation(
        "GET",
        "A connector's and its tasks' states",
        {
            200: json_answer("The states", ref("ConnectorStateInfo")),
            404: error("No status found for connector {connector}"),
        },
    ),
    "connectors.task_configs": Operation(
        "GET",
        "A connector's task configs",
        {200: json_answer("The tasks", array(ref("TaskInfo"))), 404: CONNECTOR_NOT_FOUND},
    ),
    "connectors.task_status": Operation(
        "GET",
        "One task's state",
        {
            200: json_answer("The task's state", ref("TaskState")),
            404: error("No status found for task {connector}-{task}, or not a 32-bit id"),
        },
    ),
    "connectors.pause_connector": Operation(
        "PUT", "Pause a connector", {202: no_body("Pausing"), 404: UNKNOWN_CONNECTOR}
    ),
    "connectors.resume_connector": Operation(
        "PUT",
        "Resume a paused or stopped connector",
        {202: no_body("Resuming"), 404: UNKNOWN_CONNECTOR},
    ),
    "connectors.stop_connector": Operation(
        "PUT",
        "Stop a connector and its tasks, keeping its config",
        {204: no_body("Stopped"), 404: UNKNOWN_CONNECTOR},
    ),
    "connectors.restart_connector": Operation(
        "POST",
        "Restart a connector, and with includeTasks its tasks",
        {
            202: json_answer(
                "The restart plan: what restarts shows RESTARTING", ref("ConnectorStateInfo")
            ),
            204: no_body("Restarted (neither includeTasks nor onlyFailed)"),
            404: error("Connector {connector} not found, or it has no status yet"),
        },
        query=(
            flag("includeTasks", False, "Restart the tasks too."),
            flag("onlyFailed", False, "Restart only what has FAILED."),
        ),
    ),
    "connectors.restart_task": Operation(
        "POST",
        "Restart one task",
        {
            204: no_body("Restarted"),
            404: error("Connector {connector} or task {connector}-{task} not found"),
        },
    ),
    "connectors.delete_connector": Operation(
        "DELETE",
        "Delete a connector",
        {204: no_body("Deleted"), 404: CONNECTOR_NOT_FOUND},
        query=(
            flag(
                "includeOffsets",
                False,
                "Also reset its offsets, as DELETE .../offsets does; if that fails, nothing "
                "is deleted.",
                extension=True,
            ),
        ),
    ),
    "connectors.connector_offsets": Operation(
        "GET",
        "A connector's offsets (KIP-875)",
        {
            200: json_answer(
                "Source offsets, or the sink's group offsets", ref("ConnectorOffsets")
            ),
            404: CONNECTOR_NOT_FOUND,
            500: error("The offsets could not be read"),
        },
    ),
    "connectors.alter_connector_offsets": Operation(
        "PATCH",
        "Alter a stopped connector's offsets (KIP-875)",
        {
            200: json_answer("Altered", ref("Message")),
            400: error(f"{NOT_STOPPED} Or no offsets, or an entry the connector type refuses."),
            404: CONNECTOR_NOT_FOUND,
            500: error("The connector or the consumer group refused the change"),
        },
        body=ref("OffsetsRequest"),
    ),
    "connectors.reset_connector_offsets": Operation(
        "DELETE",
        "Reset a stopped connector's offsets (KIP-875)",
        {
            200: json_answer("Reset", ref("Message")),
            400: error(NOT_STOPPED),
            404: CONNECTOR_NOT_FOUND,
        },
    ),
    "connectors.connector_topics": Operation(
        "GET",
        "The topics a connector has used (KIP-558); empty for an unknown name",
        {
            200: json_answer("The topics", ref("ActiveTopics")),
            403: error("Topic tracking is disabled."),
        },
    ),
    "connectors.reset_connector_topics": Operation(
        "PUT",
        "Forget the topics a connector has used (KIP-558)",
        {
            202: no_body("Forgotten"),
            403: error("Topic tracking is disabled, or its reset is."),
        },
    ),
    # -- plugins.py ---------------------------------------------------------------------------
    "plugins.list_plugins": Operation(
        "GET",
        "Installed plugins",
        {200: json_answer("One entry per class and version", array(ref("PluginInfo")))},
        query=(flag("connectorsOnly", True, "Only sink and source connectors."),),
    ),
    "plugins.plugin_config": Operation(
        "GET",
        "A plugin's config keys",
        {
            200: json_answer("The keys", array(ref("ConfigKeyInfo"))),
            400: error("Invalid version specification, or no installed version matches"),
            404: error("Unknown plugin {plugin}."),
        },
        query=(query("version", STRING, "A version or range (KIP-891); default: the latest."),),
    ),
    "plugins.validate_config": Operation(
        "PUT",
        "Validate a connector config",
        {
            200: json_answer("Validation errors are inside the answer", ref("ConfigInfos")),
            400: error(
                "No connector.class, an unknown class or version, or a class that does not "
                "match {plugin}"
            ),
        },
        body=ref("ConnectorConfigRequest"),
    ),
    # -- loggers.py ---------------------------------------------------------------------------
    "loggers.list_loggers": Operation(
        "GET",
        "Every logger's level",
        {
            200: json_answer(
                "By logger name", {"type": "object", "additionalProperties": ref("LoggerLevel")}
            )
        },
        herder=False,
    ),
    "loggers.get_logger": Operation(
        "GET",
        "One logger's level",
        {200: json_answer("Its level", ref("LoggerLevel")), 404: error("Logger {name} not found.")},
        herder=False,
    ),
    "loggers.set_level": Operation(
        "PUT",
        "Set the level of a logger and its descendants",
        {
            200: json_answer("The loggers whose level changed, sorted", array(STRING)),
            204: no_body("Set (scope=cluster)"),
            400: error("Desired 'level' parameter was not specified in request."),
            404: error("invalid log level '{level}'. (a 404, as in Kafka)"),
        },
        query=(query("scope", STRING, "'worker' (default) or 'cluster' (any case): 204."),),
        body=ref("LoggerLevelRequest"),
        herder=False,
    ),
    # -- openapi.py ---------------------------------------------------------------------------
    "openapi.openapi_document": Operation(
        "GET",
        "This document",
        {200: json_answer("OpenAPI 3.1", {"type": "object"})},
        herder=False,
        extension=True,
    ),
    # -- ui.py (the status page) --------------------------------------------------------------
    "ui.page": Operation(
        "GET",
        "The status page",
        {
            200: {"description": "The page", "content": {"text/html": {"schema": STRING}}},
            304: no_body("Not modified (If-None-Match)"),
            308: no_body("Redirect from /ui/ to /ui"),
        },
        herder=False,
        extension=True,
        operation_id="ui_page",
    ),
    "ui.asset": Operation(
        "GET",
        "A script, style sheet or icon of the status page",
        {
            200: {
                "description": "The file",
                "content": {
                    media: {"schema": STRING}
                    for media in ("text/javascript", "text/css", "image/svg+xml")
                },
            },
            304: no_body("Not modified (If-None-Match)"),
            404: error("Not a file of the page"),
        },
        herder=False,
        extension=True,
        operation_id="ui_asset",
    ),
}
"""Every route's description, by Flask endpoint name."""
