"""RegexRouter: renames a record's topic when the whole topic matches a regular expression."""

from __future__ import annotations

import re
from typing import Any

from connect_lite.api import ConfigDef, ConfigError, Importance, Type
from connect_lite.api.column_form import ColumnFrame, Matches, ReplaceMatch, When
from connect_lite.api.config import invalid
from connect_lite.transforms.base import (
    BuiltinTransformation,
    java_pattern,
    java_regex_problem,
    kafka_class,
    updated,
)

TOPIC_CACHE_SIZE = 1024
_UNSEEN = object()


def java_replacement(replacement: str) -> str:
    """Translate a Java Matcher replacement (``$1``, ``${name}``, ``\\$``) to Python's syntax."""
    out: list[str] = []
    i = 0
    while i < len(replacement):
        char = replacement[i]
        if char == "\\" and i + 1 < len(replacement):
            out.append("\\\\" if replacement[i + 1] == "\\" else replacement[i + 1])
            i += 2
        elif char == "$" and replacement[i + 1 : i + 2] == "{":
            end = replacement.index("}", i)
            out.append(f"\\g<{replacement[i + 2 : end]}>")
            i = end + 1
        elif char == "$":
            match = re.match(r"\d+", replacement[i + 1 :])
            if match is None:
                raise ValueError("Illegal group reference")
            out.append(f"\\g<{match.group()}>")
            i += 1 + len(match.group())
        else:
            out.append(char.replace("\\", "\\\\"))
            i += 1
    return "".join(out)


class RegexRouter(BuiltinTransformation):
    """Kafka's RegexRouter: ``regex`` must match the whole topic; ``replacement`` may use
    ``$1``-style group references. Records whose topic does not match pass unchanged.

    The new name of each topic is remembered (up to ``TOPIC_CACHE_SIZE`` topics, then the
    memory starts over): ``Match.expand`` parses the replacement template on every call,
    which cost more than the rest of the chain, and a worker sees few topics."""

    __connect_class_name__ = kafka_class("RegexRouter")

    def config(self) -> ConfigDef:
        return (
            ConfigDef()
            .define(
                "regex",
                Type.STRING,
                validator=java_regex_problem,
                importance=Importance.HIGH,
                doc="Regular expression to use for matching.",
            )
            .define(
                "replacement", Type.STRING, importance=Importance.HIGH, doc="Replacement string."
            )
        )

    def configure(self, config: dict[str, str]) -> None:
        parsed = self.settings = self.config().parse(config)
        self._pattern = re.compile(java_pattern(parsed["regex"]))
        try:
            self._replacement = java_replacement(parsed["replacement"])
        except ValueError as error:
            raise ConfigError(invalid("replacement", parsed["replacement"], str(error))) from None
        self._routes: dict[str, str | None] = {}  # topic -> new topic, None if no match

    def apply(self, record: Any) -> Any:
        topic = record.topic
        routes = self._routes
        new_topic = routes.get(topic, _UNSEEN)  # one lookup: safe if another thread clears
        if new_topic is _UNSEEN:
            new_topic = self.route(topic)
            if len(routes) >= TOPIC_CACHE_SIZE:
                routes.clear()
            routes[topic] = new_topic
        return record if new_topic is None else updated(record, topic=new_topic)

    def column_form(self, frame: ColumnFrame, out: Any) -> ColumnFrame | None:
        regex, topic = str(self.settings["regex"]), frame.cols["topic"]
        renamed = ReplaceMatch(topic, regex, str(self.settings["replacement"]))
        return frame.with_column("topic", When(Matches(topic, regex), renamed, topic))

    def route(self, topic: str) -> str | None:
        """The new name of ``topic``, or None when the regex does not match it."""
        match = self._pattern.fullmatch(topic)
        return None if match is None else match.expand(self._replacement)
