"""The framework's connector ConfigDefs (common, sink, source), name rules and sink cross-checks."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from connect_lite.api.config import (
    ConfigDef,
    ConfigValue,
    Importance,
    Range,
    Type,
    ValidString,
    Width,
    compiles_as_regex,
    invalid,
    non_empty_string_without_control_chars,
    valid_list,
)
from connect_lite.config.user_regex import RegexTimeoutError, UserRegex

COMMON_GROUP = "Common"
TRANSFORMS_GROUP = "Transforms"
PREDICATES_GROUP = "Predicates"
ERROR_GROUP = "Error Handling"
TOPIC_CREATION_GROUP = "Topic Creation"

CONVERTER_KINDS = ("key", "value", "header")


MAX_CONNECTOR_NAME = 249


def check_connector_name(name: str | None) -> str | None:
    """The validation error for a connector name, or None when it is fine.

    Kafka's rules (non-empty, no ISO control characters) plus ours: at most
    MAX_CONNECTOR_NAME characters (Kafka's topic name limit, as names end up in topic and group
    names), and no ``/``, which cannot appear in a REST path segment.
    """
    if name is not None and len(name) > MAX_CONNECTOR_NAME:
        shown = f"{name[:40]}... ({len(name)} characters)"
        return invalid(
            "name", shown, f"Connector name may be at most {MAX_CONNECTOR_NAME} characters"
        )
    problem = non_empty_string_without_control_chars("name", name)
    if problem:
        return problem
    if name is not None and "/" in name:
        return invalid("name", name, "Connector name may not contain '/'")
    return None


def _name_validator(name: str, value: Any) -> str | None:
    return check_connector_name(value)


def _unique_aliases(name: str, value: Any) -> str | None:
    if value is not None and len(set(value)) != len(value):
        return invalid(name, value, "Duplicate alias provided.")
    return None


def _define_common(d: ConfigDef) -> None:
    g, order = COMMON_GROUP, iter(range(1, 100))
    d.define(
        "name",
        Type.STRING,
        validator=_name_validator,
        importance=Importance.HIGH,
        doc="Globally unique name to use for this connector.",
        group=g,
        order_in_group=next(order),
        width=Width.MEDIUM,
        display_name="Connector name",
    )
    d.define(
        "connector.class",
        Type.STRING,
        importance=Importance.HIGH,
        group=g,
        doc="Name or alias of the class for this connector. Must be a subclass of "
        "SourceConnector or SinkConnector.",
        order_in_group=next(order),
        width=Width.LONG,
        display_name="Connector class",
    )
    d.define(
        "connector.plugin.version",
        Type.STRING,
        None,
        importance=Importance.MEDIUM,
        doc="Version or version range of the connector; unset or 'latest' picks the "
        "newest installed version.",
        group=g,
        order_in_group=next(order),
        width=Width.MEDIUM,
        display_name="Connector version",
    )
    d.define(
        "tasks.max",
        Type.INT,
        1,
        Range.at_least(1),
        Importance.HIGH,
        "Maximum number of tasks to use for this connector.",
        group=g,
        order_in_group=next(order),
        width=Width.SHORT,
        display_name="Tasks max",
    )
    d.define(
        "tasks.max.enforce",
        Type.BOOLEAN,
        True,
        importance=Importance.LOW,
        doc="(Deprecated) Whether to fail a connector that generates more than tasks.max tasks.",
        group=g,
        order_in_group=next(order),
        width=Width.SHORT,
        display_name="Enforce tasks max",
    )
    for kind in CONVERTER_KINDS:
        base = "HeaderConverter" if kind == "header" else "Converter"
        d.define(
            f"{kind}.converter",
            Type.CLASS,
            None,
            importance=Importance.LOW,
            doc=f"{base} class for {kind}s of this connector; overrides the worker's "
            f"{kind}.converter.",
            group=g,
            order_in_group=next(order),
            width=Width.SHORT,
            display_name=f"{kind.capitalize()} converter class",
        )
        d.define(
            f"{kind}.converter.plugin.version",
            Type.STRING,
            None,
            importance=Importance.LOW,
            doc=f"Version or version range of {kind}.converter.",
            group=g,
            order_in_group=next(order),
            width=Width.SHORT,
            display_name=f"{kind.capitalize()} converter version",
        )
    d.define(
        "config.action.reload",
        Type.STRING,
        "restart",
        ValidString.in_("none", "restart"),
        Importance.LOW,
        "What to do when external configuration providers change a value: 'none' or 'restart'.",
        group=g,
        order_in_group=next(order),
        width=Width.MEDIUM,
        display_name="Reload Action",
    )


def _define_aliases(d: ConfigDef) -> None:
    d.define(
        "transforms",
        Type.LIST,
        [],
        _unique_aliases,
        Importance.LOW,
        "Aliases for the transformations to apply to records, in order.",
        group=TRANSFORMS_GROUP,
        order_in_group=1,
        width=Width.LONG,
        display_name="Transforms",
    )
    d.define(
        "predicates",
        Type.LIST,
        [],
        _unique_aliases,
        Importance.LOW,
        "Aliases for the predicates used by transformations.",
        group=PREDICATES_GROUP,
        order_in_group=1,
        width=Width.LONG,
        display_name="Predicates",
    )


def _define_errors(d: ConfigDef) -> None:
    g, low = ERROR_GROUP, Importance.LOW
    d.define(
        "errors.retry.timeout",
        Type.LONG,
        0,
        importance=Importance.MEDIUM,
        group=g,
        doc="Maximum time in ms to retry a failed operation; 0 = no retries, -1 = forever.",
        order_in_group=1,
        width=Width.MEDIUM,
        display_name="Retry Timeout for Errors",
    )
    d.define(
        "errors.retry.delay.max.ms",
        Type.LONG,
        60000,
        importance=Importance.MEDIUM,
        doc="Maximum delay in ms between consecutive retries.",
        group=g,
        order_in_group=2,
        width=Width.MEDIUM,
        display_name="Maximum Delay Between Retries",
    )
    d.define(
        "errors.tolerance",
        Type.STRING,
        "none",
        ValidString.in_("none", "all"),
        Importance.MEDIUM,
        "'none' fails the task on the first error; 'all' skips bad records.",
        group=g,
        order_in_group=3,
        width=Width.SHORT,
        display_name="Error Tolerance",
    )
    d.define(
        "errors.log.enable",
        Type.BOOLEAN,
        False,
        importance=Importance.MEDIUM,
        doc="Log the details of every error and failed operation.",
        group=g,
        order_in_group=4,
        width=Width.SHORT,
        display_name="Log Errors",
    )
    d.define(
        "errors.log.include.messages",
        Type.BOOLEAN,
        False,
        importance=low,
        doc="Include the failing record in error logs.",
        group=g,
        order_in_group=5,
        width=Width.SHORT,
        display_name="Log Error Details",
    )


def connector_config_def() -> ConfigDef:
    """The common framework keys (Kafka's ConnectorConfig)."""
    d = ConfigDef()
    _define_common(d)
    _define_aliases(d)
    _define_errors(d)
    return d


def sink_config_def() -> ConfigDef:
    """Common keys plus the sink keys (Kafka's SinkConnectorConfig)."""
    d = connector_config_def()
    d.define(
        "topics",
        Type.LIST,
        [],
        valid_list(),
        Importance.HIGH,
        "Topics to consume; comma-separated.",
        group=COMMON_GROUP,
        order_in_group=4,
        width=Width.LONG,
        display_name="Topics",
    )
    d.define(
        "topics.regex",
        Type.STRING,
        "",
        compiles_as_regex,
        Importance.HIGH,
        "Regular expression of the topics to consume.",
        group=COMMON_GROUP,
        order_in_group=4,
        width=Width.LONG,
        display_name="Topics regex",
    )
    d.define(
        "errors.deadletterqueue.topic.name",
        Type.STRING,
        "",
        importance=Importance.MEDIUM,
        doc="Topic for records that failed in the sink; blank = no dead letter queue.",
        group=ERROR_GROUP,
        order_in_group=6,
        width=Width.MEDIUM,
        display_name="Dead Letter Queue Topic Name",
    )
    d.define(
        "errors.deadletterqueue.topic.replication.factor",
        Type.SHORT,
        3,
        importance=Importance.MEDIUM,
        doc="Replication factor of the dead letter queue topic when it is created.",
        group=ERROR_GROUP,
        order_in_group=7,
        width=Width.MEDIUM,
        display_name="Dead Letter Queue Topic Replication Factor",
    )
    d.define(
        "errors.deadletterqueue.context.headers.enable",
        Type.BOOLEAN,
        False,
        importance=Importance.MEDIUM,
        doc="Add __connect.errors.* headers with the error context to dead letter queue records.",
        group=ERROR_GROUP,
        order_in_group=8,
        width=Width.MEDIUM,
        display_name="Enable Error Context Headers",
    )
    return d


def source_config_def() -> ConfigDef:
    """Common keys plus ``topic.creation.groups`` (the source keys validate reports)."""
    d = connector_config_def()
    d.define(
        "topic.creation.groups",
        Type.LIST,
        [],
        _unique_aliases,
        Importance.LOW,
        "Groups of topic.creation.<group>.* settings for new topics; 'default' is implicit.",
        group=TOPIC_CREATION_GROUP,
        order_in_group=1,
        width=Width.LONG,
        display_name="Topic Creation Groups",
    )
    return d


def _blank(value: str | None) -> bool:
    return value is None or not value.strip()


def _add_error(values: dict[str, ConfigValue], key: str, value: Any, message: str) -> None:
    values.setdefault(key, ConfigValue(key, value)).errors.append(message)


def check_sink_config(props: Mapping[str, str | None], values: dict[str, ConfigValue]) -> None:
    """Kafka's sink cross-field rules; errors are attached to ``values`` by key."""
    topics, regex = props.get("topics"), props.get("topics.regex")
    dlq = (props.get("errors.deadletterqueue.topic.name") or "").strip()
    has_topics, has_regex = not _blank(topics), not _blank(regex)
    if has_topics and has_regex:
        message = "topics and topics.regex are mutually exclusive options, but both are set."
        _add_error(values, "topics", topics, message)
        _add_error(values, "topics.regex", regex, message)
    if not has_topics and not has_regex:
        message = "Must configure one of topics or topics.regex"
        _add_error(values, "topics", topics, message)
        _add_error(values, "topics.regex", regex, message)
    if not dlq:
        return
    topic_list = [t.strip() for t in (topics or "").split(",") if t.strip()]
    if has_topics and dlq in topic_list:
        _add_error(
            values,
            "topics",
            topics,
            f"The DLQ topic '{dlq}' may not be included in the "
            f"list of topics ('topics=[{', '.join(topic_list)}]') consumed by the connector",
        )
    if has_regex:
        _check_dlq_not_matched(regex or "", dlq, values)


def _check_dlq_not_matched(regex: str, dlq: str, values: dict[str, ConfigValue]) -> None:
    try:
        pattern = UserRegex(regex)
    except re.error:
        return  # reported by the key's own validator
    try:
        matched = pattern.full_match(dlq)
    except RegexTimeoutError:
        _add_error(values, "topics.regex", regex, pattern.timeout_message())
        return
    if matched:
        _add_error(
            values,
            "topics.regex",
            regex,
            f"The DLQ topic '{dlq}' may not be matched by "
            f"the regex for the topics ('topics.regex={regex}') consumed by the connector",
        )


def has_dlq(props: Mapping[str, str | None]) -> bool:
    return not _blank(props.get("errors.deadletterqueue.topic.name"))


def uses_topic_creation(props: Mapping[str, str | None]) -> bool:
    return any(key.startswith("topic.creation.") for key in props)


__all__ = [
    "CONVERTER_KINDS",
    "check_connector_name",
    "check_sink_config",
    "connector_config_def",
    "has_dlq",
    "sink_config_def",
    "source_config_def",
    "uses_topic_creation",
]
