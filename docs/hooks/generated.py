"""MkDocs hook: fills each ``<!-- generated: NAME -->`` line of a page from the code, at build time.

So the reference tables cannot drift from what they describe: the worker keys come from the
worker's ConfigDef, the connector keys from the framework's ConfigDefs, and the REST API
reference from the app's OpenAPI document, built without starting a worker. A marker with an
unknown name fails the build.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from connect_lite.api.config import ConfigDef, ConfigKey, format_value
from connect_lite.config import framework
from connect_lite.config.worker import WORKER_CONFIG_DEF, worker_config_markdown
from connect_lite.rest.app import create_app
from connect_lite.rest.openapi import EXTENSION, document

MARKER = re.compile(r"^( *)<!-- generated: ([\w-]+) -->$", re.M)
"""A marker line; what replaces it is indented as the marker is (inside a list item)."""


def cell(text: object) -> str:
    """Text for a Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def key_row(key: ConfigKey) -> str:
    """One row of a key table, in the layout of ``worker_config_markdown``."""
    if key.required:
        default = "*required*"
    else:
        text = format_value(key.type, key.default)
        default = "*unset*" if text is None else f"`{text}`" if text else '`""`'
    return f"| `{key.name}` | {key.type.value} | {default} | {cell(key.doc)} |"


def key_table(keys: Iterable[ConfigKey]) -> str:
    rows = ["| key | type | default | description |", "|---|---|---|---|"]
    return "\n".join([*rows, *(key_row(key) for key in keys)]) + "\n"


def connector_keys() -> str:
    """The keys every connector takes (the framework's common ConfigDef)."""
    return key_table(framework.connector_config_def().keys.values())


def _added_keys(extended: ConfigDef) -> list[ConfigKey]:
    common = framework.connector_config_def().keys
    return [key for name, key in extended.keys.items() if name not in common]


def source_keys() -> str:
    """The keys only source connectors take."""
    return key_table(_added_keys(framework.source_config_def()))


def sink_keys() -> str:
    """The keys only sink connectors take."""
    return key_table(_added_keys(framework.sink_config_def()))


def new_worker_keys() -> str:
    """A list of the worker keys Kafka's standalone worker does not have."""
    names = [key for key in WORKER_CONFIG_DEF.keys if key not in KAFKA_WORKER_KEYS]
    return "".join(f"- `{name}`\n" for name in names)


KAFKA_WORKER_KEYS = frozenset(
    {
        "bootstrap.servers",
        "listeners",
        "ssl.keystore.type",
        "ssl.keystore.location",
        "ssl.keystore.password",
        "ssl.key.password",
        "ssl.truststore.type",
        "ssl.truststore.location",
        "ssl.truststore.password",
        "ssl.client.auth",
        "rest.extension.classes",
        "access.control.allow.origin",
        "access.control.allow.methods",
        "rest.advertised.host.name",
        "rest.advertised.port",
        "plugin.path",
        "config.providers",
        "offset.flush.interval.ms",
        "offset.flush.timeout.ms",
        "task.shutdown.graceful.timeout.ms",
        "key.converter",
        "key.converter.plugin.version",
        "value.converter",
        "value.converter.plugin.version",
        "header.converter",
        "header.converter.plugin.version",
        "connector.client.config.override.policy",
        "connector.client.config.override.allowlist",  # Kafka 4.2 (KIP-1188)
        "org.apache.kafka.sasl.oauthbearer.allowed.urls",
        "topic.creation.enable",
        "topic.tracking.enable",
        "topic.tracking.allow.reset",
    }
)
"""The keys of connect-lite's worker config that Kafka's standalone worker (4.x) has too
(``org.apache.kafka.sasl.oauthbearer.allowed.urls`` is a JVM system property there)."""


# The REST API reference, from the OpenAPI document.

_RESPONSES = "#/components/responses/"
_SCHEMAS = "#/components/schemas/"


def rest_api() -> str:
    """Every operation (parameters, body, answers), then every schema."""
    doc = document(create_app(None, None))  # type: ignore[arg-type]  # the document needs none
    out = [f"Version {doc['info']['version']}, OpenAPI {doc['openapi']}.\n"]
    for path, item in doc["paths"].items():
        shared = item.get("parameters", [])
        for method, operation in item.items():
            if method != "parameters":
                out.append(_operation(method, path, operation, shared, doc))
    out.append("## Schemas\n")
    out += [_schema_section(name, schema) for name, schema in doc["components"]["schemas"].items()]
    return "\n".join(out)


def _operation(
    method: str,
    path: str,
    operation: Mapping[str, Any],
    shared: list[Mapping[str, Any]],
    doc: Mapping[str, Any],
) -> str:
    lines = [f"### {method.upper()} {path}\n", operation["summary"] + "."]
    if operation.get(EXTENSION):
        lines[-1] += " *A connect-lite extension.*"
    if operation.get("description"):
        lines.append(" ".join(operation["description"].split()))
    lines.append("")
    parameters = [*shared, *operation.get("parameters", [])]
    if parameters:
        lines += ["| parameter | in | type | description |", "|---|---|---|---|"]
        for p in parameters:
            extension = " *(extension)*" if p.get(EXTENSION) else ""
            lines.append(
                f"| `{p['name']}` | {p['in']} | {_type(p.get('schema', {}))} "
                f"| {cell(p.get('description', ''))}{extension} |"
            )
        lines.append("")
    body = operation.get("requestBody")
    if body:
        lines += [f"Body: {_content(body)}.", ""]
    lines += ["| status | answer | body |", "|---|---|---|"]
    for status, answer in operation["responses"].items():
        if "$ref" in answer:
            answer = doc["components"]["responses"][answer["$ref"].removeprefix(_RESPONSES)]
        lines.append(f"| {status} | {cell(answer['description'])} | {_content(answer)} |")
    return "\n".join(lines) + "\n"


def _content(part: Mapping[str, Any]) -> str:
    """The schema of a request body or an answer, with its media type unless it is JSON."""
    content = part.get("content") or {}
    return ", ".join(
        _type(media["schema"]) + ("" if kind == "application/json" else f" (`{kind}`)")
        for kind, media in content.items()
    )


def _type(schema: Mapping[str, Any]) -> str:
    """A schema, in a few words, with a link to a named one."""
    if "$ref" in schema:
        name = schema["$ref"].removeprefix(_SCHEMAS)
        return f"[{name}](#{name.lower()})"
    if "anyOf" in schema or "oneOf" in schema:
        return " or ".join(_type(s) for s in schema.get("anyOf", schema.get("oneOf", [])))
    if "enum" in schema:
        return " \\| ".join(f"`{value}`" for value in schema["enum"])
    kind = schema.get("type", "any")
    if isinstance(kind, list):
        return " or ".join(kind)
    if kind == "array":
        return f"array of {_type(schema.get('items', {}))}"
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        return f"map of {_type(schema['additionalProperties'])}"
    return str(kind)


def _schema_section(name: str, schema: Mapping[str, Any]) -> str:
    lines = [f"### {name}\n"]
    if schema.get("description"):
        lines += [" ".join(schema["description"].split()), ""]
    properties: Mapping[str, Mapping[str, Any]] = schema.get("properties", {})
    if properties:
        required = set(schema.get("required", ()))
        lines += ["| field | type | required | description |", "|---|---|---|---|"]
        for field, spec in properties.items():
            lines.append(
                f"| `{field}` | {_type(spec)} | {'yes' if field in required else ''} "
                f"| {cell(spec.get('description', ''))} |"
            )
        lines.append("")
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        text = cell(extra.get("description", ""))
        lines += [f"Other keys: {_type(extra)}. {text}".rstrip(), ""]
    return "\n".join(lines)


GENERATORS: dict[str, Callable[[], str]] = {
    "worker-keys": worker_config_markdown,
    "new-worker-keys": new_worker_keys,
    "connector-keys": connector_keys,
    "source-keys": source_keys,
    "sink-keys": sink_keys,
    "rest-api": rest_api,
}


def generate(markdown: str) -> str:
    """``markdown`` with each marker replaced by what its generator writes."""

    def fill(marker: re.Match[str]) -> str:
        indent, name = marker.groups()
        if name not in GENERATORS:
            raise KeyError(f"<!-- generated: {name} -->: no such generator in {__file__}")
        lines = GENERATORS[name]().splitlines()
        return "\n".join(indent + line if line else line for line in lines)

    return MARKER.sub(fill, markdown)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """MkDocs calls this with each page's Markdown before rendering it."""
    return generate(markdown)
