"""Records into HTTP requests, as Confluent's HTTP sink builds them: each value as its string
form or as JSON, records batched while their URL, batch key and headers agree, bodies with
batch.prefix, batch.separator and batch.suffix (or a JSON array)."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from connect_lite.api import SinkRecord, Struct

from .config import Settings

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


@dataclass
class Request:
    """One HTTP request and the records it carries (in order)."""

    method: str
    url: str
    headers: tuple[tuple[str, str], ...]
    records: list[SinkRecord] = field(default_factory=list)
    bodies: list[str] = field(default_factory=list)

    def body(self, settings: Settings) -> bytes | None:
        if self.method == "DELETE":
            return None
        if settings.json and settings.as_array:
            return ("[" + ",".join(self.bodies) + "]").encode()
        return (settings.prefix + settings.separator.join(self.bodies) + settings.suffix).encode()


def java_text(value: Any) -> str:
    """A value as Java's ``toString`` shows it (Struct{a=1}, {k=v, k2=v2}, [a, b], true)."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, Struct):
        shown = [
            f"{f.name}={java_text(value.get_without_default(f.name))}"
            for f in value.schema.fields
            if value.get_without_default(f.name) is not None
        ]
        return "Struct{" + ",".join(shown) + "}"  # fmt: skip
    if isinstance(value, dict):
        return "{" + ", ".join(f"{java_text(k)}={java_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(java_text(v) for v in value) + "]"
    return str(value)


def _plain(value: Any, numeric_decimals: bool) -> Any:
    """A value as JSON takes it, as Kafka's JsonConverter writes data without a schema."""
    if isinstance(value, Struct):
        return {f.name: _plain(value.get(f.name), numeric_decimals) for f in value.schema.fields}
    if isinstance(value, dict):
        return {str(k): _plain(v, numeric_decimals) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v, numeric_decimals) for v in value]
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, decimal.Decimal):
        if numeric_decimals:
            return float(value) if value != value.to_integral_value() else int(value)
        exponent = int(value.as_tuple().exponent)
        unscaled = int(value.scaleb(-exponent))
        size = max(1, (unscaled.bit_length() + 8) // 8)
        return base64.b64encode(unscaled.to_bytes(size, "big", signed=True)).decode()
    if isinstance(value, dt.datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return (moment - _EPOCH) // dt.timedelta(milliseconds=1)
    if isinstance(value, dt.date):
        return (value - _EPOCH.date()).days
    if isinstance(value, dt.time):
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + (
            value.microsecond // 1000
        )
    return value


def rendered(value: Any, settings: Settings) -> str:
    """A record's value in a body: its string form, or its JSON."""
    if not settings.json:
        return java_text(value)
    return json.dumps(_plain(value, settings.numeric_decimals), separators=(",", ":"),
                      ensure_ascii=False)  # fmt: skip


def key_text(record: SinkRecord) -> str:
    return "" if record.key is None else java_text(record.key)


def substituted(pattern: str, record: SinkRecord, encode: bool) -> str:
    key = key_text(record)
    if encode:
        key = quote(key, safe="")
    return pattern.replace("${topic}", record.topic).replace("${key}", key)


def record_headers(record: SinkRecord) -> tuple[tuple[str, str], ...]:
    """The record's Kafka headers, forwarded as HTTP headers (a null value: empty)."""
    return tuple(
        (h.key, "" if h.value is None else _latin1(java_text(h.value)))
        for h in record.headers or ()
    )


def _latin1(value: str) -> str:
    """An HTTP header value: Latin-1 only (anything else escaped)."""
    return value.encode("latin-1", "backslashreplace").decode("latin-1")


@dataclass(frozen=True)
class NullRecord:
    """A record with a null value that ``behavior.on.null.values=fail`` refuses."""

    record: SinkRecord


def requests(records: Iterable[SinkRecord], settings: Settings) -> Iterator[Request | NullRecord]:
    """The records' requests in order; a null value as ``behavior.on.null.values`` says (a
    DELETE request, a NullRecord to fail, or nothing)."""
    current: Request | None = None
    current_key: tuple[str, str, tuple[tuple[str, str], ...]] | None = None
    for record in records:
        headers = record_headers(record)
        url = substituted(settings.url, record, encode=True)
        if record.value is None:
            if settings.on_null in ("ignore", "log"):
                continue
            if current is not None:
                yield current
                current, current_key = None, None
            if settings.on_null == "fail":
                yield NullRecord(record)
            else:
                yield Request("DELETE", url, headers, [record])
            continue
        key = (url, substituted(settings.batch_key, record, encode=False), headers)
        if current is None or key != current_key or len(current.records) >= settings.batch_max:
            if current is not None:
                yield current
            current, current_key = Request(settings.method, url, headers), key
        current.records.append(record)
        current.bodies.append(rendered(record.value, settings))
    if current is not None:
        yield current
