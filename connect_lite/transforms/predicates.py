"""Kafka's built-in predicates: TopicNameMatches, HasHeaderKey and RecordIsTombstone.

A transform runs only on records its predicate matches (``transforms.<alias>.predicate``),
or only on those it does not match with ``negate=true``; Filter plus a predicate drops
records conditionally.
"""

from __future__ import annotations

import re
from typing import Any

from connect_lite.api import ConfigDef, Importance, Type
from connect_lite.api.column_form import ColumnFrame, Contains, Expr, IsNull, Matches
from connect_lite.transforms.base import (
    BuiltinPredicate,
    java_pattern,
    java_regex_problem,
    kafka_class,
    non_empty_string,
)

PREDICATES_PACKAGE = "org.apache.kafka.connect.transforms.predicates"
PATTERN = "pattern"
NAME = "name"


def predicate_class(name: str) -> str:
    """The Java class name of a Kafka predicate."""
    return kafka_class(name, PREDICATES_PACKAGE)


def _pattern_problem(name: str, value: Any) -> str | None:
    """Kafka's CompositeValidator of NonEmptyString then RegexValidator: the first error."""
    return non_empty_string(name, value) or java_regex_problem(name, value)


class TopicNameMatches(BuiltinPredicate):
    """True for records whose whole topic name matches ``pattern`` (a Java regex)."""

    __connect_class_name__ = predicate_class("TopicNameMatches")

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

    def column_condition(self, frame: ColumnFrame) -> Expr | None:
        return Matches(frame.cols["topic"], str(self.settings[PATTERN]))


class HasHeaderKey(BuiltinPredicate):
    """True for records with at least one header named ``name``."""

    __connect_class_name__ = predicate_class("HasHeaderKey")

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

    def column_condition(self, frame: ColumnFrame) -> Expr | None:
        return Contains(frame.cols["header_keys"], self._name)


class RecordIsTombstone(BuiltinPredicate):
    """True for tombstones: records whose value is null."""

    __connect_class_name__ = predicate_class("RecordIsTombstone")

    def test(self, record: Any) -> bool:
        return record.value is None

    def column_condition(self, frame: ColumnFrame) -> Expr | None:
        # the value as the chain has it so far, when it has a column
        return IsNull(frame.cols["value"]) if "value" in frame.cols else frame.cols["value_null"]
