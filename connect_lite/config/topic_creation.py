"""KIP-158 settings of source connectors: topic creation groups, declared and validated up front."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from connect_lite.api.config import NO_DEFAULT, ConfigDef, Importance, Type, invalid, parse_value
from connect_lite.config.framework import uses_topic_creation
from connect_lite.config.user_regex import compile_check

log = logging.getLogger(__name__)

PREFIX = "topic.creation."
DEFAULT_GROUP = "default"
GROUP_KEYS = ("include", "exclude", "replication.factor", "partitions")


@dataclass(frozen=True)
class TopicGroup:
    """One group's rules: which topics it takes, and how to create them."""

    name: str
    partitions: int
    replication_factor: int
    include: tuple[re.Pattern[str], ...] = ()
    exclude: tuple[re.Pattern[str], ...] = ()
    configs: dict[str, str] = field(default_factory=dict)

    def matches(self, topic: str) -> bool:
        """Full-match include and exclude; exclude wins; ``default`` takes every topic."""
        if self.name == DEFAULT_GROUP:
            return True
        included = any(p.fullmatch(topic) for p in self.include)
        return included and not any(p.fullmatch(topic) for p in self.exclude)


class TopicCreation:
    """The groups of one connector, in the order listed, ``default`` last."""

    def __init__(self, groups: list[TopicGroup]) -> None:
        self.groups = groups

    @classmethod
    def from_config(cls, config: Mapping[str, str]) -> TopicCreation:
        parsed = topic_creation_def(config).parse(config)
        default_rf = parsed[f"{PREFIX}default.replication.factor"]
        default_partitions = parsed[f"{PREFIX}default.partitions"]
        groups = []
        for name in group_names(config):
            prefix = f"{PREFIX}{name}."
            rf = parsed[prefix + "replication.factor"]
            partitions = parsed[prefix + "partitions"]
            groups.append(
                TopicGroup(
                    name,
                    default_partitions if partitions is None else partitions,
                    default_rf if rf is None else rf,
                    tuple(re.compile(p) for p in parsed[prefix + "include"]),
                    tuple(re.compile(p) for p in parsed[prefix + "exclude"]),
                    topic_configs(config, name),
                )
            )
        default_configs = topic_configs(config, DEFAULT_GROUP)
        groups.append(
            TopicGroup(DEFAULT_GROUP, default_partitions, default_rf, configs=default_configs)
        )
        return cls(groups)

    def group_for(self, topic: str) -> TopicGroup:
        return next(g for g in self.groups if g.matches(topic))


__all__ = [
    "TopicCreation",
    "TopicGroup",
    "group_names",
    "topic_configs",
    "topic_creation_def",
    "uses_topic_creation",
]


def group_names(props: Mapping[str, Any]) -> list[str]:
    """The listed groups in order, without duplicates, without ``default`` (always implicit)."""
    raw = props.get(PREFIX + "groups")
    listed = parse_value(_GROUPS_KEY, raw) if raw is not None else []
    names: list[str] = []
    for name in listed:
        if name == DEFAULT_GROUP:
            log.warning(
                "'default' in %sgroups is ignored: the default group is always last", PREFIX
            )
        elif name and name not in names:
            names.append(name)
    return names


def _partitions(name: str, value: Any) -> str | None:
    if value is not None and (value == 0 or value < -1):
        return invalid(
            name, value, "Number of partitions must be positive, or -1 to use the broker's default"
        )
    return None


def _replication_factor(name: str, value: Any) -> str | None:
    if value is not None and (value == 0 or value < -1):
        return invalid(
            name,
            value,
            "Replication factor must be positive and not larger than the number of brokers in "
            "the Kafka cluster, or -1 to use the broker's default",
        )
    return None


def _regex_list(name: str, value: Any) -> str | None:
    for pattern in value or []:
        problem = compile_check(pattern)
        if problem is not None:
            return invalid(name, value, f"Syntax error in regular expression: {problem}")
    return None


def topic_creation_def(props: Mapping[str, Any]) -> ConfigDef:
    """The keys of the default group and of every listed group, for validation and parsing."""
    d = ConfigDef()
    group = "Topic Creation: default"
    d.define(
        f"{PREFIX}default.replication.factor",
        Type.SHORT,
        NO_DEFAULT,
        _replication_factor,
        Importance.HIGH,
        "Replication factor of new topics; -1: the broker's default.",
        group=group,
        order_in_group=1,
    )
    d.define(
        f"{PREFIX}default.partitions",
        Type.INT,
        NO_DEFAULT,
        _partitions,
        Importance.HIGH,
        "Partitions of new topics; -1: the broker's default.",
        group=group,
        order_in_group=2,
    )
    for name in group_names(props):
        prefix, group = f"{PREFIX}{name}.", f"Topic Creation: {name}"
        d.define(
            prefix + "include",
            Type.LIST,
            [],
            _regex_list,
            Importance.MEDIUM,
            "Regular expressions (full match) of topics this group applies to.",
            group=group,
        )
        d.define(
            prefix + "exclude",
            Type.LIST,
            [],
            _regex_list,
            Importance.MEDIUM,
            "Regular expressions of topics excluded from this group; exclude wins.",
            group=group,
        )
        d.define(
            prefix + "replication.factor",
            Type.SHORT,
            None,
            _replication_factor,
            Importance.LOW,
            "Replication factor; inherited from the default group.",
            group=group,
        )
        d.define(
            prefix + "partitions",
            Type.INT,
            None,
            _partitions,
            Importance.LOW,
            "Partitions; inherited from the default group.",
            group=group,
        )
    return d


def topic_configs(props: Mapping[str, Any], name: str) -> dict[str, str]:
    """The topic-level configs of one group: every other ``topic.creation.<group>.*`` key."""
    prefix = f"{PREFIX}{name}."
    return {
        key[len(prefix) :]: str(value)
        for key, value in props.items()
        if key.startswith(prefix) and value is not None and key[len(prefix) :] not in GROUP_KEYS
    }


_GROUPS_KEY = ConfigDef().define(PREFIX + "groups", Type.LIST, []).keys[PREFIX + "groups"]
