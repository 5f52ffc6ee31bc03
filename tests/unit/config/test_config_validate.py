"""Connector config validation: the /config/validate answer and the create/update 400 text."""

from __future__ import annotations

import time
from typing import Any

import pytest
from config_fakes import JSON, FakePlugins

from connect_lite.api.errors import BadRequestError, NotFoundError
from connect_lite.config import user_regex
from connect_lite.config.framework import check_connector_name
from connect_lite.config.validation import (
    ensure_valid_connector_config,
    invalid_config_message,
    plugin_config_keys,
    validate_connector_config,
)
from connect_lite.config.worker import WorkerConfig
from connect_lite.control.entities import ConfigInfos
from connect_lite.kafka.clients import librdkafka_refusal

SOURCE = {"name": "src", "connector.class": "FileSource", "file": "/tmp/in.txt"}
SINK = {"name": "snk", "connector.class": "PickySink", "topics": "a,b"}


def validate(plugins: FakePlugins, worker: WorkerConfig, config: dict[str, Any]) -> ConfigInfos:
    return validate_connector_config(plugins, worker, config)


def value(infos: ConfigInfos, name: str) -> dict[str, Any]:
    return next(c["value"] for c in infos.configs if c["value"] and c["value"]["name"] == name)


def definition(infos: ConfigInfos, name: str) -> dict[str, Any]:
    return next(c["definition"] for c in infos.configs if c["value"]["name"] == name)


def errors(infos: ConfigInfos, name: str) -> list[str]:
    return list(value(infos, name)["errors"])


def all_errors(infos: ConfigInfos) -> list[str]:
    return [e for c in infos.configs if c["value"] for e in c["value"]["errors"]]


def test_valid_source(plugins: FakePlugins, worker: WorkerConfig) -> None:
    infos = validate(plugins, worker, SOURCE)
    assert infos.name == "FileSource"
    assert infos.error_count == 0, all_errors(infos)
    assert value(infos, "file")["value"] == "/tmp/in.txt"
    assert value(infos, "tasks.max")["value"] == "1"
    assert definition(infos, "tasks.max")["default_value"] == "1"


def test_groups_order_source_and_sink(plugins: FakePlugins, worker: WorkerConfig) -> None:
    source = validate(
        plugins, worker, {**SOURCE, "transforms": "t", "transforms.t.type": "AddField"}
    )
    assert source.groups == [
        "Common",
        "Transforms",
        "Predicates",
        "Error Handling",
        "Topic Creation",
        "Transforms: t",
        "File",
    ]
    sink = validate(plugins, worker, SINK)
    assert sink.groups == ["Common", "Transforms", "Predicates", "Error Handling", "File"]


def test_configs_order(plugins: FakePlugins, worker: WorkerConfig) -> None:
    infos = validate(plugins, worker, {**SOURCE, "unknown.key": None, "ignored": "x"})
    names = [c["value"]["name"] for c in infos.configs]
    assert names[0] == "unknown.key"  # values without definitions come first
    assert infos.configs[0]["definition"] is None
    assert names[1:5] == ["name", "connector.class", "connector.plugin.version", "tasks.max"]
    assert names[-2:] == ["file", "batch.size"]  # the connector's keys follow the framework's
    assert "ignored" not in names  # supplied but undeclared keys do not appear
    assert "topic.creation.groups" in names and "topics" not in names


def test_missing_required_keys(plugins: FakePlugins, worker: WorkerConfig) -> None:
    infos = validate(plugins, worker, {"connector.class": "FileSource"})
    assert errors(infos, "name") == [
        'Missing required configuration "name" which has no default value.'
    ]
    assert errors(infos, "file") == [
        'Missing required configuration "file" which has no default value.'
    ]
    assert infos.error_count == 2


def test_tasks_max_abc_gives_two_errors(plugins: FakePlugins, worker: WorkerConfig) -> None:
    infos = validate(plugins, worker, {**SOURCE, "tasks.max": "abc"})
    assert errors(infos, "tasks.max") == [
        "Invalid value abc for configuration tasks.max: Not a number of type INT",
        "Invalid value null for configuration tasks.max: Value must be non-null",
    ]
    assert infos.error_count == 2


def test_tasks_max_zero(plugins: FakePlugins, worker: WorkerConfig) -> None:
    infos = validate(plugins, worker, {**SOURCE, "tasks.max": "0"})
    assert errors(infos, "tasks.max") == [
        "Invalid value 0 for configuration tasks.max: Value must be at least 1"
    ]


def test_errors_tolerance_enum(plugins: FakePlugins, worker: WorkerConfig) -> None:
    infos = validate(plugins, worker, {**SOURCE, "errors.tolerance": "ALL"})
    assert errors(infos, "errors.tolerance") == [
        "Invalid value ALL for configuration errors.tolerance: String must be one of: none, all"
    ]
    assert validate(plugins, worker, {**SOURCE, "errors.tolerance": "all"}).error_count == 0


def test_sink_topics_and_regex_both(plugins: FakePlugins, worker: WorkerConfig) -> None:
    infos = validate(plugins, worker, {**SINK, "topics.regex": "a.*"})
    message = "topics and topics.regex are mutually exclusive options, but both are set."
    assert errors(infos, "topics") == [message]
    assert errors(infos, "topics.regex") == [message]
    assert infos.error_count == 2


def test_sink_topics_and_regex_neither(plugins: FakePlugins, worker: WorkerConfig) -> None:
    infos = validate(plugins, worker, {"name": "s", "connector.class": "PickySink"})
    message = "Must configure one of topics or topics.regex"
    assert errors(infos, "topics") == [message]
    assert errors(infos, "topics.regex") == [message]
    blank = validate(plugins, worker, {"name": "s", "connector.class": "PickySink", "topics": " "})
    assert errors(blank, "topics") == [message]


def test_sink_dlq_in_topics(plugins: FakePlugins, worker: WorkerConfig) -> None:
    infos = validate(plugins, worker, {**SINK, "errors.deadletterqueue.topic.name": " b "})
    assert errors(infos, "topics") == [
        "The DLQ topic 'b' may not be included in the list of topics ('topics=[a, b]') consumed "
        "by the connector"
    ]


def test_sink_dlq_matched_by_regex(plugins: FakePlugins, worker: WorkerConfig) -> None:
    config = {
        "name": "s",
        "connector.class": "PickySink",
        "topics.regex": "dl.*",
        "errors.deadletterqueue.topic.name": "dlq",
    }
    infos = validate(plugins, worker, config)
    assert errors(infos, "topics.regex") == [
        "The DLQ topic 'dlq' may not be matched by the regex for the topics "
        "('topics.regex=dl.*') consumed by the connector"
    ]
    partial = validate(plugins, worker, {**config, "topics.regex": "dl"})
    assert partial.error_count == 0  # the regex must match the whole topic name


def test_sink_dlq_regex_is_matched_without_holding_the_worker(
    plugins: FakePlugins, worker: WorkerConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(a+)+b took 9.5 s against a 28-character DLQ name; a lookahead still works; a pattern
    past its time limit is an error of topics.regex, not a hang."""
    config = {
        "name": "s",
        "connector.class": "PickySink",
        "topics.regex": "(a+)+b",
        "errors.deadletterqueue.topic.name": "a" * 28,
    }
    began = time.monotonic()
    assert validate(plugins, worker, config).error_count == 0
    assert time.monotonic() - began < 5
    lookahead = {**config, "topics.regex": "^(?!_).*", "errors.deadletterqueue.topic.name": "_d"}
    assert validate(plugins, worker, lookahead).error_count == 0
    matched = validate(plugins, worker, {**lookahead, "errors.deadletterqueue.topic.name": "d"})
    assert errors(matched, "topics.regex") == [
        "The DLQ topic 'd' may not be matched by the regex for the topics "
        "('topics.regex=^(?!_).*') consumed by the connector"
    ]
    monkeypatch.setattr(user_regex, "TIMEOUT_MS", 100)
    slow = {**config, "topics.regex": "(a+)+(?!x)b"}  # backtracks, and RE2 has no lookahead
    assert errors(validate(plugins, worker, slow), "topics.regex") == [
        "The regex '(a+)+(?!x)b' took longer than 100 ms to match; simplify it (a pattern "
        "without lookarounds or backreferences is matched in linear time)"
    ]


def test_sink_bad_regex(plugins: FakePlugins, worker: WorkerConfig) -> None:
    infos = validate(
        plugins, worker, {"name": "s", "connector.class": "PickySink", "topics.regex": "("}
    )
    assert len(errors(infos, "topics.regex")) == 1
    assert "Syntax error in regular expression" in errors(infos, "topics.regex")[0]
    nested = "(" * 5000 + ")" * 5000
    deep = validate(
        plugins, worker, {"name": "s", "connector.class": "PickySink", "topics.regex": nested}
    )
    assert errors(deep, "topics.regex") == [
        f"Invalid value {nested} for configuration topics.regex: "
        "Syntax error in regular expression: too many nested groups"
    ]


def test_transform_enrichment(plugins: FakePlugins, worker: WorkerConfig) -> None:
    config = {
        **SOURCE,
        "transforms": "t",
        "transforms.t.type": "AddField",
        "transforms.t.field": "f",
    }
    infos = validate(plugins, worker, config)
    assert infos.error_count == 0, all_errors(infos)
    names = [
        c["value"]["name"] for c in infos.configs if c["value"]["name"].startswith("transforms.t.")
    ]
    assert names == [
        "transforms.t.type",
        "transforms.t.plugin.version",
        "transforms.t.predicate",
        "transforms.t.negate",
        "transforms.t.field",
    ]
    type_def = definition(infos, "transforms.t.type")
    assert type_def["group"] == "Transforms: t" and type_def["required"] is True
    assert type_def["type"] == "CLASS"
    assert value(infos, "transforms.t.type")["recommended_values"] == ["test.AddField"]
    assert value(infos, "transforms.t.plugin.version")["recommended_values"] == ["1.0"]
    assert definition(infos, "transforms.t.field")["group"] == "Transforms: t"


def test_transform_type_missing(plugins: FakePlugins, worker: WorkerConfig) -> None:
    infos = validate(plugins, worker, {**SOURCE, "transforms": "t"})
    assert errors(infos, "transforms.t.type") == [
        'Missing required configuration "transforms.t.type" which has no default value.'
    ]
    assert infos.error_count == 1


def test_transform_type_unknown_or_wrong_kind(plugins: FakePlugins, worker: WorkerConfig) -> None:
    infos = validate(plugins, worker, {**SOURCE, "transforms": "t", "transforms.t.type": "Nope"})
    assert errors(infos, "transforms.t.type") == [
        "Invalid value Nope for configuration transforms.t.type: Class Nope could not be found."
    ]
    wrong = validate(
        plugins, worker, {**SOURCE, "transforms": "t", "transforms.t.type": "IsTombstone"}
    )
    assert errors(wrong, "transforms.t.type") == [
        "Invalid value IsTombstone for configuration transforms.t.type: Not a Transformation"
    ]


def test_transform_negate_without_predicate(plugins: FakePlugins, worker: WorkerConfig) -> None:
    config = {
        **SOURCE,
        "transforms": "t",
        "transforms.t.type": "AddField",
        "transforms.t.field": "f",
        "transforms.t.negate": "true",
    }
    infos = validate(plugins, worker, config)
    assert errors(infos, "transforms.t.type") == [
        "Config 'transforms.t.negate' was provided but there is no config 'transforms.t.predicate' "
        "defining a predicate to be negated."
    ]
    with_predicate = {**config, "transforms.t.predicate": "p", "predicates": "p"}
    with_predicate["predicates.p.type"] = "IsTombstone"
    assert validate(plugins, worker, with_predicate).error_count == 0


def test_predicate_enrichment(plugins: FakePlugins, worker: WorkerConfig) -> None:
    infos = validate(plugins, worker, {**SOURCE, "predicates": "p"})
    assert definition(infos, "predicates.p.type")["group"] == "Predicates: p"
    assert errors(infos, "predicates.p.type") == [
        'Missing required configuration "predicates.p.type" which has no default value.'
    ]
    names = [c["value"]["name"] for c in infos.configs]
    assert "predicates.p.negate" not in names


def test_duplicate_transform_aliases(plugins: FakePlugins, worker: WorkerConfig) -> None:
    config = {
        **SOURCE,
        "transforms": "t,t",
        "transforms.t.type": "AddField",
        "transforms.t.field": "f",
    }
    infos = validate(plugins, worker, config)
    assert errors(infos, "transforms") == [
        "Invalid value [t, t] for configuration transforms: Duplicate alias provided."
    ]


def test_converter_prefixed_errors_count_once_per_key(
    plugins: FakePlugins, worker: WorkerConfig
) -> None:
    config = {**SOURCE, "value.converter": JSON, "value.converter.width": "abc"}
    infos = validate(plugins, worker, config)
    assert errors(infos, "value.converter.width") == [
        "Invalid value abc for configuration width: Not a number of type INT",
        "Invalid value null for configuration width: Value must be non-null",
    ]
    assert definition(infos, "value.converter.width")["name"] == "value.converter.width"
    assert infos.error_count == 1  # prefixed sections count keys with errors, not messages
    assert infos.groups[-1] == "Strict"


def test_converter_only_validated_when_set_in_connector(
    plugins: FakePlugins, worker: WorkerConfig
) -> None:
    infos = validate(plugins, worker, {**SOURCE, "value.converter.width": "abc"})
    assert infos.error_count == 0
    assert not any(c["value"]["name"] == "value.converter.width" for c in infos.configs)


def test_unknown_converter_class(plugins: FakePlugins, worker: WorkerConfig) -> None:
    infos = validate(plugins, worker, {**SOURCE, "key.converter": "NoSuchConverter"})
    assert errors(infos, "key.converter") == [
        "Invalid value NoSuchConverter for configuration key.converter: "
        "Class NoSuchConverter could not be found."
    ]
    assert infos.error_count == 1


def test_converter_version_not_found(plugins: FakePlugins, worker: WorkerConfig) -> None:
    config = {**SOURCE, "key.converter": JSON, "key.converter.plugin.version": "9.9"}
    infos = validate(plugins, worker, config)
    assert errors(infos, "key.converter.plugin.version") == [
        f"Plugin {JSON} not found that matches the version range [9.9], available versions: [4.0.0]"
    ]
    assert value(infos, "key.converter.plugin.version")["recommended_values"] == ["4.0.0"]


def test_override_policy_none_rejects(plugins: FakePlugins) -> None:
    worker = WorkerConfig(
        {"bootstrap.servers": "b:1", "connector.client.config.override.policy": "None"}
    )
    infos = validate(plugins, worker, {**SOURCE, "producer.override.x": "1"})
    assert errors(infos, "producer.override.x") == [
        "The 'None' policy does not allow 'x' to be overridden in the connector configuration."
    ]
    assert definition(infos, "producer.override.x") is None
    assert infos.error_count == 1
    # a source connector has no consumer: consumer overrides are not checked
    assert validate(plugins, worker, {**SOURCE, "consumer.override.x": "1"}).error_count == 0


def test_override_policy_all_accepts(plugins: FakePlugins, worker: WorkerConfig) -> None:
    infos = validate(plugins, worker, {**SOURCE, "producer.override.acks": "1"})
    assert infos.error_count == 0
    assert value(infos, "producer.override.acks")["value"] == "1"


def test_sink_overrides_depend_on_dlq(plugins: FakePlugins) -> None:
    worker = WorkerConfig(
        {"bootstrap.servers": "b:1", "connector.client.config.override.policy": "Principal"}
    )
    config = {**SINK, "consumer.override.max.poll.records": "5", "producer.override.acks": "1"}
    infos = validate(plugins, worker, config)
    assert infos.error_count == 1
    assert errors(infos, "consumer.override.max.poll.records")[0].startswith("The 'Principal'")
    with_dlq = validate(plugins, worker, {**config, "errors.deadletterqueue.topic.name": "dlq"})
    assert with_dlq.error_count == 2


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("abc", "Invalid value abc for configuration max.poll.records: Not a number of type INT"),
        ("0", "Invalid value 0 for configuration max.poll.records: Value must be at least 1"),
    ],
)
def test_an_override_its_client_would_refuse_is_an_error_of_its_key(
    plugins: FakePlugins, worker: WorkerConfig, raw: str, message: str
) -> None:
    config = {**SINK, "consumer.override.max.poll.records": raw}
    infos = validate(plugins, worker, config)
    assert infos.error_count == 1
    assert errors(infos, "consumer.override.max.poll.records") == [message]
    with pytest.raises(BadRequestError) as refused:
        ensure_valid_connector_config(plugins, worker, config)
    assert str(refused.value) == (
        "Connector configuration is invalid and contains the following 1 error(s):\n"
        f"{message}\nYou can also find the above list of errors at the endpoint "
        "`/connector-plugins/{connectorType}/config/validate`"
    )


TOPIC_CREATION = {
    "topic.creation.default.replication.factor": "1",
    "topic.creation.default.partitions": "1",
}


@pytest.mark.parametrize(
    ("config", "key", "message"),
    [
        ({**SOURCE}, "producer.override.acks", "String must be one of: all, -1, 0, 1"),
        ({**SOURCE, **TOPIC_CREATION}, "admin.override.retries", "Value must be at least 0"),
        (
            {**SINK, "errors.deadletterqueue.topic.name": "dlq"},
            "admin.override.retries",
            "Value must be at least 0",
        ),
    ],
)
def test_producer_and_admin_overrides_are_checked_when_the_connector_uses_them(
    plugins: FakePlugins,
    worker: WorkerConfig,
    config: dict[str, str],
    key: str,
    message: str,
) -> None:
    bad = "-1" if key.endswith("retries") else "2"
    [found] = errors(validate(plugins, worker, {**config, key: bad}), key)
    assert found == f"Invalid value {bad} for configuration {key.split('.override.')[1]}: {message}"


def test_a_client_the_connector_does_not_use_is_not_checked(
    plugins: FakePlugins, worker: WorkerConfig
) -> None:
    # as in Kafka: a sink without a dead letter queue builds no producer, a source no consumer
    unused = {**SINK, "producer.override.linger.ms": "soon", "admin.override.retries": "-1"}
    assert validate(plugins, worker, unused).error_count == 0
    source = {**SOURCE, "consumer.override.max.poll.records": "0"}
    assert validate(plugins, worker, source).error_count == 0


def test_valid_overrides_are_accepted(plugins: FakePlugins, worker: WorkerConfig) -> None:
    config = {
        **SINK,
        "consumer.override.max.poll.records": "500",
        "consumer.override.auto.offset.reset": "latest",
        "consumer.override.partition.assignment.strategy": "range, roundrobin",
        "consumer.override.x.unknown": "anything",
    }
    infos = validate_connector_config(plugins, worker, config, client_check=librdkafka_refusal)
    assert infos.error_count == 0
    assert value(infos, "consumer.override.max.poll.records")["value"] == "500"


def test_the_client_library_judges_what_the_java_rules_take(
    plugins: FakePlugins, worker: WorkerConfig
) -> None:
    config = {**SOURCE, "producer.override.linger.ms": "1000000"}
    assert validate(plugins, worker, config).error_count == 0  # a LONG of at least 0
    infos = validate_connector_config(plugins, worker, config, client_check=librdkafka_refusal)
    [message] = errors(infos, "producer.override.linger.ms")
    assert message.startswith("Invalid value 1000000 for configuration linger.ms: librdkafka")
    assert "outside allowed range 0..900000" in message


def test_a_refused_secret_override_is_never_quoted(
    plugins: FakePlugins, worker: WorkerConfig
) -> None:
    def refuses(key: str, value: str) -> str | None:
        return f'Invalid value "{value}" for configuration property "{key}"'

    config = {**SOURCE, "producer.override.ssl.key.password": "hunter2"}
    infos = validate_connector_config(plugins, worker, config, client_check=refuses)
    shown = value(infos, "producer.override.ssl.key.password")
    assert shown["value"] == "[hidden]"
    assert shown["errors"] == [
        "Invalid value [hidden] for configuration ssl.key.password: the client library refuses it"
    ]
    assert "hunter2" not in str(infos)


def test_null_value_error(plugins: FakePlugins, worker: WorkerConfig) -> None:
    infos = validate(plugins, worker, {**SOURCE, "batch.size": None, "something": None})
    null = "Null value can not be supplied as the configuration value."
    assert errors(infos, "something") == [null]
    assert null in errors(infos, "batch.size")
    assert infos.error_count == 2


def test_connector_validate_errors_attach_to_keys(
    plugins: FakePlugins, worker: WorkerConfig
) -> None:
    infos = validate(plugins, worker, {**SINK, "file": "bad"})
    assert errors(infos, "file") == ["The file may not be 'bad'"]
    assert infos.error_count == 1
    whole = validate(plugins, worker, {**SINK, "file": "worse"})
    assert errors(whole, "connector.class") == ["The whole config is wrong"]


def test_no_connector_class(plugins: FakePlugins, worker: WorkerConfig) -> None:
    with pytest.raises(BadRequestError, match=r"^Connector config contains no connector type$"):
        validate(plugins, worker, {"name": "x"})


def test_unknown_connector_class(plugins: FakePlugins, worker: WorkerConfig) -> None:
    with pytest.raises(BadRequestError, match="Failed to find any class"):
        validate(plugins, worker, {"name": "x", "connector.class": "Nope"})


def test_invalid_version_spec_is_a_bad_request(plugins: FakePlugins, worker: WorkerConfig) -> None:
    with pytest.raises(BadRequestError, match="Invalid version specification"):
        validate(plugins, worker, {**SOURCE, "connector.plugin.version": "(1.0"})


def test_connector_version_selection_and_not_found(
    plugins: FakePlugins, worker: WorkerConfig
) -> None:
    chosen = validate(plugins, worker, {**SOURCE, "connector.plugin.version": "1.0.0"})
    assert chosen.error_count == 0
    assert value(chosen, "connector.plugin.version")["recommended_values"] == ["1.0.0", "2.0.0"]
    assert definition(chosen, "connector.plugin.version")["default_value"] == "2.0.0"

    infos = validate(plugins, worker, {**SOURCE, "connector.plugin.version": "3.0.0", "x": None})
    message = (
        "Plugin test.FileSource not found that matches the version range [3.0.0], "
        "available versions: [1.0.0, 2.0.0]"
    )
    assert errors(infos, "connector.class") == [message]
    assert errors(infos, "connector.plugin.version") == [message]
    assert value(infos, "connector.plugin.version")["recommended_values"] == ["1.0.0", "2.0.0"]
    assert errors(infos, "x") == ["Null value can not be supplied as the configuration value."]
    assert infos.error_count == 3
    names = [c["value"]["name"] for c in infos.configs]
    assert "file" not in names  # no connector validation in the short-circuit


def test_config_providers_are_dropped(plugins: FakePlugins, worker: WorkerConfig) -> None:
    infos = validate(plugins, worker, {**SOURCE, "config.providers": None})
    assert infos.error_count == 0


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("ok-name", None),
        ("", "Invalid value  for configuration name: String may not be empty"),
        (
            "a\nb\x7f",
            "Invalid value a\nb\x7f for configuration name: String may not contain control "
            "sequences but had the following ASCII chars: 10, 127",
        ),
        ("a/b", "Invalid value a/b for configuration name: Connector name may not contain '/'"),
    ],
)
def test_check_connector_name(name: str, expected: str | None) -> None:
    assert check_connector_name(name) == expected


def test_name_rules_apply_in_validate(plugins: FakePlugins, worker: WorkerConfig) -> None:
    infos = validate(plugins, worker, {**SOURCE, "name": "a/b"})
    assert errors(infos, "name") == [
        "Invalid value a/b for configuration name: Connector name may not contain '/'"
    ]


def test_invalid_config_message(plugins: FakePlugins, worker: WorkerConfig) -> None:
    infos = validate(plugins, worker, {**SOURCE, "name": "", "tasks.max": "abc"})
    assert invalid_config_message(infos) == (
        "Connector configuration is invalid and contains the following 3 error(s):\n"
        "Invalid value  for configuration name: String may not be empty\n"
        "Invalid value abc for configuration tasks.max: Not a number of type INT\n"
        "Invalid value null for configuration tasks.max: Value must be non-null\n"
        "You can also find the above list of errors at the endpoint "
        "`/connector-plugins/{connectorType}/config/validate`"
    )
    with pytest.raises(BadRequestError) as err:
        ensure_valid_connector_config(plugins, worker, {**SOURCE, "name": "", "tasks.max": "abc"})
    assert str(err.value) == invalid_config_message(infos)
    assert ensure_valid_connector_config(plugins, worker, SOURCE).error_count == 0


def test_plugin_config_keys_for_connector(plugins: FakePlugins) -> None:
    keys = plugin_config_keys(plugins, "FileSource", None)
    names = [k["name"] for k in keys]
    assert names[:2] == ["file", "batch.size"]
    assert names[2:5] == ["name", "connector.class", "connector.plugin.version"]
    assert "topic.creation.groups" in names and "topics" not in names
    sink_names = [k["name"] for k in plugin_config_keys(plugins, "PickySink", "latest")]
    assert sink_names[0] == "file" and sink_names.count("file") == 1  # the plugin's def wins
    assert "topics" in sink_names


def test_plugin_config_keys_for_other_plugins(plugins: FakePlugins) -> None:
    keys = plugin_config_keys(plugins, "AddField", None)
    assert [k["name"] for k in keys] == ["field"]
    assert [k["name"] for k in plugin_config_keys(plugins, "IsTombstone", None)] == []


def test_plugin_config_keys_errors(plugins: FakePlugins) -> None:
    with pytest.raises(NotFoundError, match=r"^Unknown plugin Nope\.$"):
        plugin_config_keys(plugins, "Nope", None)
    with pytest.raises(BadRequestError, match="not found that matches the version range"):
        plugin_config_keys(plugins, "FileSource", "7.0")


@pytest.mark.parametrize(
    "key",
    [
        "producer.override.plugin.library.paths",
        "consumer.override.plugin.library.paths",
        "admin.override.ssl.engine.location",
        "producer.override.ssl.providers",
        "producer.override.sasl.kerberos.kinit.cmd",
    ],
)
def test_code_loading_overrides_are_refused_whatever_the_policy(
    plugins: FakePlugins, worker: WorkerConfig, key: str
) -> None:
    # policy All (the default) allows everything else; a source uses no consumer or admin,
    # and these keys are refused for those clients too
    infos = validate(plugins, worker, {**SOURCE, key: "/tmp/evil.so"})
    assert infos.error_count == 1
    unprefixed = key.split(".override.", 1)[1]
    [message] = errors(infos, key)
    assert message.startswith(f"'{unprefixed}' may not be overridden in the connector config")
    with pytest.raises(BadRequestError, match=r"may not be overridden"):
        ensure_valid_connector_config(plugins, worker, {**SOURCE, key: "/tmp/evil.so"})


def test_oauth_endpoint_urls_need_the_worker_allow_list(plugins: FakePlugins) -> None:
    key = "producer.override.sasl.oauthbearer.token.endpoint.url"
    allowed = "https://idp.example/token"
    worker = WorkerConfig(
        {"bootstrap.servers": "b:1", "org.apache.kafka.sasl.oauthbearer.allowed.urls": allowed}
    )
    assert validate(plugins, worker, {**SOURCE, key: allowed}).error_count == 0
    other = validate(plugins, worker, {**SOURCE, key: "http://169.254.169.254/latest"})
    assert errors(other, key) == [
        "http://169.254.169.254/latest is not allowed for 'sasl.oauthbearer.token.endpoint.url'."
        " Add it to the worker property 'org.apache.kafka.sasl.oauthbearer.allowed.urls' to"
        " allow it."
    ]
    # without the worker key no URL is allowed, as in Kafka 4
    jwks = "consumer.override.sasl.oauthbearer.jwks.endpoint.url"
    plain = WorkerConfig({"bootstrap.servers": "b:1"})
    assert validate(plugins, plain, {**SOURCE, jwks: allowed}).error_count == 1


def test_connector_names_are_at_most_249_characters() -> None:
    assert check_connector_name("n" * 249) is None
    problem = check_connector_name("n" * 300_000)
    assert problem is not None and len(problem) < 200
    assert problem.endswith("Connector name may be at most 249 characters")
    assert "(300000 characters)" in problem


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("producer.override.sasl.kerberos.principal", "x; touch /tmp/pwned"),
        ("consumer.override.sasl.kerberos.keytab", '/tmp/k" ; id; "'),
        ("admin.override.sasl.oauthbearer.metadata.authentication.type", "azure_imds"),
    ],
)
def test_keys_that_reach_a_shell_or_a_metadata_endpoint_are_refused(
    plugins: FakePlugins, worker: WorkerConfig, key: str, value: str
) -> None:
    infos = validate(plugins, worker, {**SOURCE, key: value})
    assert infos.error_count == 1
    assert "may not be overridden in the connector configuration" in errors(infos, key)[0]
    none = {**SOURCE, "admin.override.sasl.oauthbearer.metadata.authentication.type": "none"}
    assert validate(plugins, worker, none).error_count == 0
