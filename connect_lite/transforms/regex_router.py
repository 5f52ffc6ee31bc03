"""RegexRouter: renames a record's topic when the whole topic matches a regular expression."""

from __future__ import annotations

import re
from typing import Any

from connect_lite.api import ConfigDef, ConfigError, Importance, Type
from connect_lite.api.config import invalid
from connect_lite.transforms.base import (
    BuiltinTransformation,
    java_pattern,
    java_regex_problem,
    kafka_names,
    updated,
)


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
    ``$1``-style group references. Records whose topic does not match pass unchanged."""

    __connect_aliases__ = kafka_names("RegexRouter")

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

    def apply(self, record: Any) -> Any:
        match = self._pattern.fullmatch(record.topic)
        if match is None:
            return record
        return updated(record, topic=match.expand(self._replacement))
