"""Client config builders: Kafka Connect's merge order and Java → librdkafka key translation."""

from __future__ import annotations

import logging
import os
from typing import Any

import pytest

from connect_lite.api.errors import ConfigError, ConnectError
from connect_lite.kafka import native
from connect_lite.kafka.admin import Admin
from connect_lite.kafka.clients import (
    admin_config,
    consumer_config,
    librdkafka_refusal,
    producer_config,
    translate,
)
from connect_lite.kafka.consumer import subscription_pattern
from connect_lite.kafka.native import config_refusal, new_client

WORKER = {
    "bootstrap.servers": "127.0.0.1:1",
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "offset.flush.interval.ms": "10000",
    "client.dns.lookup": "use_all_dns_ips",
    "producer.linger.ms": "20",
    "producer.acks": "1",
    "consumer.max.poll.interval.ms": "120000",
    "consumer.auto.offset.reset": "latest",
    "admin.request.timeout.ms": "9000",
}


def test_producer_defaults_then_worker_then_overrides() -> None:
    conf = producer_config(WORKER, "orders", 2, {"linger.ms": "50"})
    assert conf["bootstrap.servers"] == "127.0.0.1:1"
    assert conf["client.id"] == "connector-producer-orders-2"
    assert conf["enable.idempotence"] == "false"
    assert conf["max.in.flight.requests.per.connection"] == "1"
    assert conf["delivery.timeout.ms"] == "2147483647"
    assert conf["acks"] == "1"  # worker producer.* beats the framework default
    assert conf["linger.ms"] == "50"  # the connector override beats the worker
    assert "key.converter" not in conf
    assert "client.dns.lookup" not in conf  # only bootstrap.servers comes unprefixed
    assert "max.poll.interval.ms" not in conf


def test_producer_without_worker_layer_keeps_kafka_defaults() -> None:
    conf = producer_config({"bootstrap.servers": "b:1"}, "c", 0, {})
    assert conf["acks"] == "all"
    dlq = producer_config({"bootstrap.servers": "b:1"}, "c", 0, {}, "connector-dlq-producer")
    assert dlq["client.id"] == "connector-dlq-producer-c-0"


def test_consumer_group_defaults_and_fetch_tuning() -> None:
    conf = consumer_config(WORKER, "sink", 0, "connect-sink", {})
    assert conf["group.id"] == "connect-sink"
    assert conf["client.id"] == "connector-consumer-sink-0"
    assert conf["enable.auto.commit"] == "false"
    assert conf["auto.offset.reset"] == "latest"  # worker consumer.* beats the default
    assert conf["max.poll.interval.ms"] == "120000"
    assert int(conf["max.partition.fetch.bytes"]) > 1024 * 1024
    assert int(conf["queued.min.messages"]) > 100_000
    assert "linger.ms" not in conf


def test_consumer_explicit_group_and_override() -> None:
    conf = consumer_config(WORKER, "sink", 1, "custom", {"auto.offset.reset": "none"})
    assert conf["group.id"] == "custom"
    assert conf["auto.offset.reset"] == "error"  # Java "none" is librdkafka "error"
    override = consumer_config(WORKER, "sink", 1, "connect-sink", {"group.id": "over"})
    assert override["group.id"] == "over"


def test_admin_takes_unprefixed_worker_keys_then_admin_then_overrides() -> None:
    conf = admin_config(WORKER, {"request.timeout.ms": "7000"})
    assert conf["bootstrap.servers"] == "127.0.0.1:1"
    assert conf["client.dns.lookup"] == "use_all_dns_ips"
    assert conf["request.timeout.ms"] == "7000"
    assert not any(k.startswith(("producer.", "consumer.", "admin.")) for k in conf)
    assert conf["key.converter"] == WORKER["key.converter"]  # pruned when the client is built
    assert admin_config(WORKER, {})["request.timeout.ms"] == "9000"


def test_translation_renames_converts_and_drops(caplog: pytest.LogCaptureFixture) -> None:
    java = {
        "key.serializer": "org.apache.kafka.common.serialization.ByteArraySerializer",
        "value.deserializer": "org.apache.kafka.common.serialization.ByteArrayDeserializer",
        "max.block.ms": "60000",
        "max.request.size": "2097152",
        "buffer.memory": "33554432",
        "send.buffer.bytes": "131072",
        "partition.assignment.strategy": "org.apache.kafka.clients.consumer.RangeAssignor,"
        "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
        "ssl.endpoint.identification.algorithm": "",
        "delivery.timeout.ms": "120000",
    }
    with caplog.at_level(logging.DEBUG, logger="connect_lite.kafka.clients"):
        out = translate(java)
    assert out == {
        "message.max.bytes": "2097152",
        "queue.buffering.max.kbytes": "32768",
        "socket.send.buffer.bytes": "131072",
        "partition.assignment.strategy": "range,cooperative-sticky",
        "ssl.endpoint.identification.algorithm": "none",
        "delivery.timeout.ms": "120000",
    }
    dropped_lines = [r for r in caplog.records if "dropped" in r.getMessage()]
    assert len(dropped_lines) == 1
    assert "max.block.ms" in dropped_lines[0].getMessage()


def test_a_java_override_beats_a_librdkafka_worker_key() -> None:
    worker = {"bootstrap.servers": "b:1", "producer.message.max.bytes": "1000000"}
    conf = producer_config(worker, "c", 0, {"max.request.size": "3000000"})
    assert conf["message.max.bytes"] == "3000000"
    assert "max.request.size" not in conf


def test_jaas_credentials_become_sasl_username_and_password() -> None:
    jaas = (
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="alice" password="s3\\"cret";'
    )
    assert translate({"sasl.jaas.config": jaas}) == {
        "sasl.username": "alice",
        "sasl.password": 's3"cret',
    }
    kerberos = "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true;"
    assert translate({"sasl.jaas.config": kerberos}) == {}


def test_unknown_keys_are_dropped_when_the_client_is_built(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen: list[dict[str, object]] = []

    def factory(conf: dict[str, object]) -> dict[str, object]:
        from confluent_kafka import KafkaError, KafkaException

        for key in conf:
            if key.startswith("not."):
                err = KafkaError(
                    KafkaError._INVALID_ARG, f'No such configuration property: "{key}"'
                )
                raise KafkaException(err)
        seen.append(conf)
        return conf

    config = {"bootstrap.servers": "b:1", "not.a.key": "1", "not.another": "2"}
    with caplog.at_level(logging.DEBUG, logger="connect_lite.kafka.native"):
        built = new_client(factory, config, "test client")
    assert set(built) == {"bootstrap.servers", "logger"}
    assert len([r for r in caplog.records if "not.a.key" in r.getMessage()]) == 1


def test_real_clients_build_from_configs_with_worker_only_keys() -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient

    accepted: list[dict[str, object]] = []

    def recording(factory):  # type: ignore[no-untyped-def]
        def build(conf: dict[str, object]) -> object:
            client = factory(conf)
            accepted.append(dict(conf))
            return client

        return build

    new_client(recording(AdminClient), admin_config(WORKER, {}), "admin client")
    producer_conf = producer_config(WORKER, "c", 0, {"max.block.ms": "1", "x.unknown": "1"})
    new_client(recording(Producer), producer_conf, "producer")
    admin_keys, producer_keys = set(accepted[0]), set(accepted[1])
    assert {"bootstrap.servers", "client.dns.lookup", "request.timeout.ms"} <= admin_keys
    assert not {"key.converter", "offset.flush.interval.ms"} & admin_keys
    assert {"acks", "linger.ms", "client.id"} <= producer_keys
    assert not {"max.block.ms", "x.unknown"} & producer_keys


def test_a_bad_value_is_a_config_error() -> None:
    from confluent_kafka import Producer

    with pytest.raises(ConfigError, match=r"Invalid producer .*required\.acks"):
        new_client(Producer, producer_config(WORKER, "c", 0, {"acks": "bogus"}), "producer")


@pytest.mark.parametrize(
    ("java", "librdkafka"),
    [("orders-.*", "^(orders-.*)$"), ("^a|b$", "^(a|b)$"), ("x\\$", "^(x\\$)$")],
)
def test_regex_subscription_is_anchored(java: str, librdkafka: str) -> None:
    assert subscription_pattern(java) == librdkafka


def test_unknown_topic_prefixed_worker_keys_are_dropped_not_fatal(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """librdkafka names an unknown ``topic.*`` key without its prefix ("creation.enable");
    the builder still finds and drops the worker's key, and builds the client without it."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    from connect_lite.kafka.native import LIBRDKAFKA_LOG

    config = {"bootstrap.servers": "127.0.0.1:1", "topic.creation.enable": "false"}
    with pytest.raises(KafkaException, match=r'No such configuration property: "creation\.enable"'):
        AdminClient(dict(config))  # the precondition: librdkafka refuses it, prefix stripped

    built_with: list[dict[str, object]] = []

    def recording(conf: dict[str, object]) -> AdminClient:
        client = AdminClient(conf)
        built_with.append(dict(conf))
        return client

    with caplog.at_level(logging.DEBUG, logger="connect_lite.kafka.native"):
        client = new_client(recording, config, "admin client")
    assert isinstance(client, AdminClient)
    assert built_with == [{"bootstrap.servers": "127.0.0.1:1", "logger": LIBRDKAFKA_LOG}]
    assert config == {"bootstrap.servers": "127.0.0.1:1", "topic.creation.enable": "false"}
    assert [r.getMessage() for r in caplog.records if r.name == "connect_lite.kafka.native"] == [
        "admin client: keys unknown to librdkafka, dropped: ['topic.creation.enable']"
    ]


def _threads() -> int:
    """librdkafka's threads in this process (it names them rdk:main, rdk:broker...)."""
    names = []
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm") as comm:
                names.append(comm.read())
        except (FileNotFoundError, ProcessLookupError):  # a thread that just ended (open, read)
            pass
    return sum(1 for name in names if name.startswith("rdk:"))


def test_a_closed_admin_releases_its_client_at_once_even_in_a_reference_cycle() -> None:
    before = _threads()
    admin = Admin({"bootstrap.servers": "127.0.0.1:1"})
    assert _threads() > before, "librdkafka's threads"
    cycle: list[Any] = [admin]
    cycle.append(cycle)  # reachable only through a cycle: refcounting alone never frees it
    admin.close()
    assert _threads() <= before  # other tests' garbage clients may go meanwhile, never come
    with pytest.raises(ConnectError, match="The admin client is closed"):
        admin.list_topics()
    admin.close()  # twice is fine
    with Admin({"bootstrap.servers": "127.0.0.1:1"}) as scoped:
        assert _threads() > before
    assert _threads() <= before
    with pytest.raises(ConnectError, match="closed"):
        scoped.describe_topic("t")


@pytest.mark.parametrize(
    ("key", "value", "reason"),
    [
        ("linger.ms", "1000000", 'property "queue.buffering.max.ms" value 1e+06 is outside'),
        ("acks", " all", "request.required.acks"),  # Java trims it; librdkafka is given it as is
        ("session.timeout.ms", "0", "outside allowed range 1..3600000"),
        ("max.request.size", "abc", '"message.max.bytes"'),  # asked by its librdkafka name
        ("auto.offset.reset", "by_duration:PT1H", 'property "auto.offset.reset"'),
        ("queue.buffering.max.messages", "many", "queue.buffering.max.messages"),
        ("partition.assignment.strategy", "range,sticky", "Unsupported partition.assignment"),
    ],
)
def test_librdkafka_refuses_what_its_client_would(key: str, value: str, reason: str) -> None:
    found = librdkafka_refusal(key, value)
    assert found is not None and reason in found
    assert not found.endswith("\n")


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("linger.ms", "5"),
        ("acks", "all"),
        ("security.protocol", "SASL_SSL"),
        ("auto.offset.reset", "none"),  # translated to librdkafka's "error"
        ("partition.assignment.strategy", "org.apache.kafka.clients.consumer.RangeAssignor"),
        ("max.poll.records", "0"),  # no librdkafka key: the Java rules judge it
        ("no.such.key", "x"),  # unknown keys are dropped when a client is built
        ("buffer.memory", "abc"),  # a LONG: refused by the Java rules, never converted
    ],
)
def test_librdkafka_takes_what_its_client_would(key: str, value: str) -> None:
    assert librdkafka_refusal(key, value) is None


def test_keys_that_load_code_are_never_set_on_librdkafka() -> None:
    # librdkafka loads plugin.library.paths as soon as it is set
    assert "dlopen" in str(config_refusal({"plugin.library.paths": "no-such-plugin"}))
    assert librdkafka_refusal("plugin.library.paths", "no-such-plugin") is None


def test_a_refusal_check_builds_no_client(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[dict[str, Any]] = []

    def producer(conf: dict[str, Any]) -> object:
        built.append(conf)
        return real(conf)

    real = native.confluent_kafka.Producer
    monkeypatch.setattr(native.confluent_kafka, "Producer", producer)
    assert config_refusal({"linger.ms": "5", "topic.no.such": "x"}) is None
    # every attempt carried the probe key, so librdkafka stopped before building a client
    assert built and all(native._PROBE in conf for conf in built)


def test_a_producer_with_a_bad_buffer_memory_is_built_without_it() -> None:
    # a sink without a dead letter queue never builds its producer: its config must not fail
    assert "queue.buffering.max.kbytes" not in producer_config({}, "c", 0, {"buffer.memory": "x"})
