"""Confluent's HTTP sink against a real worker, broker and HTTP server on a socket: batches,
URL templates, headers, deletes, retries, a server away, basic auth, the DLQ, bad configs."""

from __future__ import annotations

import json
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from connect_lite.testing import EmbeddedConnect, KafkaHelpers, wait_for
from tests.http_server import Answer, RecordingServer
from tests.integration.testkit import create_running, unique
from tests.tls_certs import PASSWORD, make_pki

pytestmark = pytest.mark.integration

STRINGS = {
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    "value.converter": "org.apache.kafka.connect.storage.StringConverter",
}


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    with RecordingServer() as started:
        yield started


def http_sink(topic: str, url: str, **extra: str) -> dict[str, str]:
    """A config as a Confluent user writes it."""
    return {
        "connector.class": "io.confluent.connect.http.HttpSinkConnector",
        "topics": topic,
        "http.api.url": url,
        "confluent.topic.bootstrap.servers": "localhost:9092",
        "confluent.topic.replication.factor": "1",
        "retry.backoff.ms": "100",
        **STRINGS,
        **extra,
    }


def topic_with(kafka: KafkaHelpers, records: list[Any]) -> str:
    topic = unique("http")
    kafka.create_topic(topic, 1)
    kafka.produce(topic, records)
    return topic


def committed(worker: EmbeddedConnect, name: str) -> int:
    offsets = worker.http.get(f"/connectors/{name}/offsets").body["offsets"]
    return int(offsets[0]["offset"]["kafka_offset"]) if offsets else 0


def test_batches_templates_headers_and_deletes(
    worker: EmbeddedConnect, kafka: KafkaHelpers, server: RecordingServer
) -> None:
    records: list[Any] = [("k1", f"v{i}") for i in range(5)] + [("k2", "w"), ("k2", None)]
    topic = topic_with(kafka, records)
    create_running(worker, "http", http_sink(
        topic, server.url("/api/${topic}/${key}"), **{
            "batch.max.size": "3", "batch.prefix": "[", "batch.suffix": "]",
            "batch.separator": "|", "headers": "Content-Type:text/csv|X-Env: test",
            "behavior.on.null.values": "delete", "batch.key.pattern": "${key}"}))  # fmt: skip
    wait_for(lambda: len(server.accepted()) == 4, 60, what="four requests")
    got = [(r.method, r.path, r.text) for r in server.accepted()]
    assert got == [
        ("POST", f"/api/{topic}/k1", "[v0|v1|v2]"),
        ("POST", f"/api/{topic}/k1", "[v3|v4]"),
        ("POST", f"/api/{topic}/k2", "[w]"),
        ("DELETE", f"/api/{topic}/k2", ""),
    ]
    first = server.accepted()[0]
    assert first.headers["content-type"] == "text/csv" and first.headers["x-env"] == "test"


def test_json_arrays_and_a_503_retried_then_taken(
    worker: EmbeddedConnect, kafka: KafkaHelpers, server: RecordingServer
) -> None:
    topic = topic_with(kafka, ['{"a": 1}', '{"a": 2}'])
    server.script(503, Answer(429, {"Retry-After": "0"}))
    create_running(worker, "http", http_sink(topic, server.url("/in"), **{
        "request.body.format": "json", "batch.max.size": "10",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false"}))  # fmt: skip
    wait_for(lambda: server.accepted(), 60, what="the batch taken")
    assert [r.json() for r in server.accepted()] == [[{"a": 1}, {"a": 2}]]
    assert [r.method for r in server.seen] == ["POST"] * 3  # two refusals, then taken


def test_a_server_away_holds_the_offsets_and_loses_nothing(
    worker: EmbeddedConnect, kafka: KafkaHelpers, server: RecordingServer
) -> None:
    topic = topic_with(kafka, [f"r{i}" for i in range(3)])
    server.down = True
    name = create_running(worker, "http", http_sink(topic, server.url("/in"),
                                                    **{"max.retries": "1"}))  # fmt: skip

    def trace() -> str:
        return str(worker.http.get(f"/connectors/{name}/status").body["tasks"][0].get("trace"))

    wait_for(lambda: "Status code : 503" in trace(), 60, what="the refusal in the task's trace")
    status = worker.http.get(f"/connectors/{name}/status").body
    assert status["tasks"][0]["state"] == "RUNNING"
    assert committed(worker, name) == 0  # no offset past a record the server did not take
    server.down = False
    wait_for(lambda: len(server.accepted()) >= 3, 60, what="every record after the outage")
    assert [r.text for r in server.accepted()] == ["r0", "r1", "r2"]  # each once, in order
    wait_for(lambda: committed(worker, name) == 3, 60, what="offsets committed")


def test_a_record_the_server_refuses_follows_behavior_on_error_and_the_dlq(
    worker: EmbeddedConnect, kafka: KafkaHelpers, server: RecordingServer
) -> None:
    topic = topic_with(kafka, ["good", "bad", "fine"])
    server.script(200, 400, 200)
    name = create_running(worker, "http", http_sink(topic, server.url("/in"), **{
        "behavior.on.error": "log"}))  # fmt: skip
    wait_for(lambda: committed(worker, name) == 3, 60, what="every record passed")
    assert [r.text for r in server.accepted()] == ["good", "fine"]  # 400: not retried

    dlq = unique("dlq")
    topic = topic_with(kafka, ["one", "two", "three"])
    server.script(400)  # the first request of the batch of three, then each record alone
    server.script(200, 400, 200)
    create_running(worker, "http", http_sink(topic, server.url("/dlq"), **{
        "batch.max.size": "3", "errors.tolerance": "all",
        "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.topic.replication.factor": "1"}))  # fmt: skip
    (dead,) = kafka.consume(dlq, 1, timeout=60)
    assert dead.value == b"two"
    wait_for(lambda: len([r for r in server.accepted() if r.path == "/dlq"]) == 2, 30)


def test_a_refused_record_fails_the_task_by_default(
    worker: EmbeddedConnect, kafka: KafkaHelpers, server: RecordingServer
) -> None:
    topic = topic_with(kafka, ["x"])
    server.script(404)
    name = unique("http")
    worker.http.post("/connectors", {"name": name, "config": http_sink(topic, server.url("/"))})

    def task_state() -> Any:
        tasks = worker.http.get(f"/connectors/{name}/status").body.get("tasks") or [{}]
        return tasks[0].get("state")

    wait_for(lambda: task_state() == "FAILED", 60, what="the task FAILED")
    trace = worker.http.get(f"/connectors/{name}/status").body["tasks"][0]["trace"]
    assert "Status code : 404" in trace


def test_basic_auth(worker: EmbeddedConnect, kafka: KafkaHelpers) -> None:
    with RecordingServer(user="u", password="s3cret") as guarded:
        topic = topic_with(kafka, ["hello"])
        create_running(worker, "http", http_sink(topic, guarded.url("/in"), **{
            "auth.type": "BASIC", "connection.user": "u",
            "connection.password": "s3cret"}))  # fmt: skip
        wait_for(lambda: guarded.accepted(), 60, what="the authenticated request")
        assert guarded.accepted()[0].text == "hello"


def test_the_reporter_writes_results_and_errors_as_confluents_does(
    worker: EmbeddedConnect, kafka: KafkaHelpers, server: RecordingServer, bootstrap_servers: str
) -> None:
    topic = topic_with(kafka, ["ok", "bad"])
    server.script(200, 404)
    name = create_running(worker, "http", http_sink(topic, server.url("/in"), **{
        "behavior.on.error": "log", "reporter.bootstrap.servers": bootstrap_servers,
        "reporter.result.topic.replication.factor": "1",
        "reporter.error.topic.replication.factor": "1",
        "reporter.error.topic.value.format": "string"}))  # fmt: skip
    (result,) = kafka.consume(f"{name}-success", 1, timeout=60)
    assert result.key is None and json.loads(result.value or b"") == '{"status": 200}'
    assert dict(result.headers) == {
        "input_record_offset": b"0", "input_record_timestamp": dict(result.headers)[
            "input_record_timestamp"], "input_record_partition": b"0",
        "input_record_topic": topic.encode()}  # fmt: skip
    (error,) = kafka.consume(f"{name}-error", 1, timeout=60)
    headers = dict(error.headers)
    assert headers["input_record_offset"] == b"1" and headers["status_code"] == b"404"
    assert headers["payload"] == b"bad" and headers["url"] == server.url("/in").encode()
    assert headers["exception"] is None and headers["error_message"] is None
    assert (
        error.value
        == (
            "Retry time lapsed, unable to process HTTP request. HTTP Response code: 404, Reason "
            f"phrase: Not Found, Url: {server.url('/in')}, Response content: "
            '{"status": 404}, Exception: null, Error message: null'
        ).encode()
    )
    wait_for(lambda: committed(worker, name) == 2, 60, what="offsets after the reporter")


def test_tls_with_a_truststore_and_a_client_certificate(
    worker: EmbeddedConnect, kafka: KafkaHelpers, tmp_path: Path
) -> None:
    """mTLS as Confluent's playground sets it up (a truststore and a keystore), with a PKCS12
    truststore and a PEM keystore; without the truststore the server's CA is not trusted."""
    pki = make_pki(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki.server_pem)
    context.load_verify_locations(pki.ca_pem)
    context.verify_mode = ssl.CERT_REQUIRED  # a client certificate signed by the CA
    keystore = tmp_path / "client-keystore.pem"
    keystore.write_bytes(pki.client_key.read_bytes() + pki.client_cert.read_bytes())
    with RecordingServer(tls=context) as secure:
        topic = topic_with(kafka, ["over tls"])
        create_running(worker, "http", http_sink(topic, secure.url("/in"), **{
            "https.ssl.truststore.location": str(pki.ca_p12),
            "https.ssl.truststore.password": PASSWORD, "https.ssl.truststore.type": "PKCS12",
            "https.ssl.keystore.location": str(keystore), "https.ssl.keystore.type": "PEM",
            "https.ssl.protocol": "TLSv1.2"}))  # fmt: skip
        wait_for(lambda: secure.accepted(), 60, what="the request over mutual TLS")
        assert secure.accepted()[0].text == "over tls"

        untrusted = create_running(worker, "http", http_sink(topic, secure.url("/no"), **{
            "max.retries": "0"}))  # fmt: skip

        def trace() -> str:
            tasks = worker.http.get(f"/connectors/{untrusted}/status").body["tasks"]
            return str(tasks[0].get("trace"))

        wait_for(lambda: "CERTIFICATE_VERIFY_FAILED" in trace(), 60, what="the CA not trusted")
        assert not [r for r in secure.accepted() if r.path == "/no"]


def test_bad_configs_are_400s_that_name_the_key(worker: EmbeddedConnect) -> None:
    config = http_sink("t", "ftp://nowhere", **{
        "retry.on.status.codes": "5xx", "https.ssl.truststore.location": "/x",
        "oauth2.jwt.enabled": "true", "request.method": "GET",
        "https.ssl.keystore.key": "-----BEGIN PRIVATE KEY-----"})  # fmt: skip
    answer = worker.http.put(
        "/connector-plugins/io.confluent.connect.http.HttpSinkConnector/config/validate", config
    )
    assert answer.status == 200
    errors = {c["value"]["name"]: c["value"]["errors"] for c in answer.body["configs"]
              if c["value"]["errors"]}  # fmt: skip
    assert {"http.api.url", "retry.on.status.codes", "https.ssl.truststore.location",
            "oauth2.jwt.enabled", "request.method",
            "https.ssl.keystore.key"} <= set(errors)  # fmt: skip
    created = worker.http.post("/connectors", {"name": unique("bad-http"), "config": config})
    assert created.status == 400
    assert "https.ssl.truststore.location" in json.dumps(created.body)


def test_oauth2_client_credentials_in_the_header_and_in_the_form(
    worker: EmbeddedConnect, kafka: KafkaHelpers
) -> None:
    with RecordingServer(oauth=("app", "s3cret")) as guarded:
        topic = topic_with(kafka, ["one"])
        oauth = {"auth.type": "OAUTH2", "oauth2.token.url": guarded.url("/token"),
                 "oauth2.client.id": "app", "oauth2.client.secret": "s3cret"}  # fmt: skip
        name = create_running(worker, "http", http_sink(topic, guarded.url("/in"), **oauth))
        wait_for(lambda: guarded.accepted(), 60, what="the request with the token")
        (asked,) = guarded.token_requests
        assert asked.headers["content-type"] == "application/x-www-form-urlencoded"
        assert asked.text == "grant_type=client_credentials&scope=any"
        guarded.expire_token()  # a 401 fetches a new token, once, and sends again
        kafka.produce(topic, ["two"])
        wait_for(lambda: len(guarded.accepted()) == 2, 60, what="the request after a new token")
        assert len(guarded.token_requests) == 2
        worker.http.delete(f"/connectors/{name}")

        topic = topic_with(kafka, ["three"])
        in_form = {**oauth, "oauth2.client.auth.mode": "url", "oauth2.client.scope": ""}
        create_running(worker, "http", http_sink(topic, guarded.url("/form"), **in_form))
        wait_for(lambda: any(r.path == "/form" for r in guarded.accepted()), 60)
        assert guarded.token_requests[-1].text == (
            "grant_type=client_credentials&client_id=app&client_secret=s3cret"
        )
