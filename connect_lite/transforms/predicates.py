"""Kafka's built-in predicates: TopicNameMatches, HasHeaderKey and RecordIsTombstone.

A transform runs only on records its predicate matches (``transforms.<alias>.predicate``),
or only on those it does not match with ``negate=true``; Filter plus a predicate drops
records conditionally.
"""

from __future__ import annotations

import re
from typing import Any

from connect_lite import __version__
from connect_lite.api import ConfigDef, Importance, Predicate, Type
from connect_lite.api.config import invalid

PREDICATES_PACKAGE = "org.apache.kafka.connect.transforms.predicates"
PATTERN = "pattern"
NAME = "name"


def predicate_names(name: str) -> tuple[str, ...]:
    """The Java class name and the short alias of a Kafka predicate."""
    return (f"{PREDICATES_PACKAGE}.{name}", name)


def non_empty_string(name: str, value: Any) -> str | None:
    """Kafka's ``ConfigDef.NonEmptyString`` (null passes; the empty string does not)."""
    return invalid(name, value, "String must be non-empty") if value == "" else None


def java_pattern(pattern: str) -> str:
    """A Java regular expression in Python's syntax, for the constructs that differ in
    spelling only: ``\\Q...\\E`` quoting, ``(?<name>...)`` named groups and ``\\k<name>``."""
    out: list[str] = []
    i, n, in_class = 0, len(pattern), False
    while i < n:
        if pattern.startswith("\\Q", i):
            end = pattern.find("\\E", i + 2)
            end = n if end < 0 else end
            out.append(re.escape(pattern[i + 2 : end]))
            i = end + 2
            continue
        char = pattern[i]
        backref = re.match(r"\\k<(\w+)>", pattern[i:])
        if backref:
            out.append(f"(?P={backref.group(1)})")
            i += backref.end()
            continue
        if char == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if char == "[":
            in_class = True
        elif char == "]":
            in_class = False
        elif not in_class and re.match(r"\(\?<[A-Za-z]", pattern[i:]):
            out.append("(?P<")
            i += 3
            continue
        out.append(char)
        i += 1
    return "".join(out)


def java_regex_problem(name: str, value: Any) -> str | None:
    """Kafka's ``RegexValidator``: the value must compile; the message follows Java's
    ``PatternSyntaxException`` for the common mistakes."""
    if value is None:
        return None
    try:
        re.compile(java_pattern(value))
    except re.error as error:
        return invalid(name, value, "Invalid regex: " + _java_syntax_message(value, error))
    return None


def _java_syntax_message(pattern: str, error: re.error) -> str:
    pos = error.pos if error.pos is not None else -1
    if error.msg.startswith("unterminated character set"):
        desc, index = "Unclosed character class", len(pattern) - 1
    elif error.msg.startswith("missing ), unterminated subpattern"):
        desc, index = "Unclosed group", len(pattern)
    elif error.msg in ("nothing to repeat", "multiple repeat") and 0 <= pos < len(pattern):
        desc, index = f"Dangling meta character '{pattern[pos]}'", pos
    elif error.msg == "unbalanced parenthesis":
        desc, index = "Unmatched closing ')'", pos - 1
    else:
        desc, index = error.msg, pos
    text = desc + (f" near index {index}" if index >= 0 else "") + "\n" + pattern
    if 0 <= index < len(pattern):
        text += "\n" + " " * index + "^"
    return text


def _pattern_problem(name: str, value: Any) -> str | None:
    """Kafka's CompositeValidator of NonEmptyString then RegexValidator: the first error."""
    return non_empty_string(name, value) or java_regex_problem(name, value)


class _BuiltinPredicate(Predicate[Any]):
    """A built-in predicate: versioned as connect-lite, config parsed into ``self.settings``."""

    settings: dict[str, Any]

    def version(self) -> str:
        return __version__

    def config(self) -> ConfigDef:
        return ConfigDef()

    def configure(self, config: dict[str, str]) -> None:
        self.settings = self.config().parse(config)


class TopicNameMatches(_BuiltinPredicate):
    """True for records whose whole topic name matches ``pattern`` (a Java regex)."""

    __connect_aliases__ = predicate_names("TopicNameMatches")

    def config(self) -> ConfigDef:
        return ConfigDef().define(
            PATTERN,
            Type.STRING,
            validator=_pattern_problem,
            importance=Importance.MEDIUM,
            doc="A Java regular expression for matching against the name of a record's topic.",
        )

    def configure(self, config: dict[str, str]) -> None:
        super().configure(config)
        self._pattern = re.compile(java_pattern(self.settings[PATTERN]))

    def test(self, record: Any) -> bool:
        return record.topic is not None and self._pattern.fullmatch(record.topic) is not None


class HasHeaderKey(_BuiltinPredicate):
    """True for records with at least one header named ``name``."""

    __connect_aliases__ = predicate_names("HasHeaderKey")

    def config(self) -> ConfigDef:
        return ConfigDef().define(
            NAME,
            Type.STRING,
            validator=non_empty_string,
            importance=Importance.MEDIUM,
            doc="The header name.",
        )

    def configure(self, config: dict[str, str]) -> None:
        super().configure(config)
        self._name: str = self.settings[NAME]

    def test(self, record: Any) -> bool:
        return record.headers.last_with_name(self._name) is not None


class RecordIsTombstone(_BuiltinPredicate):
    """True for tombstones: records whose value is null."""

    __connect_aliases__ = predicate_names("RecordIsTombstone")

    def test(self, record: Any) -> bool:
        return record.value is None
