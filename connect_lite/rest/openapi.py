"""``GET /openapi.json``: an OpenAPI 3.1 document of every route, built from the app's url_map.

The paths, methods and path parameters are read from the url_map, so they cannot drift from
the routes; what each route does comes from ``openapi_operations.OPERATIONS``, and the
shapes from ``openapi_schemas``. ``problems(app)`` lists every route the table does not
describe, and every description of a route the app does not have.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Flask, Response, current_app
from werkzeug.routing import BaseConverter, IntegerConverter, PathConverter, Rule, UnicodeConverter

from connect_lite import __version__
from connect_lite.rest import render
from connect_lite.rest.openapi_operations import (
    FIRST_TASK,
    OPERATIONS,
    PATH_PARAMETERS,
    Answer,
    Operation,
    error,
)
from connect_lite.rest.openapi_schemas import HEADERS, SCHEMAS, SECURITY_SCHEMES, Schema

bp = Blueprint("openapi", __name__)

DOCUMENT = "connect_lite.rest.openapi"
"""Where an app keeps its document, in ``app.extensions``, once built."""

UNDOCUMENTED_METHODS = frozenset({"HEAD", "OPTIONS"})  # answered by Flask for every route
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
EXTENSION = "x-connect-lite-extension"
_VARIABLE = re.compile(r"<(?:[^<>:]+:)?([A-Za-z_][A-Za-z0-9_]*)>")

DESCRIPTION = f"""\
Kafka Connect's REST API (4.x) as the connect-lite standalone worker serves it.

Operations and parameters that Kafka Connect does not have are connect-lite extensions, \
marked `{EXTENSION}: true`. Every error is `{{"error_code", "message"}}` (ErrorMessage), also \
for an unknown route (404) and a method a path does not serve (405). Credentials (HTTP basic) \
are needed only when the worker sets `rest.basic.auth.credentials.file`."""

SharedAnswer = tuple[int, str, str]
"""A status many routes answer with an ErrorMessage: code, component name, description."""

SHARED_ANSWERS: tuple[SharedAnswer, ...] = (
    (401, "Unauthorized", "No or wrong credentials (only with rest.basic.auth.credentials.file)."),
    (
        403,
        "Forbidden",
        "A Host header that is not a loopback name, on a loopback listener; or a browser's "
        "change (POST, PUT, PATCH, DELETE) from another site whose origin CORS does not allow.",
    ),
    (500, "ServerError", "An unexpected error, or an operation that timed out."),
)
HERDER_ANSWER: SharedAnswer = (503, "Unavailable", "The worker is starting or shutting down.")
BODY_ANSWERS: tuple[SharedAnswer, ...] = (
    (413, "PayloadTooLarge", "The body is larger than rest.max.request.bytes."),
    (415, "UnsupportedMediaType", "The body is not application/json."),
)
BAD_BODY: SharedAnswer = (
    400,
    "BadBody",
    "The body is not valid JSON, is nested too deep, or has the wrong JSON types.",
)
ALL_SHARED = (*SHARED_ANSWERS, HERDER_ANSWER, *BODY_ANSWERS, BAD_BODY)


class UndescribedRouteError(Exception):
    """The app serves a route that ``OPERATIONS`` does not describe (or the reverse)."""


@bp.get("/openapi.json")
def openapi_document() -> Response:
    return render.json_response(document(current_app))


def document(app: Flask) -> dict[str, Any]:
    """The app's OpenAPI document, built on first use and kept for the app's life."""
    built: dict[str, Any] | None = app.extensions.get(DOCUMENT)
    if built is None:
        built = app.extensions[DOCUMENT] = build(app)
    return built


def routes(app: Flask) -> Iterator[tuple[Rule, str]]:
    """Every rule of the app with each method it serves, but Flask's own (static files,
    HEAD and OPTIONS)."""
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static" or rule.endpoint.endswith(".static"):
            continue
        for method in sorted((rule.methods or set()) - UNDOCUMENTED_METHODS):
            yield rule, method


def problems(app: Flask) -> list[str]:
    """Each route of the app without a description, each description of a route the app
    does not serve (optional ones aside), and each path parameter nobody describes."""
    found = []
    served = set()
    for rule, method in routes(app):
        served.add(rule.endpoint)
        where = f"{method} {rule.rule} (endpoint {rule.endpoint})"
        operation = OPERATIONS.get(rule.endpoint)
        if operation is None:
            found.append(f"{where} has no description in openapi_operations.OPERATIONS")
        elif operation.method != method:
            found.append(f"{where} is described as {operation.method}")
        for name, converter in _converters(rule).items():
            if name not in PATH_PARAMETERS:
                found.append(f"{where}: path parameter {name} has no description")
            if _parameter_schema(converter) is None:
                found.append(f"{where}: no schema for the converter of {name}")
    for endpoint in OPERATIONS.keys() - served:
        found.append(f"OPERATIONS describes {endpoint}, which the app does not serve")
    ids = [_operation_id(endpoint) for endpoint in OPERATIONS]
    found += [f"operationId {i} is not unique" for i in sorted(set(ids)) if ids.count(i) > 1]
    return found


def build(app: Flask) -> dict[str, Any]:
    """The OpenAPI document of ``app``; UndescribedRouteError if ``problems`` finds any."""
    found = problems(app)
    if found:
        raise UndescribedRouteError("; ".join(found))
    served = {rule.endpoint for rule, _ in routes(app)}
    paths: dict[str, dict[str, Any]] = {}
    for rule, method in routes(app):
        item = paths.setdefault(openapi_path(rule.rule), {})
        parameters = [_path_parameter(name, c) for name, c in _converters(rule).items()]
        if parameters:
            item["parameters"] = parameters
        item[method.lower()] = _operation(rule.endpoint, OPERATIONS[rule.endpoint], served)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "connect-lite REST API",
            "version": __version__,
            "description": DESCRIPTION,
            "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"},
        },
        "security": [{}, {"basicAuth": []}],  # {}: no credentials, when auth is off
        "paths": paths,
        "components": {
            "schemas": copy.deepcopy(SCHEMAS),
            "responses": {name: error(text) for _, name, text in ALL_SHARED},
            "headers": copy.deepcopy(HEADERS),
            "securitySchemes": copy.deepcopy(SECURITY_SCHEMES),
        },
    }


def openapi_path(rule: str) -> str:
    """``/connectors/<connector>/tasks/<int(signed=True):task>`` as
    ``/connectors/{connector}/tasks/{task}``."""
    return _VARIABLE.sub(r"{\1}", rule)


def _converters(rule: Rule) -> dict[str, BaseConverter]:
    # Rule keeps its parsed converters in _converters; the url_map exposes them nowhere else.
    return dict(rule._converters)


def _parameter_schema(converter: BaseConverter) -> Schema | None:
    if isinstance(converter, IntegerConverter):
        schema: Schema = {"type": "integer"}
        minimum = converter.min if converter.min is not None or converter.signed else 0
        if minimum is not None:
            schema["minimum"] = minimum
        if converter.max is not None:
            schema["maximum"] = converter.max
        return schema
    if isinstance(converter, PathConverter | UnicodeConverter):
        return {"type": "string", "minLength": 1}
    return None


def _path_parameter(name: str, converter: BaseConverter) -> dict[str, Any]:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "description": PATH_PARAMETERS[name],
        "schema": _parameter_schema(converter),
    }


def _operation_id(endpoint: str) -> str:
    operation = OPERATIONS[endpoint]
    return operation.operation_id or endpoint.rsplit(".", 1)[-1]


def _operation(endpoint: str, operation: Operation, served: set[str]) -> dict[str, Any]:
    described: dict[str, Any] = {
        "operationId": _operation_id(endpoint),
        "tags": [endpoint.split(".", 1)[0]],
        "summary": operation.summary,
    }
    if operation.description:
        described["description"] = operation.description
    if operation.extension:
        described[EXTENSION] = True
    if operation.query:
        described["parameters"] = copy.deepcopy(list(operation.query))
    if operation.body is not None:
        described["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": copy.deepcopy(operation.body)}},
        }
    responses = _responses(operation)
    links = {
        _operation_id(target): {
            "operationId": _operation_id(target),
            "parameters": {
                "connector": "$response.body#/name",
                **({"task": FIRST_TASK[target]} if target in FIRST_TASK else {}),
            },
        }
        for target in operation.links
        if target in served
    }
    if links:
        responses["201"]["links"] = links
    described["responses"] = responses
    return described


def _responses(operation: Operation) -> dict[str, Answer]:
    """The operation's own answers, and references to those it shares with others; a shared
    status the operation also names keeps the operation's body, with both descriptions."""
    shared = list(SHARED_ANSWERS)
    if operation.herder:
        shared.append(HERDER_ANSWER)
    if operation.method in BODY_METHODS:
        shared += BODY_ANSWERS
    if operation.body is not None:
        shared.append(BAD_BODY)
    answers = copy.deepcopy(operation.responses)
    for code, name, description in shared:
        if code in answers:
            own = answers[code]["description"].rstrip(".")
            answers[code]["description"] = f"{own}. {description}"
        else:
            answers[code] = {"$ref": f"#/components/responses/{name}"}
    return {str(code): answers[code] for code in sorted(answers)}
