"""The JSON shapes of the REST API as OpenAPI 3.1 components: bodies, answers, errors.

Each schema says what ``render.py`` writes and ``parsing.py`` reads. Objects Kafka may grow
keep ``additionalProperties`` open; request objects whose unknown fields are a 400 close it.
"""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]


def ref(name: str) -> Schema:
    """A reference to the component schema ``name``."""
    return {"$ref": f"#/components/schemas/{name}"}


def nullable(schema: Schema) -> Schema:
    """``schema`` or JSON null."""
    return {"anyOf": [schema, {"type": "null"}]}


def array(items: Schema) -> Schema:
    return {"type": "array", "items": items}


def obj(required: dict[str, Schema], optional: dict[str, Schema] | None = None) -> Schema:
    """An object with these required and optional properties; other keys are allowed."""
    schema: Schema = {"type": "object", "properties": {**required, **(optional or {})}}
    if required:
        schema["required"] = list(required)
    return schema


STRING: Schema = {"type": "string"}
STRING_MAP: Schema = {"type": "object", "additionalProperties": STRING}
STATES = ["UNASSIGNED", "RUNNING", "PAUSED", "FAILED", "RESTARTING", "STOPPED"]
CONNECTOR_TYPES = ["source", "sink", "unknown"]
PLUGIN_TYPES = ["sink", "source", "converter", "header_converter", "transformation", "predicate"]
INITIAL_STATES = ["RUNNING", "PAUSED", "STOPPED"]
COUNTER_EXAMPLE = {"connector.class": "CounterSource", "topic": "counter", "interval.ms": "1000"}
"""A config that works on any worker: the built-in demo counter (a record a second)."""

CONFIG_VALUE: Schema = {
    "type": ["string", "number", "boolean", "null"],
    "description": "A string. As in Kafka, numbers and booleans are taken as their JSON text. "
    "A JSON null is reported as an error on its key (or, in a PATCH, removes the key).",
}
PRIMITIVE: Schema = {"type": ["string", "number", "boolean", "null"]}


def _state(id_field: dict[str, Schema], extra: dict[str, Schema] | None = None) -> Schema:
    """A connector's or task's state: ``trace`` only when it failed with one; ``extra``
    are connect-lite's own optional fields."""
    return obj(
        {
            **id_field,
            "state": {"type": "string", "enum": STATES},
            "worker_id": {"type": "string", "description": "host:port of the worker"},
            "version": {
                "type": ["string", "null"],
                "description": "The running instance's version (KIP-891); null when no "
                "instance exists.",
            },
        },
        {"trace": {"type": "string", "description": "The failure's stack trace"}, **(extra or {})},
    )


def _config_request(description: str, require_class: bool) -> Schema:
    schema: Schema = {
        "type": "object",
        "description": description,
        "additionalProperties": CONFIG_VALUE,
    }
    if require_class:
        schema["required"] = ["connector.class"]
    return schema


SCHEMAS: dict[str, Schema] = {
    "ErrorMessage": {
        **obj({"error_code": {"type": "integer"}, "message": {"type": ["string", "null"]}}),
        "description": "Every error: error_code is the HTTP status.",
    },
    "ServerInfo": obj(
        {
            "version": STRING,
            "commit": STRING,
            "kafka_cluster_id": {"type": ["string", "null"]},
        }
    ),
    "WorkerStatus": obj(
        {
            "status": {"type": "string", "enum": ["healthy", "starting", "unhealthy"]},
            "message": STRING,
        }
    ),
    "ConnectorConfig": {**STRING_MAP, "description": "A stored config: every value a string."},
    "ConnectorTaskId": obj({"connector": STRING, "task": {"type": "integer"}}),
    "ConnectorInfo": obj(
        {
            "name": STRING,
            "config": ref("ConnectorConfig"),
            "tasks": array(ref("ConnectorTaskId")),
            "type": {"type": "string", "enum": CONNECTOR_TYPES},
        }
    ),
    "TaskInfo": obj({"id": ref("ConnectorTaskId"), "config": STRING_MAP}),
    "ConnectorState": _state(
        {},
        {
            "details": {
                "type": "object",
                "description": "connect-lite's: what the connector last said it holds in the "
                "system it connects to, e.g. retained_wal_bytes of a PostgreSQL CDC "
                "connector's replication slot (sampled every 30 s, in any state)",
                "additionalProperties": {"type": ["integer", "number", "string"]},
            }
        },
    ),
    "TaskState": _state({"id": {"type": "integer"}}, {"spark_last_batch": ref("SparkLastBatch")}),
    "SparkLastBatch": {
        **obj(
            {
                "scheduler_pool": {
                    "type": "string",
                    "description": "The Spark scheduler pool (FAIR mode) its jobs ran in",
                },
                "executors": {
                    "type": ["integer", "null"],
                    "minimum": 0,
                    "description": "How many executors ran its Spark tasks; null until "
                    "Spark's status store has the batch",
                },
                "executor_ids": {
                    "anyOf": [array(STRING), {"type": "null"}],
                    "description": "Their executor ids (driver in local mode)",
                },
            }
        ),
        "description": "connect-lite's own (Kafka's clients ignore it): where the last "
        "batch of a task running on this worker ran on Spark. Only in a connector's status.",
    },
    "ConnectorStateInfo": obj(
        {
            "name": STRING,
            "connector": ref("ConnectorState"),
            "tasks": {**array(ref("TaskState")), "description": "Sorted by id"},
            "type": {"type": "string", "enum": CONNECTOR_TYPES},
        }
    ),
    "ConnectorExpansions": obj(
        {},
        {"status": ref("ConnectorStateInfo"), "info": ref("ConnectorInfo")},
    ),
    "ActiveTopics": {
        "type": "object",
        "description": "KIP-558: the connector's name is the only key.",
        "minProperties": 1,
        "maxProperties": 1,
        "additionalProperties": obj({"topics": array(STRING)}),
    },
    "ConnectorOffset": obj(
        {"partition": {"type": "object"}, "offset": {"type": ["object", "null"]}}
    ),
    "ConnectorOffsets": obj({"offsets": array(ref("ConnectorOffset"))}),
    "Message": obj({"message": STRING}),
    "PluginInfo": obj(
        {"class": STRING, "type": {"type": "string", "enum": PLUGIN_TYPES}},
        {"version": {"type": "string", "description": "Absent when the plugin has none"}},
    ),
    "ConfigKeyInfo": obj(
        {
            "name": STRING,
            "type": {
                "type": "string",
                "enum": [
                    *("BOOLEAN", "STRING", "INT", "SHORT", "LONG", "DOUBLE"),
                    *("LIST", "CLASS", "PASSWORD"),
                ],
            },
            "required": {"type": "boolean"},
            "default_value": {"type": ["string", "null"]},
            "importance": {"type": "string", "enum": ["HIGH", "MEDIUM", "LOW"]},
            "documentation": {"type": ["string", "null"]},
            "group": {"type": ["string", "null"]},
            "order_in_group": {"type": "integer"},
            "width": {"type": "string", "enum": ["NONE", "SHORT", "MEDIUM", "LONG"]},
            "display_name": STRING,
            "dependents": array(STRING),
        }
    ),
    "ConfigValueInfo": obj(
        {
            "name": STRING,
            "value": {"type": ["string", "null"]},
            "recommended_values": array(STRING),
            "errors": array(STRING),
            "visible": {"type": "boolean"},
        }
    ),
    "ConfigInfo": obj(
        {"definition": nullable(ref("ConfigKeyInfo")), "value": nullable(ref("ConfigValueInfo"))}
    ),
    "ConfigInfos": obj(
        {
            "name": {"type": "string", "description": "connector.class as given"},
            "error_count": {"type": "integer", "minimum": 0},
            "groups": array(STRING),
            "configs": array(ref("ConfigInfo")),
        }
    ),
    "LoggerLevel": obj(
        {
            "level": STRING,
            "last_modified": {
                "type": ["integer", "null"],
                "description": "Epoch milliseconds of the last change through this API; null "
                "until then.",
            },
        }
    ),
    # -- request bodies ---------------------------------------------------------------------
    "CreateConnectorRequest": {
        "type": "object",
        "additionalProperties": False,
        "required": ["name", "config"],
        "properties": {
            "name": {
                "type": ["string", "number", "boolean"],
                "minLength": 1,
                "maxLength": 249,
                "description": "Trimmed; may not contain '/' or control characters. As in Kafka, "
                "a number or boolean is taken as its JSON text.",
            },
            "config": _config_request("The connector's config", require_class=True),
            "initial_state": {
                "type": ["string", "null"],
                "enum": [*INITIAL_STATES, None],
                "description": "Any case; absent or null means RUNNING.",
            },
        },
        "examples": [{"name": "counter", "config": COUNTER_EXAMPLE}],
    },
    "ConnectorConfigRequest": {
        **_config_request(
            "A full connector config; a 'name' in it must be the connector's.", require_class=True
        ),
        "examples": [COUNTER_EXAMPLE],
    },
    "ConnectorConfigPatch": _config_request(
        "Keys to set; a JSON null removes the key.", require_class=False
    ),
    "OffsetsRequest": {
        "type": "object",
        "additionalProperties": False,
        "required": ["offsets"],
        "properties": {
            "offsets": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "partition": {
                            "type": ["object", "null"],
                            "additionalProperties": PRIMITIVE,
                        },
                        "offset": {
                            "type": ["object", "null"],
                            "additionalProperties": PRIMITIVE,
                            "description": "null (or absent) removes the partition's offset",
                        },
                    },
                },
            }
        },
    },
    "LoggerLevelRequest": obj(
        {
            "level": {
                "type": "string",
                "description": "A log4j level, any case: OFF, FATAL, ERROR, WARN, INFO, DEBUG, "
                "TRACE or ALL (another is a 404, as in Kafka).",
            }
        }
    ),
}
"""``components.schemas``: Kafka Connect's entities, named as in Kafka's sources."""

SECURITY_SCHEMES: dict[str, Schema] = {
    "basicAuth": {
        "type": "http",
        "scheme": "basic",
        "description": "Needed on every route only when the worker sets "
        "rest.basic.auth.credentials.file; otherwise the API takes no credentials.",
    }
}

HEADERS: dict[str, Schema] = {
    "Location": {
        "description": "The absolute URL of the connector",
        "schema": {"type": "string", "format": "uri"},
    }
}
"""``components.headers``."""
