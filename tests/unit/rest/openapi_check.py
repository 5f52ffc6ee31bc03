"""Checking a real answer against the app's OpenAPI document: status, media type and body."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask import Flask
from werkzeug.test import TestResponse

from connect_lite.rest.openapi import document, openapi_path

DOCUMENT_URI = "urn:connect-lite:openapi"


def conforms(app: Flask, response: TestResponse) -> None:
    """The answer's status is documented for its operation, with its media type (or no
    body), and its JSON body validates against the documented schema."""
    request = response.request
    rule, _ = app.url_map.bind("localhost").match(
        request.path, method=request.method, return_rule=True
    )
    template = openapi_path(rule.rule)
    answer = documented_answer(app, template, request.method, response.status_code)
    content = answer.get("content")
    if content is None:
        assert response.data == b"", f"{request.method} {request.path}: a body, none documented"
        return
    assert response.mimetype in content, f"{request.method} {request.path}: {response.mimetype}"
    if response.mimetype == "application/json":
        validate_body(app, template, request.method, response.status_code, response.get_json())


def documented_answer(app: Flask, template: str, method: str, status: int) -> dict[str, Any]:
    """The response object documented for ``status``, its ``$ref`` followed."""
    answers = document(app)["paths"][template][method.lower()]["responses"]
    assert str(status) in answers, f"{method} {template}: {status} is not documented"
    answer: dict[str, Any] = answers[str(status)]
    if "$ref" in answer:
        name = answer["$ref"].rsplit("/", 1)[-1]
        answer = document(app)["components"]["responses"][name]
    return answer


def validate_body(app: Flask, template: str, method: str, status: int, body: Any) -> None:
    """Validate ``body`` against the JSON schema documented for this answer (JSON Schema
    2020-12, the dialect of OpenAPI 3.1), with the components' ``$ref``s resolved."""
    jsonschema = pytest.importorskip("jsonschema")
    referencing = pytest.importorskip("referencing")
    specification = pytest.importorskip("referencing.jsonschema").DRAFT202012
    doc = document(app)
    answer = documented_answer(app, template, method, status)
    schema = answer["content"]["application/json"]["schema"]
    resource = referencing.Resource.from_contents(doc, default_specification=specification)
    registry = referencing.Registry().with_resource(DOCUMENT_URI, resource)
    validator = jsonschema.Draft202012Validator(_relocated(schema), registry=registry)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(body)]
    assert not errors, f"{method} {template} {status}: {errors}\n{json.dumps(body)[:500]}"


def _relocated(schema: Any) -> Any:
    """``schema`` with each local reference made absolute, into the stored document."""
    if isinstance(schema, dict):
        return {
            key: DOCUMENT_URI + value
            if key == "$ref" and isinstance(value, str) and value.startswith("#")
            else _relocated(value)
            for key, value in schema.items()
        }
    if isinstance(schema, list):
        return [_relocated(item) for item in schema]
    return schema
