"""Java ``.properties`` parsing, and connector files (flat JSON, request JSON, .properties)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from connect_lite.api.errors import ConfigError

_WHITESPACE = " \t\f"
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_INITIAL_STATES = ("RUNNING", "PAUSED", "STOPPED")


def parse_properties(text: str) -> dict[str, str]:
    """Parse the text of a Java ``.properties`` file, as ``java.util.Properties.load`` does.

    Comments start with ``#`` or ``!``; a key ends at the first unescaped ``=``, ``:`` or
    whitespace; a line ending in an odd number of backslashes continues on the next line
    (whose leading whitespace is dropped); escapes include ``\\uXXXX``. Trailing whitespace
    of a value is kept, as Java keeps it. A later key replaces an earlier one.
    """
    result: dict[str, str] = {}
    for line in _logical_lines(text):
        key, value = _split_key_value(line)
        result[_unescape(key)] = _unescape(value)
    return result


def load_properties(path: str | Path) -> dict[str, str]:
    """Read and parse a ``.properties`` file (UTF-8, else ISO-8859-1 as Java reads it)."""
    raw = Path(path).read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("iso-8859-1")
    return parse_properties(text)


def _natural_lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _ends_with_continuation(line: str) -> bool:
    count = len(line) - len(line.rstrip("\\"))
    return count % 2 == 1


def _logical_lines(text: str) -> list[str]:
    """Join continued lines; drop blank lines and comments."""
    lines: list[str] = []
    current: str | None = None
    for natural in _natural_lines(text):
        stripped = natural.lstrip(_WHITESPACE)
        if current is None:
            if not stripped or stripped[0] in "#!":
                continue
            current = ""
        if _ends_with_continuation(stripped):
            current += stripped[:-1]
            continue
        lines.append(current + stripped)
        current = None
    if current:  # the file ended inside a continuation: Java drops the dangling backslash
        lines.append(current)
    return lines


def _split_key_value(line: str) -> tuple[str, str]:
    """Split a logical line into its raw (still escaped) key and value."""
    key_end = len(line)
    value_start = len(line)
    has_separator = False
    escaped = False
    for i, char in enumerate(line):
        if not escaped and char in "=:":
            key_end, value_start, has_separator = i, i + 1, True
            break
        if not escaped and char in _WHITESPACE:
            key_end, value_start = i, i + 1
            break
        escaped = not escaped if char == "\\" else False
    while value_start < len(line):
        char = line[value_start]
        if char not in _WHITESPACE:
            if has_separator or char not in "=:":
                break
            has_separator = True
        value_start += 1
    return line[:key_end], line[value_start:]


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        i += 1
        if char != "\\" or i >= len(text):
            if char != "\\":
                out.append(char)
            continue
        code = text[i]
        i += 1
        if code == "u":
            digits = text[i : i + 4]
            if len(digits) != 4 or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise ConfigError("Malformed \\uxxxx encoding.")
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append(_ESCAPES.get(code, code))
    return "".join(out)


def load_connector_file(path: str | Path) -> tuple[str, dict[str, Any], str | None]:
    """Read a connector file given on the command line: ``(name, config, initial_state)``.

    Tried in Kafka's order: a flat JSON object of strings (must contain ``name``), then a
    CreateConnectorRequest JSON object (``name``, ``config``, ``initial_state``), then a Java
    ``.properties`` file (must contain ``name``). ``initial_state`` is upper-cased, or None.
    Config values are strings, or None for a JSON null (validation then reports it).
    """
    text = Path(path).read_bytes().decode("utf-8", errors="replace")
    document = _json_or_none(text)
    flat = _as_string_map(document)
    if flat is not None:
        return _named(flat, path), flat, None
    request = _as_create_request(document, path)
    if request is not None:
        return request
    props: dict[str, str | None] = dict(load_properties(path))
    return _named(props, path), props, None


@dataclass(frozen=True)
class ConnectorFile:
    """A connector file given on the command line, read and parsed (not yet validated)."""

    path: str
    name: str
    config: dict[str, Any]
    initial_state: str | None

    @classmethod
    def read(cls, path: str | Path) -> ConnectorFile:
        """Read and parse ``path`` (see ``load_connector_file``); raises OSError or ConfigError."""
        return cls(str(path), *load_connector_file(path))


def _named(config: dict[str, str | None], path: str | Path) -> str:
    name = config.get("name")
    if "name" not in config:
        raise ConfigError(
            f"Connector configuration at '{path}' is missing the mandatory 'name' configuration"
        )
    return "" if name is None else name


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _scalar_to_string(value: Any) -> str | None:
    """Jackson's coercion of a JSON scalar into a Java String; raises on objects and arrays."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    raise TypeError("not a scalar")


def _as_string_map(document: Any) -> dict[str, str | None] | None:
    if not isinstance(document, dict):
        return None
    try:
        return {key: _scalar_to_string(value) for key, value in document.items()}
    except TypeError:
        return None


def _as_create_request(
    document: Any, path: str | Path
) -> tuple[str, dict[str, str | None], str | None] | None:
    if not isinstance(document, dict):
        return None
    try:
        name = _scalar_to_string(document.get("name"))
        config = _as_string_map(document.get("config")) if "config" in document else {}
        state = _scalar_to_string(document.get("initial_state"))
    except TypeError:
        return None
    if config is None:
        return None
    if name is None:
        raise ConfigError(
            f"Connector configuration at '{path}' is missing the mandatory 'name' configuration"
        )
    if state is not None and state.upper() not in _INITIAL_STATES:
        raise ConfigError(
            f"Invalid initial_state '{state}' at '{path}': must be one of "
            + ", ".join(_INITIAL_STATES)
        )
    if "name" in config:
        if config["name"] != name:
            raise ConfigError(
                "Connector name configuration in 'config' doesn't match the one specified "
                f"in 'name' at '{path}'"
            )
    else:
        config["name"] = name
    return name, config, (state.upper() if state else None)
