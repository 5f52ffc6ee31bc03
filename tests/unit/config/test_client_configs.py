"""Kafka's client config table: each override value is parsed by the Java client's type, then
checked by its validator and by the client library, with Kafka's texts."""

from __future__ import annotations

import pytest

from connect_lite.config.client_configs import (
    CLIENT_KEYS,
    check_client_value,
    client_key_problems,
)
from connect_lite.kafka import clients
from tests.unit.docs.doc_blocks import block


def problem(client: str, key: str, raw: str) -> str | None:
    return check_client_value(client, key, raw)[1]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("abc", "Invalid value abc for configuration max.poll.records: Not a number of type INT"),
        ("0", "Invalid value 0 for configuration max.poll.records: Value must be at least 1"),
        (
            "1_000",
            "Invalid value 1_000 for configuration max.poll.records: Not a number of type INT",
        ),
    ],
)
def test_max_poll_records_is_an_int_of_at_least_one(raw: str, message: str) -> None:
    assert problem("consumer", "max.poll.records", raw) == message


def test_a_valid_value_is_parsed_by_its_type() -> None:
    assert check_client_value("consumer", "max.poll.records", " 500 ") == (500, None)
    assert check_client_value("producer", "enable.idempotence", "TRUE") == (True, None)
    assert check_client_value("consumer", "partition.assignment.strategy", "a, b") == (
        ["a", "b"],
        None,
    )


@pytest.mark.parametrize(
    ("client", "key", "raw", "message"),
    [
        ("producer", "linger.ms", "soon", "Not a number of type LONG"),
        ("producer", "linger.ms", "-1", "Value must be at least 0"),
        ("admin", "retries", "-1", "Value must be at least 0"),
        ("producer", "enable.idempotence", "yes", "Expected value to be either true or false"),
        ("producer", "acks", "ALL", "String must be one of: all, -1, 0, 1"),
        ("producer", "compression.type", "brotli", "String must be one of: none, gzip, snappy"),
        ("producer", "compression.gzip.level", "0", "between 1 and 9 or equal to -1"),
        ("producer", "metadata.max.idle.ms", "10", "Value must be at least 5000"),
        ("producer", "transactional.id", "", "String must be non-empty"),
        ("consumer", "isolation.level", "READ_COMMITTED", "read_committed, read_uncommitted"),
        ("consumer", "security.protocol", "TLS", "(case insensitive): PLAINTEXT, SSL"),
        ("consumer", "auto.offset.reset", "EARLIEST", "must be either 'earliest', 'latest'"),
        ("consumer", "auto.offset.reset", "by_duration:-PT1H", "'by_duration:<PnDTnHnMn.nS.>'"),
        ("consumer", "share.acquire.mode", "all", "'batch_optimized' or 'record_limit'"),
        ("consumer", "sasl.login.refresh.buffer.seconds", "4000", "no more than 3600"),
        ("admin", "sasl.login.refresh.window.factor", "0.1", "Value must be at least 0.5"),
    ],
)
def test_the_java_clients_rules(client: str, key: str, raw: str, message: str) -> None:
    found = problem(client, key, raw)
    assert found is not None and found.startswith(f"Invalid value {raw} for configuration {key}")
    assert message in found


@pytest.mark.parametrize(
    ("client", "key", "raw", "message"),
    [
        (
            "producer",
            "bootstrap.servers",
            "",
            "must not be empty. Valid values include: any non-empty value",
        ),
        (
            "consumer",
            "partition.assignment.strategy",
            "range,range",
            "values must not be duplicated.",
        ),
        ("producer", "ssl.cipher.suites", "a,,b", "values must not be empty."),
    ],
)
def test_the_java_clients_list_rules(client: str, key: str, raw: str, message: str) -> None:
    assert problem(client, key, raw) == f"Configuration '{key}' {message}"


@pytest.mark.parametrize(
    ("client", "key", "raw"),
    [
        ("admin", "bootstrap.servers", ""),  # the admin client may have none (controllers)
        ("consumer", "security.protocol", "sasl_ssl"),  # case-insensitive
        ("consumer", "auto.offset.reset", "by_duration:P1DT2H3.5S"),
        ("consumer", "group.protocol", "consumer"),
        ("producer", "compression.gzip.level", "-1"),
        ("producer", "key.serializer", "com.example.Unknown"),  # classes are not loaded
        ("producer", "sasl.jaas.config", "x"),
        ("consumer", "no.such.key", "anything"),  # left to the library
    ],
)
def test_what_the_java_client_takes(client: str, key: str, raw: str) -> None:
    assert problem(client, key, raw) is None


def test_each_client_has_its_own_keys() -> None:
    assert "max.poll.records" in CLIENT_KEYS["consumer"]
    assert "max.poll.records" not in CLIENT_KEYS["producer"]
    assert "linger.ms" in CLIENT_KEYS["producer"]
    assert "linger.ms" not in CLIENT_KEYS["admin"]
    for client in CLIENT_KEYS.values():
        assert {"client.id", "security.protocol", "ssl.key.password", "sasl.mechanism"} <= set(
            client
        )


def test_every_key_the_librdkafka_mapping_knows_is_typed() -> None:
    mapped = set(clients._RENAMED) | set(clients._DROPPED) | set(clients._CONVERTED)
    typed = set().union(*(set(keys) for keys in CLIENT_KEYS.values()))
    assert mapped <= typed


def test_the_library_is_asked_only_after_the_java_rules_pass() -> None:
    asked: list[tuple[str, str]] = []

    def library(key: str, value: str) -> str | None:
        asked.append((key, value))
        return "too big" if value == "900001" else None

    assert check_client_value("producer", "linger.ms", "abc", library)[1] is not None
    assert asked == []
    assert check_client_value("producer", "linger.ms", "5", library) == (5, None)
    assert check_client_value("producer", "linger.ms", "900001", library)[1] == (
        "Invalid value 900001 for configuration linger.ms: librdkafka refuses it: too big"
    )
    assert asked == [("linger.ms", "5"), ("linger.ms", "900001")]


@pytest.mark.parametrize("key", ["ssl.key.password", "sasl.password", "sasl.jaas.config"])
def test_a_refused_secret_is_described_not_quoted(key: str) -> None:
    def library(key: str, value: str) -> str | None:
        return f'Invalid value "{value}" for configuration property "{key}"'

    found = check_client_value("producer", key, "hunter2", library)[1]
    assert found == f"Invalid value [hidden] for configuration {key}: the client library refuses it"


def test_client_key_problems_name_the_prefixed_key() -> None:
    props = {
        "producer.linger.ms": "abc",
        "consumer.max.poll.records": "0",
        "admin.retries": "3",
        "admin.bootstrap.controllers": "a,a",
        "bootstrap.servers": "b:1",
    }
    prefixes = {"producer.": "producer", "consumer.": "consumer", "admin.": "admin"}
    assert client_key_problems(props, prefixes) == [
        "Invalid value abc for configuration producer.linger.ms: Not a number of type LONG",
        "Invalid value 0 for configuration consumer.max.poll.records: Value must be at least 1",
        "Configuration 'admin.bootstrap.controllers' values must not be duplicated.",
    ]


def test_the_configuration_pages_examples_are_the_checks_texts() -> None:
    shown = block("override-errors").text.splitlines()
    assert shown == [
        problem("consumer", "max.poll.records", "0"),
        check_client_value("producer", "linger.ms", "1000000", clients.librdkafka_refusal)[1],
    ]
