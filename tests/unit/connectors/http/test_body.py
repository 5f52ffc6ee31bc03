"""The HTTP sink's configuration and how records become requests (Confluent's rules)."""

from __future__ import annotations

import decimal
import json

import pytest

from connect_lite.api import ConfigError, Headers, Schema, SchemaBuilder, SinkRecord, Struct
from connect_lite.connectors.http.body import NullRecord, Request, java_text, requests
from connect_lite.connectors.http.config import Settings, status_codes

URL = "http://127.0.0.1:9/api/${topic}/${key}"
ROW = SchemaBuilder.struct().name("Row").field("f1", Schema.STRING_SCHEMA).field(
    "n", Schema.OPTIONAL_INT32_SCHEMA).build()  # fmt: skip


def settings(**config: str) -> Settings:
    return Settings.parse({"http.api.url": URL, **config})


def record(value: object, key: object = "k", offset: int = 0, headers: Headers | None = None,
           topic: str = "t") -> SinkRecord:  # fmt: skip
    return SinkRecord(topic, 0, offset, key, value, None, None, 0, "CreateTime",
                      headers or Headers.of([]))  # fmt: skip


def built(records: list[SinkRecord], **config: str) -> list[Request | NullRecord]:
    return list(requests(records, settings(**config)))


def test_confluent_defaults_one_record_per_request_as_its_string_form() -> None:
    s = settings()
    assert (s.method, s.batch_max, s.separator, s.json, s.as_array) == ("POST", 1, ",", False, True)
    assert (s.on_null, s.on_error, s.max_retries, s.backoff_ms) == ("ignore", "fail", 5, 3000)
    out = built([record("a"), record("b", offset=1)])
    assert [(r.url, r.body(s)) for r in out] == [  # type: ignore[union-attr]
        ("http://127.0.0.1:9/api/t/k", b"a"), ("http://127.0.0.1:9/api/t/k", b"b")]  # fmt: skip


def test_batches_with_prefix_separator_suffix_and_json_arrays() -> None:
    records = [record(str(i), offset=i) for i in range(5)]
    config = {"batch.max.size": "3", "batch.prefix": "<", "batch.suffix": ">",
              "batch.separator": ";"}  # fmt: skip
    s = settings(**config)
    assert [r.body(s) for r in built(records, **config)] == [b"<0;1;2>", b"<3;4>"]  # type: ignore[union-attr]
    as_json = {"batch.max.size": "10", "request.body.format": "json"}
    s = settings(**as_json)
    struct = Struct(ROW, {"f1": "v", "n": None})
    (only,) = built([record(struct), record({"a": 1}, offset=1), record("x", offset=2)], **as_json)
    assert json.loads(only.body(s)) == [{"f1": "v", "n": None}, {"a": 1}, "x"]  # type: ignore[union-attr]


def test_a_batch_is_cut_where_the_url_batch_key_or_headers_change() -> None:
    config = {"batch.max.size": "10"}
    keys = [
        record("a", key="k1"),
        record("b", key="k1", offset=1),
        record("c", key="k/2", offset=2),
    ]
    urls = [r.url for r in built(keys, **config)]  # type: ignore[union-attr]
    assert urls == ["http://127.0.0.1:9/api/t/k1", "http://127.0.0.1:9/api/t/k%2F2"]
    plain = {"http.api.url": "http://h/x", "batch.max.size": "10"}
    headed = [record("a", headers=Headers.of([("h", "1")])),
              record("b", offset=1, headers=Headers.of([("h", "2")]))]  # fmt: skip
    out = list(requests(headed, Settings.parse(plain)))
    assert [r.headers for r in out] == [(("h", "1"),), (("h", "2"),)]  # type: ignore[union-attr]
    by_key = {**plain, "batch.key.pattern": "${key}"}
    out = list(requests(keys, Settings.parse(by_key)))
    assert [len(r.records) for r in out] == [2, 1]  # type: ignore[union-attr]


def test_null_values_as_behavior_on_null_values_says() -> None:
    records = [record("a"), record(None, offset=1), record("b", offset=2)]
    assert [len(r.records) for r in built(records, **{"batch.max.size": "5"})] == [2]  # type: ignore[union-attr]
    deleted = built(records, **{"batch.max.size": "5", "behavior.on.null.values": "delete"})
    assert [(r.method, len(r.records)) for r in deleted] == [  # type: ignore[union-attr]
        ("POST", 1), ("DELETE", 1), ("POST", 1)]  # fmt: skip
    assert deleted[1].body(settings()) is None  # type: ignore[union-attr]
    failing = built(records, **{"behavior.on.null.values": "fail"})
    assert isinstance(failing[1], NullRecord)


def test_values_as_java_shows_them_and_decimals_in_json() -> None:
    assert java_text(Struct(ROW, {"f1": "v", "n": None})) == "Struct{f1=v}"
    assert java_text({"a": 1, "b": [True, None]}) == "{a=1, b=[true, null]}"
    s = settings(**{"request.body.format": "json", "json.decimal.format": "NUMERIC"})
    (only,) = list(requests([record({"d": decimal.Decimal("1.50")})], s))
    assert only.body(s) == b'[{"d":1.5}]'  # type: ignore[union-attr]
    s = settings(**{"request.body.format": "json"})
    (only,) = list(requests([record({"d": decimal.Decimal("1.50")})], s))
    assert json.loads(only.body(s)) == [{"d": "AJY="}]  # type: ignore[union-attr]


def test_retry_codes_ranges_and_bad_configs_name_the_key() -> None:
    assert status_codes("408, 429,500-") == [(408, 408), (429, 429), (500, 999)]
    assert status_codes("400-499") == [(400, 499)]
    s = settings()
    assert [s.retries_status(c) for c in (400, 404, 408, 429, 500, 503)] == [
        False, False, True, True, True, True]  # fmt: skip
    bad = {"retry.on.status.codes": "5xx", "auth.type": "OAUTH2", "oauth2.token.url": "http://t",
           "https.ssl.truststore.location": "/x", "request.method": "GET",
           "headers": "NoColon", "reporter.producer.acks": "1",
           "reporter.result.topic.value.format.schemas.enable": "true",
           "oauth2.jwt.enabled": "true"}  # fmt: skip
    with pytest.raises(ConfigError) as caught:
        settings(**bad)
    assert set(caught.value.errors) == {
        "retry.on.status.codes", "oauth2.client.id", "oauth2.client.secret",
        "https.ssl.truststore.location", "request.method", "headers",
        "reporter.producer.acks", "reporter.result.topic.value.format.schemas.enable",
        "oauth2.jwt.enabled"}  # fmt: skip
    with pytest.raises(ConfigError) as caught:
        Settings.parse({})
    assert "http.api.url" in caught.value.errors
    # reporter topic names have defaults in Confluent's connector: harmless alone
    assert settings(**{"reporter.result.topic.name": "ok", "confluent.license": "",
                       "ssl.enabled": "true"}).reporter is None  # fmt: skip
    reporter = settings(**{"reporter.bootstrap.servers": "k:9092", "name": "hook",
                           "reporter.error.topic.name": ""}).reporter  # fmt: skip
    assert reporter is not None and (reporter.result_topic, reporter.error_topic) == (
        "hook-success", None)  # fmt: skip
    assert reporter.replication == {"result": 3, "error": 3}  # Confluent's default
