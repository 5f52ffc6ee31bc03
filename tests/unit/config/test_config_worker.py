"""The worker config: defaults, errors one line per problem, accessors and the README table."""

from __future__ import annotations

import pytest

from connect_lite.api.errors import ConfigError
from connect_lite.config.worker import WORKER_CONFIG_DEF, WorkerConfig, worker_config_markdown

BASE = {"bootstrap.servers": "127.0.0.1:9092"}


def test_defaults() -> None:
    config = WorkerConfig(BASE)
    assert config.bootstrap_servers == ["127.0.0.1:9092"]
    assert config.listeners == ["http://127.0.0.1:8083"]
    assert config.plugin_path == []
    assert config.state_storage_file == "connect-lite.db"
    assert config.offset_flush_interval_ms == 60000
    assert config.offset_flush_timeout_ms == 5000
    assert config.task_shutdown_graceful_timeout_ms == 5000
    assert config.converter("key") == "org.apache.kafka.connect.json.JsonConverter"
    assert config.converter("value") == "org.apache.kafka.connect.json.JsonConverter"
    assert config.converter("header") == "org.apache.kafka.connect.storage.SimpleHeaderConverter"
    assert config.converter_version("key") is None
    assert config.override_policy.name == "All"
    assert config.embedded_broker_enable is False
    assert config.embedded_broker_port == 0
    assert config.topic_creation_enable and config.topic_tracking_enable
    assert config.topic_tracking_allow_reset


def test_typed_values_are_parsed() -> None:
    config = WorkerConfig(
        {
            **BASE,
            "plugin.path": "/a, /b",
            "offset.flush.interval.ms": "10000",
            "topic.tracking.enable": "false",
            "connector.client.config.override.policy": "None",
        }
    )
    assert config.plugin_path == ["/a", "/b"]
    assert config.offset_flush_interval_ms == 10000
    assert config.topic_tracking_enable is False
    assert config.override_policy.name == "None"


def test_bootstrap_servers_required_without_embedded_broker() -> None:
    with pytest.raises(ConfigError) as err:
        WorkerConfig({})
    assert str(err.value) == (
        'Missing required configuration "bootstrap.servers" which has no default value.'
    )
    assert list(err.value.errors) == ["bootstrap.servers"]


def test_bootstrap_servers_optional_with_embedded_broker() -> None:
    config = WorkerConfig({"embedded.broker.enable": "true"})
    assert config.bootstrap_servers == []
    config.use_embedded_broker("127.0.0.1:4567", {"consumer.session.timeout.ms": "6000"})
    assert config.bootstrap_servers == ["127.0.0.1:4567"]
    assert config.raw["consumer.session.timeout.ms"] == "6000"


def test_one_line_per_problem_naming_the_key() -> None:
    with pytest.raises(ConfigError) as err:
        WorkerConfig(
            {
                **BASE,
                "offset.flush.interval.ms": "abc",
                "embedded.broker.port": "70000",
                "listeners": "ftp://x:1",
                "topic.creation.enable": "maybe",
                "connector.client.config.override.policy": "Some",
            }
        )
    lines = str(err.value).split("\n")
    assert len(lines) == 5
    for key in (
        "offset.flush.interval.ms",
        "embedded.broker.port",
        "listeners",
        "topic.creation.enable",
        "connector.client.config.override.policy",
    ):
        assert sum(key in line for line in lines) == 1, key
    assert (
        "Invalid value abc for configuration offset.flush.interval.ms: Not a number of type LONG"
        in lines
    )


@pytest.mark.parametrize("listeners", ["", "http://host", "127.0.0.1:8083", "http://h:99999"])
def test_bad_listeners(listeners: str) -> None:
    with pytest.raises(ConfigError, match="listeners"):
        WorkerConfig({**BASE, "listeners": listeners})


def test_duplicate_bootstrap_servers() -> None:
    with pytest.raises(ConfigError, match="values must not be duplicated"):
        WorkerConfig({"bootstrap.servers": "a:1,a:1"})


def test_unknown_keys_are_allowed_and_kept() -> None:
    config = WorkerConfig({**BASE, "something.else": "1"})
    assert config.raw["something.else"] == "1"


def test_prefixed_and_spark_conf() -> None:
    config = WorkerConfig(
        {
            **BASE,
            "producer.acks": "1",
            "producer.linger.ms": "5",
            "consumer.max.poll.records": "9",
            "spark.executor.memory": "1g",
            "key.converter.schemas.enable": "false",
        }
    )
    assert config.prefixed("producer.") == {"acks": "1", "linger.ms": "5"}
    assert config.prefixed("consumer.") == {"max.poll.records": "9"}
    assert config.prefixed("key.converter.") == {"schemas.enable": "false"}
    assert config.spark_conf() == {"spark.master": "local[*]", "spark.executor.memory": "1g"}
    overridden = WorkerConfig({**BASE, "spark.master": "local[2]"})
    assert overridden.spark_conf() == {"spark.master": "local[2]"}


def test_listener_urls_and_worker_id() -> None:
    config = WorkerConfig({**BASE, "listeners": "HTTP://0.0.0.0:0, http://[::1]:8084"})
    assert config.listener_urls() == ["http://0.0.0.0:0", "http://[::1]:8084"]
    assert config.worker_id("10.0.0.5", 41234) == "0.0.0.0:41234"
    default = WorkerConfig(BASE)
    assert default.worker_id("127.0.0.1", 8083) == "127.0.0.1:8083"
    empty_host = WorkerConfig({**BASE, "listeners": "http://:8085"})
    assert empty_host.worker_id("192.168.1.2", 8085) == "192.168.1.2:8085"
    advertised = WorkerConfig(
        {**BASE, "rest.advertised.host.name": "worker1", "rest.advertised.port": "9999"}
    )
    assert advertised.worker_id("127.0.0.1", 8083) == "worker1:9999"


def test_override_policy_accepts_kafka_class_names() -> None:
    config = WorkerConfig(
        {
            **BASE,
            "connector.client.config.override.policy": "org.apache.kafka.connect.connector."
            "policy.PrincipalConnectorClientConfigOverridePolicy",
        }
    )
    policy = config.override_policy
    assert policy.name == "Principal"
    assert policy.is_allowed("sasl.jaas.config") and not policy.is_allowed("acks")


def test_allowlist_policy() -> None:
    config = WorkerConfig(
        {
            **BASE,
            "connector.client.config.override.policy": "Allowlist",
            "connector.client.config.override.allowlist": "acks,linger.ms",
        }
    )
    assert config.override_policy.is_allowed("acks")
    assert not config.override_policy.is_allowed("batch.size")


def test_markdown_table_has_every_key() -> None:
    table = worker_config_markdown()
    lines = table.strip().split("\n")
    assert lines[0] == "| key | type | default | description |"
    for name, key in WORKER_CONFIG_DEF.keys.items():
        row = next(line for line in lines if line.startswith(f"| `{name}` |"))
        assert f"| {key.type.value} |" in row
    assert "| `listeners` | LIST | `http://127.0.0.1:8083` |" in table
    assert "| `bootstrap.servers` | LIST | *required* |" in table
    assert '| `plugin.path` | LIST | `""` |' in table
    assert "| `rest.advertised.port` | INT | *unset* |" in table
    assert "| `spark.*` | prefix |" in table


def test_log_format_is_text_or_json_in_any_case() -> None:
    WorkerConfig({**BASE, "log.format": "JSON"})
    WorkerConfig({**BASE, "log.format": "text"})
    with pytest.raises(ConfigError) as err:
        WorkerConfig({**BASE, "log.format": "xml"})
    assert str(err.value) == (
        "Invalid value xml for configuration log.format: String must be one of "
        "(case insensitive): text, json"
    )
