"""Confluent's HTTP sink (``io.confluent.connect.http.HttpSinkConnector``): records as HTTP
requests, batched, retried on the listed statuses, through a keep-alive connection pool
(urllib3, the ``http`` extra).

Delivery is at least once, and no offset moves past a record the server did not take: a
listed status (or an I/O error) that still fails after ``max.retries`` raises RetriableError,
the worker hands the same records again after the backoff, and the requests the server had
already taken in that put are not sent again. Another failure (a 4xx the server means) is the
record's: with ``errors.tolerance=all`` it goes to the dead letter queue, else
``behavior.on.error`` fails the task (``fail``), logs it (``log``) or passes it by
(``ignore``). A request of several records refused so is sent again record by record, so that
only the records at fault are reported."""

from __future__ import annotations

import base64
import email.utils
import json
import logging
import random
import threading
import time
from typing import Any
from urllib.parse import urlencode

from connect_lite.api import (
    ConfigDef,
    ConfigError,
    ConnectError,
    RetriableError,
    SinkConnector,
    SinkRecord,
    SinkTask,
    TopicPartition,
)

from .body import NullRecord, Request, requests
from .config import OAuth, Reporter, Settings, config_def

log = logging.getLogger(__name__)

VERSION = "1.7.6"
"""The Confluent HTTP sink version whose configs and behaviour this follows."""

_DEF = config_def()


def _urllib3() -> Any:
    try:
        import urllib3
    except ImportError as error:  # the ``http`` extra
        raise ConfigError(
            "The HTTP sink needs urllib3: pip install 'connect-lite[http]'"
        ) from error
    return urllib3


class HttpSinkConnector(SinkConnector):
    """Records of the subscribed topics as HTTP requests to ``http.api.url``."""

    __connect_class_name__ = "io.confluent.connect.http.HttpSinkConnector"

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return _DEF

    def validate(self, config: dict[str, str]) -> None:
        Settings.parse(config)
        _urllib3()

    def start(self, config: dict[str, str]) -> None:
        Settings.parse(config)
        from connect_lite.connectors.jdbc.config import warn_confluent_keys  # the connectors'

        warn_confluent_keys(config, config.get("name", "http-sink"))
        self._props = dict(config)

    def task_class(self) -> type[SinkTask]:
        return HttpSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def stop(self) -> None:
        """Nothing runs in the connector itself."""

    def alter_offsets(
        self, connector_config: dict[str, str], offsets: dict[TopicPartition, int | None]
    ) -> bool:
        """The offsets live in the consumer group only."""
        return True


class HttpFailure(ConnectError):
    """A request the server did not take, with Confluent's message."""

    def __init__(self, url: str, status: int | None, reason: str, content: str, cause: str = ""):
        if status is None:
            message = (f"Error while processing HTTP request with Url : {url}, Error Message : "
                       f"Exception while processing HTTP request, Exception : {cause}")  # fmt: skip
        else:
            message = (f"Error while processing HTTP request with Url : {url}, Status code : "
                       f"{status}, Reason Phrase : {reason}, "
                       f"Response Content : {content}")  # fmt: skip
        super().__init__(message)
        self.url, self.status, self.reason, self.content, self.cause = (
            url, status, reason, content, cause)  # fmt: skip
        self.retry_after_s: float | None = None
        self.payload: bytes | None = None
        """The body of the request refused (for the reporter's error record)."""


class HttpSinkTask(SinkTask):
    """Sends each put's records in order and returns once the server took them (see the
    module's doc for failures)."""

    def __init__(self) -> None:
        self._settings: Settings | None = None
        self._pool: Any = None
        self._stopping = threading.Event()
        self._reporter: _Reporter | None = None
        self._taken: set[tuple[str, int, int]] = set()
        """Records a failed put had already delivered: not sent again when handed back."""

    def version(self) -> str:
        return VERSION

    def start(self, config: dict[str, str]) -> None:
        self._settings = settings = Settings.parse(config)
        urllib3 = _urllib3()
        timeout = urllib3.Timeout(connect=settings.connect_timeout_s,
                                  read=settings.request_timeout_s)  # fmt: skip
        context = settings.tls()  # https.ssl.*: the stores, versions and the name check
        names = {} if context.check_hostname else {"assert_hostname": False}
        self._pool = urllib3.PoolManager(num_pools=8, maxsize=2, timeout=timeout, retries=False,
                                         ssl_context=context, **names)  # fmt: skip
        self._io_error: type[Exception] = urllib3.exceptions.HTTPError
        self._auth: tuple[tuple[str, str], ...] = ()
        self._token = None if settings.oauth is None else _Token(settings.oauth, self._pool)
        if settings.user is not None:
            token = base64.b64encode(f"{settings.user}:{settings.password or ''}".encode())
            self._auth = (("Authorization", "Basic " + token.decode()),)

    def put(self, records: list[SinkRecord]) -> None:
        settings = self._settings
        assert settings is not None
        if settings.reporter is not None and self._reporter is None:
            self._reporter = _Reporter(settings.reporter, self.context)
        fresh = [r for r in records if _coordinates(r) not in self._taken]
        for request in requests(fresh, settings):
            if isinstance(request, NullRecord):
                self._refused(request.record, ConnectError(
                    f"Record with a null value at {_coordinates(request.record)} (behavior.on."
                    "null.values=fail)"))  # fmt: skip
                continue
            self._deliver(request, settings)
            self._taken.update(_coordinates(r) for r in request.records)
        if self._reporter is not None:  # its records are in Kafka before the offsets move
            try:
                self._reporter.flush()
            except RetriableError:
                self.context.timeout(settings.backoff_ms)
                raise
        self._taken.clear()

    def _deliver(self, request: Request, settings: Settings) -> None:
        try:
            content = self._send(request, settings)
            if self._reporter is not None:
                self._reporter.results(request.records, content)
        except HttpFailure as failure:
            if failure.status is None or settings.retries_status(failure.status):
                backoff = failure.retry_after_s
                if backoff is None:
                    backoff = settings.backoff_ms / 1000
                self.context.timeout(int(backoff * 1000))
                raise RetriableError(str(failure)) from failure
            if len(request.records) == 1:
                failure.payload = request.body(settings)
                self._refused(request.records[0], failure)
                return
            for record, body in zip(request.records, request.bodies, strict=True):
                alone = Request(request.method, request.url, request.headers, [record], [body])
                self._deliver(alone, settings)
                self._taken.add(_coordinates(record))

    def _refused(self, record: SinkRecord, error: ConnectError) -> None:
        """A record the server refused for good (or a null value that must fail)."""
        settings = self._settings
        assert settings is not None
        if self._reporter is not None:
            self._reporter.error(record, error)
        reporter = self.context.errant_record_reporter()
        if reporter is not None:
            reporter.report(record, error)
        elif settings.on_error == "fail":
            raise error
        elif settings.on_error == "log":
            log.error("%s (record %s, behavior.on.error=log)", error, _coordinates(record))

    def _send(self, request: Request, settings: Settings) -> str:
        """The request until the server takes it, retried ``max.retries`` times on the listed
        statuses and I/O errors; the answer's content, or HttpFailure when it does not."""
        headers = dict(settings.headers)
        headers.update(request.headers)
        headers.update(self._auth)
        headers.setdefault("Content-Type", "text/plain; charset=UTF-8")
        body = request.body(settings)
        attempt = 0
        fresh_token = False
        while True:
            try:
                if self._token is not None:
                    headers["Authorization"] = self._token.header(fresh_token)
                answer = self._pool.request(request.method, request.url, body=body,
                                            headers=headers, redirect=False)  # fmt: skip
            except self._io_error as error:
                failure = HttpFailure(request.url, None, "", "", f"{type(error).__name__}: {error}")
            except HttpFailure as token_failure:  # the token endpoint's
                failure = token_failure
            else:
                if 200 <= answer.status < 300:
                    return str(answer.data.decode("utf-8", "replace"))
                if answer.status == 401 and self._token is not None and not fresh_token:
                    fresh_token = True  # the token may have expired early: a new one, once
                    continue
                content = answer.data.decode("utf-8", "replace")
                failure = HttpFailure(request.url, answer.status, answer.reason or "", content)
                failure.retry_after_s = _retry_after(answer.headers.get("Retry-After"))
                if not settings.retries_status(answer.status):
                    raise failure
            if attempt >= settings.max_retries or self._stopping.is_set():
                raise failure
            attempt += 1
            wait = failure.retry_after_s
            if wait is None:
                wait = settings.backoff_ms / 1000
                if settings.exponential:
                    wait = random.uniform(0, wait * 2 ** (attempt - 1))
            log.warning("Retry %d of %d in %.1f s: %s", attempt, settings.max_retries, wait,
                        failure)  # fmt: skip
            self._stopping.wait(wait)

    def flush(self, offsets: dict[TopicPartition, int]) -> None:
        """Nothing waits: put returns once the server took its records."""

    def stop(self) -> None:
        self._stopping.set()
        if self._pool is not None:
            self._pool.clear()


class _Reporter:
    """Confluent's reporter: for each sink record, its answer on the result topic, or why it
    was refused on the error topic (key null, the input record in ``input_record_*``
    headers), written through the task's own record writer."""

    def __init__(self, reporter: Reporter, context: Any) -> None:
        self._reporter = reporter
        self._writer = context.record_writer(reporter.bootstrap_servers)
        self._ready = False

    def _topic(self, kind: str) -> str | None:
        reporter = self._reporter
        if not self._ready:
            for which, topic in (
                ("result", reporter.result_topic),
                ("error", reporter.error_topic),
            ):
                if topic is not None:
                    self._writer.ensure_topic(topic, reporter.partitions[which],
                                              reporter.replication[which])  # fmt: skip
            self._ready = True
        return reporter.result_topic if kind == "result" else reporter.error_topic

    def _value(self, kind: str, text: str) -> bytes:
        return (json.dumps(text) if self._reporter.json_values[kind] else text).encode()

    @staticmethod
    def _input(record: SinkRecord) -> list[tuple[str, bytes | None]]:
        return [("input_record_offset", str(record.kafka_offset).encode()),
                ("input_record_timestamp", str(record.timestamp).encode()),
                ("input_record_partition", str(record.kafka_partition).encode()),
                ("input_record_topic", record.topic.encode())]  # fmt: skip

    def results(self, records: list[SinkRecord], content: str) -> None:
        topic = self._topic("result")
        if topic is None:
            return
        value = self._value("result", content)
        for record in records:
            self._writer.write(topic, value, None, self._input(record))

    def error(self, record: SinkRecord, error: ConnectError) -> None:
        topic = self._topic("error")
        if topic is None:
            return
        failure = error if isinstance(error, HttpFailure) else None
        status = failure.status if failure is not None else None
        message = None
        if failure is None:
            message = str(error)
        elif status is None:
            message = "Exception while processing HTTP request for a batch of 1 records."
        exception = failure.cause if failure is not None and failure.cause else None
        fields = {
            "error_message": message,
            "exception": exception,
            "response_content": failure.content
            if failure is not None and status is not None
            else None,
            "status_code": None if status is None else str(status),
            "payload": (failure.payload or b"").decode("utf-8", "replace") if failure else None,
            "reason_phrase": failure.reason if failure is not None else "",
            "url": failure.url if failure is not None else None,
        }
        if self._reporter.errors_as_content and failure is not None:
            text = failure.content
        else:

            def shown(v: str | None) -> str:
                return "null" if v is None else v

            text = (f"Retry time lapsed, unable to process HTTP request. HTTP Response code: "
                    f"{shown(fields['status_code'])}, Reason phrase: "
                    f"{shown(fields['reason_phrase'] if status is not None else None)}, Url: "
                    f"{shown(fields['url'])}, Response content: "
                    f"{shown(fields['response_content'])}, Exception: {shown(exception)}, "
                    f"Error message: {shown(message)}")  # fmt: skip
        headers = self._input(record) + [
            (name, None if v is None else v.encode()) for name, v in fields.items()]  # fmt: skip
        self._writer.write(topic, self._value("error", text), None, headers)

    def flush(self) -> None:
        self._writer.flush()


class _Token:
    """An OAuth2 client-credentials token, fetched when first needed and again before it
    expires (``expires_in``) or when the API answers 401."""

    MARGIN_S = 10.0

    def __init__(self, oauth: OAuth, pool: Any) -> None:
        self._oauth = oauth
        self._pool = pool
        self._value: str | None = None
        self._expires = 0.0

    def header(self, refresh: bool = False) -> str:
        if refresh or self._value is None or time.monotonic() >= self._expires:
            self._fetch()
        return f"Bearer {self._value}"

    def _fetch(self) -> None:
        oauth = self._oauth
        form = {"grant_type": "client_credentials"}
        if oauth.scope:
            form["scope"] = oauth.scope
        headers = dict(oauth.headers)
        headers["Content-Type"] = "application/x-www-form-urlencoded"
        if oauth.in_header:
            pair = f"{oauth.client_id}:{oauth.secret}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        else:
            form.update(client_id=oauth.client_id, client_secret=oauth.secret)
        answer = self._pool.request("POST", oauth.token_url, body=urlencode(form),
                                    headers=headers, redirect=False)  # fmt: skip
        content = answer.data.decode("utf-8", "replace")
        if not 200 <= answer.status < 300:
            raise HttpFailure(oauth.token_url, answer.status, answer.reason or "", content)
        try:
            found = json.loads(content)
            token = found[oauth.token_property]
        except (ValueError, KeyError, TypeError) as error:
            missing = f"no {oauth.token_property} in the token answer"
            raise HttpFailure(oauth.token_url, None, "", content, missing) from error
        self._value = str(token)
        expires_in = found.get("expires_in") if isinstance(found, dict) else None
        life = float(expires_in) if isinstance(expires_in, int | float) else 3600.0
        self._expires = time.monotonic() + max(0.0, life - self.MARGIN_S)


def _coordinates(record: SinkRecord) -> tuple[str, int, int]:
    return record.topic, record.kafka_partition or 0, record.kafka_offset or 0


def _retry_after(value: str | None) -> float | None:
    """A Retry-After header: seconds, or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
