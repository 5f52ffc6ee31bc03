"""ConfigDef: a configuration declared once, driving parsing, validation, defaults and docs."""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from connect_lite.api.errors import ConfigError


class Type(enum.Enum):
    """The type of a configuration value, as Kafka's ConfigDef names it."""

    BOOLEAN = "BOOLEAN"
    STRING = "STRING"
    INT = "INT"
    SHORT = "SHORT"
    LONG = "LONG"
    DOUBLE = "DOUBLE"
    LIST = "LIST"
    CLASS = "CLASS"
    PASSWORD = "PASSWORD"


class Importance(enum.Enum):
    HIGH = "HIGH"
    MEDIUM = "MEDIUM"
    LOW = "LOW"


class Width(enum.Enum):
    NONE = "NONE"
    SHORT = "SHORT"
    MEDIUM = "MEDIUM"
    LONG = "LONG"


def _sqlite_path(url: str) -> str | None:
    """The file a JDBC URL names, if it is an SQLite file's (None for other databases and for
    in-memory SQLite, ``jdbc:sqlite::memory:`` exactly)."""
    if not url.lower().startswith("jdbc:sqlite:"):
        return None
    rest = url[len("jdbc:sqlite:") :].split("?", 1)[0]
    if rest.startswith("file:"):
        rest = rest[len("file:") :]
    return None if rest == ":memory:" else rest


def _url_files(url: str) -> list[str]:
    """The files a JDBC URL's parameters name (PostgreSQL's TLS key and certificates)."""
    query = url.split("?", 1)[1] if "?" in url else ""
    found = []
    for item in query.split("&"):
        key, _, value = item.partition("=")
        if key in ("sslrootcert", "sslcert", "sslkey") and value:
            found.append(value)
    return found


class LocalPath(enum.Enum):
    """Marks a key whose value names files on the worker's machine (``ConfigDef.define(...,
    local_path=...)``). The worker holds every such value to ``connector.allowed.paths``: a
    path outside it is an error on the key in validate, and the connector or task that would
    use it fails at start.

    ``PATH``: the value is a path (a LIST key: each item is one). ``URL``: the value is a URL,
    local when its scheme is ``file`` or when it has none (a plain path); other schemes
    (``s3a://``, ``hdfs://``) are not bounded. ``JDBC``: the value is a JDBC URL, local when
    it names an SQLite file (``jdbc:sqlite:/path/file.db``, ``jdbc:sqlite:file:/path``; only
    ``jdbc:sqlite::memory:`` names none), or the key and certificate files of a PostgreSQL
    URL's ``sslrootcert``, ``sslcert`` and ``sslkey``; other parts of a URL are not local."""

    PATH = "PATH"
    URL = "URL"
    JDBC = "JDBC"

    def paths(self, value: Any) -> list[str]:
        """The local paths that ``value`` (raw or parsed) names; blank names none."""
        items = value if isinstance(value, list | tuple) else [value]
        found: list[str] = []
        for item in items:
            text = "" if item is None else str(item).strip()
            if not text:
                continue
            if self is LocalPath.JDBC:
                path = _sqlite_path(text)
                found.extend([path] if path is not None else _url_files(text))
                continue
            if self is LocalPath.URL:
                scheme, sep, rest = text.partition("://")
                if sep and len(scheme) >= 2:  # "c://" is no scheme: a drive-like path
                    if scheme.lower() != "file":
                        continue
                    host, slash, path = rest.partition("/")
                    text = slash + path if host in ("", "localhost") else "//" + rest
            found.append(text)
        return found


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()
"""Marks a key as required: it has no default value."""

_INT_BOUNDS = {
    Type.SHORT: (-(2**15), 2**15 - 1),
    Type.INT: (-(2**31), 2**31 - 1),
    Type.LONG: (-(2**63), 2**63 - 1),
}


def prefixed(props: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """The keys under ``prefix``, with the prefix stripped; None values are left out."""
    n = len(prefix)
    return {k[n:]: v for k, v in props.items() if k.startswith(prefix) and v is not None}


def java_str(value: Any) -> str:
    """Render a value the way Kafka's Java code prints it in messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(java_str(v) for v in value) + "]"
    if isinstance(value, type):
        return f"{value.__module__}.{value.__qualname__}"
    return str(value)


def invalid(name: str, value: Any, message: str) -> str:
    """Kafka's ``ConfigException(name, value, message)`` text."""
    return f"Invalid value {java_str(value)} for configuration {name}: {message}"


class Validator(Protocol):
    """Checks a parsed value; returns an error message or None."""

    def __call__(self, name: str, value: Any) -> str | None: ...


class Recommender(Protocol):
    """Recommends values for a key and decides whether it is visible."""

    def valid_values(self, name: str, parsed: Mapping[str, Any]) -> list[Any]: ...

    def visible(self, name: str, parsed: Mapping[str, Any]) -> bool: ...


@dataclass(frozen=True)
class Range:
    """A numeric range, inclusive at both ends; either end may be open."""

    min: float | None = None
    max: float | None = None

    @staticmethod
    def at_least(minimum: float) -> Range:
        return Range(minimum, None)

    @staticmethod
    def between(minimum: float, maximum: float) -> Range:
        return Range(minimum, maximum)

    def __call__(self, name: str, value: Any) -> str | None:
        if value is None:
            return invalid(name, None, "Value must be non-null")
        if self.min is not None and value < self.min:
            return invalid(name, value, f"Value must be at least {_num(self.min)}")
        if self.max is not None and value > self.max:
            return invalid(name, value, f"Value must be no more than {_num(self.max)}")
        return None


def _num(n: float) -> str:
    return str(int(n)) if float(n).is_integer() else str(n)


@dataclass(frozen=True)
class ValidString:
    """The value must be one of a fixed set of strings."""

    values: tuple[str, ...]
    case_sensitive: bool = True

    @staticmethod
    def in_(*values: str) -> ValidString:
        return ValidString(tuple(values))

    @staticmethod
    def in_ignore_case(*values: str) -> ValidString:
        return ValidString(tuple(values), case_sensitive=False)

    def __call__(self, name: str, value: Any) -> str | None:
        if value is None and self.case_sensitive:
            return invalid(name, None, "String must be one of: " + ", ".join(self.values))
        if self.case_sensitive:
            ok = value in self.values
            text = "String must be one of: " + ", ".join(self.values)
        else:
            ok = value is not None and str(value).upper() in {v.upper() for v in self.values}
            text = "String must be one of (case insensitive): " + ", ".join(self.values)
        return None if ok else invalid(name, value, text)


def non_empty_string(name: str, value: Any) -> str | None:
    """The value must be a non-empty string."""
    if value is None or value == "":
        return invalid(name, value if value is not None else "", "String may not be empty")
    return None


def control_codes(text: str) -> list[int]:
    """The ISO control characters (C0, DEL, C1) in ``text``, as code points."""
    return [ord(c) for c in text if ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F]


def non_empty_string_without_control_chars(name: str, value: Any) -> str | None:
    """Kafka's NonEmptyStringWithoutControlChars, used for connector names."""
    problem = non_empty_string(name, value)
    if problem:
        return problem
    codes = [str(code) for code in control_codes(value)]
    if codes:
        return invalid(
            name,
            value,
            "String may not contain control sequences but had the following ASCII chars: "
            + ", ".join(codes),
        )
    return None


def valid_list(allow_empty: bool = True) -> Validator:
    """A list without duplicates and, unless allowed, not empty (KIP-1161)."""

    def check(name: str, value: Any) -> str | None:
        if value is None:
            return None
        if len(set(value)) != len(value):
            return f"Configuration '{name}' values must not be duplicated."
        if not allow_empty and not value:
            return f"Configuration '{name}' values must not be empty."
        return None

    return check


def compiles_as_regex(name: str, value: Any) -> str | None:
    """The value, if set, must be a valid regular expression."""
    if not value:
        return None
    try:
        re.compile(value)
    except (re.error, OverflowError) as exc:  # OverflowError: a repetition count too large
        return invalid(name, value, f"Syntax error in regular expression: {exc}")
    except RecursionError:
        return invalid(name, value, "Syntax error in regular expression: too many nested groups")
    return None


@dataclass
class ConfigKey:
    """One declared configuration key."""

    name: str
    type: Type
    default: Any = NO_DEFAULT
    validator: Validator | None = None
    importance: Importance = Importance.MEDIUM
    doc: str = ""
    recommender: Recommender | None = None
    display_name: str | None = None
    group: str | None = None
    order_in_group: int = -1
    width: Width = Width.NONE
    dependents: list[str] = field(default_factory=list)
    local_path: LocalPath | None = None
    """Set when the value names local files: bounded by the worker's connector.allowed.paths."""

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT

    @property
    def required(self) -> bool:
        return not self.has_default

    def info(self) -> dict[str, Any]:
        """The ``ConfigKeyInfo`` JSON entity."""
        return {
            "name": self.name,
            "type": self.type.value,
            "required": self.required,
            "default_value": format_value(self.type, self.default) if self.has_default else None,
            "importance": self.importance.value,
            "documentation": self.doc,
            "group": self.group,
            "order_in_group": self.order_in_group,
            "width": self.width.value,
            "display_name": self.display_name or self.name,
            "dependents": list(self.dependents),
        }


@dataclass
class ConfigValue:
    """The result of validating one key: parsed value, errors and recommendations."""

    name: str
    value: Any = None
    recommended_values: list[Any] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    visible: bool = True

    def info(self, type_: Type | None = None) -> dict[str, Any]:
        """The ``ConfigValueInfo`` JSON entity."""
        fmt: Callable[[Any], str | None] = (
            (lambda v: format_value(type_, v)) if type_ is not None else _plain
        )
        return {
            "name": self.name,
            "value": fmt(self.value),
            "recommended_values": [fmt(v) for v in self.recommended_values],
            "errors": list(self.errors),
            "visible": self.visible,
        }


def _plain(value: Any) -> str | None:
    return None if value is None else java_str(value) if not isinstance(value, str) else value


def format_value(type_: Type, value: Any) -> str | None:
    """Stringify a parsed value as Kafka does in REST output."""
    if value is None:
        return None
    if type_ is Type.PASSWORD:
        return "[hidden]"
    if type_ is Type.LIST:
        return ",".join(str(v) for v in value) if isinstance(value, list | tuple) else str(value)
    if type_ is Type.BOOLEAN:
        return "true" if value else "false"
    if type_ is Type.CLASS and isinstance(value, type):
        return java_str(value)
    return str(value)


def parse_value(key: ConfigKey, raw: Any) -> Any:
    """Parse one value by the key's type; raise ValueError with Kafka's message."""
    if raw is None:
        return None
    t = key.type
    if t is Type.BOOLEAN:
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("true", "false"):
            return text == "true"
        raise ValueError(invalid(key.name, raw, "Expected value to be either true or false"))
    if t in _INT_BOUNDS:
        number = _java_integer(raw)
        low, high = _INT_BOUNDS[t]
        if number is None or not low <= number <= high:
            raise ValueError(invalid(key.name, raw, f"Not a number of type {t.value}"))
        return number
    if t is Type.DOUBLE:
        double = _java_double(raw)
        if double is None:
            raise ValueError(invalid(key.name, raw, "Not a number of type DOUBLE"))
        return double
    if t is Type.LIST:
        if isinstance(raw, list | tuple):
            return [str(v) for v in raw]
        text = str(raw).strip()
        return [] if not text else [part.strip() for part in text.split(",")]
    if isinstance(raw, str):
        return raw.strip() if t is Type.CLASS else raw
    return raw


_JAVA_INTEGER = re.compile(r"[+-]?\d+")
_JAVA_DOUBLE = re.compile(
    r"[+-]?(?:NaN|Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)[fFdD]?"
)


def _java_integer(raw: Any) -> int | None:
    """An integer as Java's ``Long.parseLong`` reads the trimmed text (no ``_`` separators,
    which Python's ``int`` allows); None if it is not one."""
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    text = str(raw).strip()
    if len(text) > 40 or not _JAVA_INTEGER.fullmatch(text):  # 40: far past any long
        return None
    return int(text)


def _java_double(raw: Any) -> float | None:
    """A number as Java's ``Double.parseDouble`` reads the trimmed decimal text (``NaN``,
    ``Infinity``, an ``f``/``d`` suffix; not Python's ``inf``, ``nan`` or ``1_0``); None if
    it is not one."""
    if isinstance(raw, int | float):
        return float(raw)
    text = str(raw).strip()
    if not _JAVA_DOUBLE.fullmatch(text):
        return None
    text = text.rstrip("fFdD").replace("Infinity", "inf")
    return float(text)


class ConfigDef:
    """A declaration of configuration keys, in definition order."""

    def __init__(self, keys: Iterable[ConfigKey] = ()) -> None:
        self._keys: dict[str, ConfigKey] = {}
        for key in keys:
            self._keys[key.name] = key

    def define(
        self,
        name: str,
        type: Type,
        default: Any = NO_DEFAULT,
        validator: Validator | None = None,
        importance: Importance = Importance.MEDIUM,
        doc: str = "",
        recommender: Recommender | None = None,
        display_name: str | None = None,
        group: str | None = None,
        order_in_group: int = -1,
        width: Width = Width.NONE,
        dependents: list[str] | None = None,
        local_path: LocalPath | None = None,
    ) -> ConfigDef:
        """Declare a key; returns self so calls chain. ``local_path`` marks a key whose value
        names files on the worker's machine (see :class:`LocalPath`)."""
        if name in self._keys:
            raise ValueError(f"Configuration {name} is defined twice.")
        self._keys[name] = ConfigKey(
            name,
            type,
            default,
            validator,
            importance,
            doc,
            recommender,
            display_name,
            group,
            order_in_group,
            width,
            list(dependents or []),
            local_path,
        )
        return self

    @property
    def keys(self) -> dict[str, ConfigKey]:
        return self._keys

    def names(self) -> list[str]:
        return list(self._keys)

    def groups(self) -> list[str]:
        seen: list[str] = []
        for key in self._keys.values():
            if key.group and key.group not in seen:
                seen.append(key.group)
        return seen

    def merged(self, other: ConfigDef) -> ConfigDef:
        """A new ConfigDef with this one's keys, then the other's (the other wins on clashes)."""
        merged = ConfigDef(self._keys.values())
        for key in other.keys.values():
            merged._keys[key.name] = key
        return merged

    def validate(self, props: Mapping[str, Any]) -> dict[str, ConfigValue]:
        """Validate every declared key; never raises for bad values."""
        parsed: dict[str, Any] = {}
        values: dict[str, ConfigValue] = {}
        for key in self._keys.values():
            cv = ConfigValue(key.name)
            values[key.name] = cv
            if key.name in props:
                raw = props[key.name]
            elif key.has_default:
                raw = key.default
            else:
                cv.errors.append(
                    f'Missing required configuration "{key.name}" which has no default value.'
                )
                parsed[key.name] = None
                continue
            try:
                cv.value = parse_value(key, raw)
            except ValueError as exc:
                cv.errors.append(str(exc))
                cv.value = None
            parsed[key.name] = cv.value
            if key.validator is not None:
                problem = key.validator(key.name, cv.value)
                if problem:
                    cv.errors.append(problem)
            if key.type is Type.PASSWORD and isinstance(raw, str) and raw:
                cv.errors = [e.replace(raw, "[hidden]") for e in cv.errors]
        for key in self._keys.values():
            if key.recommender is not None:
                cv = values[key.name]
                try:
                    cv.recommended_values = list(key.recommender.valid_values(key.name, parsed))
                    cv.visible = key.recommender.visible(key.name, parsed)
                except Exception as exc:  # a recommender must never break validation
                    cv.errors.append(str(exc))
        return values

    def parse(self, props: Mapping[str, Any]) -> dict[str, Any]:
        """Parse and validate; raise ConfigError listing every problem."""
        values = self.validate(props)
        errors = {name: cv.errors for name, cv in values.items() if cv.errors}
        if errors:
            lines = [msg for msgs in errors.values() for msg in msgs]
            raise ConfigError("\n".join(lines), errors)
        return {name: cv.value for name, cv in values.items()}

    def key_infos(self) -> list[dict[str, Any]]:
        return [key.info() for key in self._keys.values()]


__all__ = [
    "NO_DEFAULT",
    "ConfigDef",
    "ConfigKey",
    "ConfigValue",
    "Importance",
    "Range",
    "Recommender",
    "Type",
    "ValidString",
    "Validator",
    "Width",
    "compiles_as_regex",
    "format_value",
    "invalid",
    "java_str",
    "non_empty_string",
    "non_empty_string_without_control_chars",
    "parse_value",
    "prefixed",
    "valid_list",
]
