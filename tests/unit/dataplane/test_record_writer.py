"""A sink task's record writer: the worker's settings for its own Kafka, none of its
credentials for a cluster a connector names."""

from __future__ import annotations

from connect_lite.dataplane.record_writer import client_configs

WORKER = {
    "bootstrap.servers": "kafka:9092",
    "security.protocol": "SASL_SSL",
    "sasl.password": "worker-secret",
    "client.id": "connect-lite",
}
ADMIN = {"bootstrap.servers": "kafka:9092", "sasl.password": "worker-secret"}


def test_the_workers_own_kafka_gets_the_workers_settings() -> None:
    assert client_configs(WORKER, ADMIN, None) == (WORKER, ADMIN)
    assert client_configs(WORKER, ADMIN, "kafka:9092") == (WORKER, ADMIN)


def test_another_cluster_gets_a_plain_client_without_the_workers_credentials() -> None:
    producer, admin = client_configs(WORKER, ADMIN, "elsewhere:9092")
    assert producer == {"bootstrap.servers": "elsewhere:9092", "client.id": "connect-lite"}
    assert admin == {"bootstrap.servers": "elsewhere:9092"}
