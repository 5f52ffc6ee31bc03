"""Kafka worker keys that connect-lite replaces get one WARN line each, naming the replacement."""

from __future__ import annotations

from connect_lite.config.worker import REPLACED_KAFKA_KEYS, WorkerConfig, replaced_key_warnings

KAFKA_STANDALONE = {
    # the worker keys of Kafka's config/connect-standalone.properties
    "bootstrap.servers": "localhost:9092",
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "key.converter.schemas.enable": "true",
    "value.converter.schemas.enable": "true",
    "offset.storage.file.filename": "/tmp/connect.offsets",
    "offset.flush.interval.ms": "10000",
    "plugin.path": "/usr/local/share/java",
}


def test_kafkas_standalone_config_gets_one_warning_naming_state_storage_file() -> None:
    assert replaced_key_warnings(KAFKA_STANDALONE) == [
        "Worker config key offset.storage.file.filename is not used by connect-lite: source "
        "offsets are kept in state.storage.file, with the rest of the worker's state."
    ]
    WorkerConfig(KAFKA_STANDALONE)  # and it is a valid worker config


def test_distributed_mode_keys_point_to_the_state_file() -> None:
    warnings = replaced_key_warnings({"group.id": "connect-cluster", "config.storage.topic": "c"})
    assert warnings == [
        "Worker config key group.id is not used by connect-lite: it belongs to Kafka Connect's "
        "distributed mode; connect-lite keeps its state in state.storage.file.",
        "Worker config key config.storage.topic is not used by connect-lite: it belongs to Kafka "
        "Connect's distributed mode; connect-lite keeps connector configs in state.storage.file.",
    ]


def test_every_warning_names_its_replacement_and_only_set_keys_warn() -> None:
    for key, replaced in REPLACED_KAFKA_KEYS.items():
        (line,) = replaced_key_warnings({key: "x", "bootstrap.servers": "b:9092"})
        assert line.startswith(f"Worker config key {key} is not used by connect-lite: ")
        assert replaced.replacement in line.split(": ", 1)[1]
    assert replaced_key_warnings({"bootstrap.servers": "b:9092"}) == []


def test_no_replaced_key_is_a_connect_lite_key() -> None:
    from connect_lite.config.worker import WORKER_CONFIG_DEF

    assert not set(REPLACED_KAFKA_KEYS) & set(WORKER_CONFIG_DEF.keys)
    for replaced in REPLACED_KAFKA_KEYS.values():
        assert replaced.replacement in WORKER_CONFIG_DEF.keys
