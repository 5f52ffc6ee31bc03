"""Reading requests: JSON bodies, config maps and query parameters, as Kafka Connect does."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from flask import request

from connect_lite.api.errors import BadRequestError
from connect_lite.control.entities import ConnectorOffset, ConnectorOffsets

MAX_JSON_DEPTH = 64
"""Deepest nesting of a request body: configs are flat maps and offsets hold primitives."""
MAX_NUMBER_LENGTH = 1000
"""Longest JSON number, in characters (Jackson's default bound)."""
CREATE_FIELDS = ("name", "config", "initial_state")
OFFSETS_FIELDS = ("offsets",)
OFFSET_FIELDS = ("partition", "offset")


class JsonNumber(str):
    """A JSON number kept as the text the client sent; Jackson turns numbers into strings so."""


@dataclass(frozen=True)
class CreateConnectorRequest:
    """The body of ``POST /connectors``; the herder checks the name and the initial state."""

    name: str
    config: dict[str, str | None]
    initial_state: str | None


def json_body(required: bool = True) -> Any:
    """The request body parsed as JSON, numbers as JsonNumber; 400 if it is not valid JSON."""
    data = request.get_data(cache=True)
    if not data.strip():
        if required:
            raise BadRequestError("Request body is missing: a JSON object is required.")
        return None
    try:
        body = json.loads(
            data.decode("utf-8"),
            parse_int=_number,
            parse_float=_number,
            parse_constant=_reject_constant,
        )
    except RecursionError:
        raise _too_deep() from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise BadRequestError(f"Request body is not valid JSON: {exc}") from exc
    _check_depth(body)
    return body


def _number(text: str) -> JsonNumber:
    if len(text) > MAX_NUMBER_LENGTH:
        raise BadRequestError(
            f"Request body is not valid JSON: a number of {len(text)} digits is longer than "
            f"the {MAX_NUMBER_LENGTH} allowed"
        )
    if any(c in text for c in ".eE") and not math.isfinite(float(text)):
        raise BadRequestError(f"Request body is not valid JSON: {text} is too large for a double")
    return JsonNumber(text)


def _too_deep() -> BadRequestError:
    return BadRequestError(
        f"Request body is nested deeper than the {MAX_JSON_DEPTH} levels allowed"
    )


def _check_depth(body: Any) -> None:
    """400 for a body nested deeper than MAX_JSON_DEPTH, walked without recursion."""
    pending: list[tuple[Any, int]] = [(body, 1)]
    while pending:
        value, depth = pending.pop()
        if not isinstance(value, dict | list):
            continue
        if depth > MAX_JSON_DEPTH:
            raise _too_deep()
        children = value.values() if isinstance(value, dict) else value
        pending.extend((child, depth + 1) for child in children)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def json_object(what: str, required: bool = True) -> dict[str, Any]:
    """The body as a JSON object; an absent body is {} when not ``required``."""
    body = json_body(required)
    if body is None and not required:
        return {}
    if not isinstance(body, dict):
        raise BadRequestError(f"{what} must be a JSON object, not {kind(body)}.")
    return body


def kind(value: Any) -> str:
    """The JSON kind of a parsed value, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, JsonNumber):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def string_value(value: Any, where: str) -> str | None:
    """A scalar as a string (numbers and booleans coerced, as Jackson does); None stays None."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return str(value)  # a plain str, also for JsonNumber
    raise BadRequestError(f"{where} must be a string, not {kind(value)}.")


def config_map(value: Any, what: str = "Connector configuration") -> dict[str, str | None]:
    """A string map from a JSON object; JSON null values are kept as None."""
    if not isinstance(value, dict):
        raise BadRequestError(f"{what} must be a JSON object, not {kind(value)}.")
    return {key: string_value(v, f"The value of '{key}'") for key, v in value.items()}


def create_request() -> CreateConnectorRequest:
    """Parse ``POST /connectors``: unknown fields, a missing config and values that are not
    strings are 400s."""
    body = json_object("The request body")
    unknown = sorted(set(body) - set(CREATE_FIELDS))
    if unknown:
        raise BadRequestError(
            f'Unrecognized field "{unknown[0]}" in the request body: '
            f"known fields are {', '.join(CREATE_FIELDS)}."
        )
    if body.get("config") is None:
        raise BadRequestError("The request body has no 'config' object.")
    name = java_trim(string_value(body.get("name"), "'name'") or "")
    config = config_map(body["config"])
    return CreateConnectorRequest(
        name, config, string_value(body.get("initial_state"), "'initial_state'")
    )


def offsets_request() -> ConnectorOffsets:
    """Parse ``PATCH /connectors/{name}/offsets``: ``{"offsets": [{"partition", "offset"}]}``.

    Only the JSON shape is checked here (400s); an absent body or list is an empty request,
    which the herder refuses with Kafka's message. Numbers become int or float."""
    body = json_body(required=False)
    if body is None:
        return ConnectorOffsets([])
    if not isinstance(body, dict):
        raise BadRequestError(f"The request body must be a JSON object, not {kind(body)}.")
    _no_unknown_fields(body, OFFSETS_FIELDS, "the request body")
    entries = body.get("offsets")
    if entries is None:
        return ConnectorOffsets([])
    if not isinstance(entries, list):
        raise BadRequestError(f"'offsets' must be a JSON array, not {kind(entries)}.")
    return ConnectorOffsets([_offset_entry(entry) for entry in entries])


def _offset_entry(entry: Any) -> ConnectorOffset:
    if not isinstance(entry, dict):
        raise BadRequestError(f"Each entry of 'offsets' must be a JSON object, not {kind(entry)}.")
    _no_unknown_fields(entry, OFFSET_FIELDS, "an 'offsets' entry")
    return ConnectorOffset(_object_or_null(entry, "partition"), _object_or_null(entry, "offset"))


def _object_or_null(entry: dict[str, Any], field: str) -> dict[str, Any] | None:
    value = entry.get(field)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise BadRequestError(f"'{field}' must be a JSON object or null, not {kind(value)}.")
    return {key: plain_json(v) for key, v in value.items()}


def _no_unknown_fields(body: dict[str, Any], known: tuple[str, ...], where: str) -> None:
    unknown = sorted(set(body) - set(known))
    if unknown:
        raise BadRequestError(
            f'Unrecognized field "{unknown[0]}" in {where}: known fields are {", ".join(known)}.'
        )


def plain_json(value: Any) -> Any:
    """A parsed JSON value with JsonNumber texts turned into int or float."""
    if isinstance(value, JsonNumber):
        text = str.__str__(value)
        return float(text) if any(c in text for c in ".eE") else int(text)
    if isinstance(value, dict):
        return {key: plain_json(v) for key, v in value.items()}
    if isinstance(value, list):
        return [plain_json(v) for v in value]
    return value


def java_trim(text: str) -> str:
    """Java's String.trim(): drops leading and trailing characters up to U+0020."""
    return text.strip("".join(chr(c) for c in range(0x21)))


def bool_arg(name: str, default: bool) -> bool:
    """A boolean query parameter as Jersey reads it: true in any case, anything else false."""
    raw = request.args.get(name)
    return default if raw is None else raw.lower() == "true"
