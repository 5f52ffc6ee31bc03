"""A range batch's slice, converted in an executor: the plain path gives the record path's rows."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest

from connect_lite.converters.json import JsonConverter
from connect_lite.converters.simple_header import SimpleHeaderConverter
from connect_lite.converters.string import StringConverter
from connect_lite.kafka.consumer import ConsumedMessage
from connect_lite.pipeline.chunk_work import run_chunk
from connect_lite.pipeline.chunks import SinkInput
from connect_lite.pipeline.executor import Components
from connect_lite.pipeline.range_job import (
    RECORDS,
    OffsetRange,
    _plain_slice_rows,
    _slice_rows,
    conform,
)
from connect_lite.protocol.job_spec import JobSpec

RANGE = OffsetRange("t", 0, 0, 100)


def strings() -> StringConverter:
    converter = StringConverter()
    converter.configure({}, is_key=True)
    return converter


def schemaless_json() -> JsonConverter:
    converter = JsonConverter()
    converter.configure({"schemas.enable": "false"})
    return converter


def headers() -> SimpleHeaderConverter:
    converter = SimpleHeaderConverter()
    converter.configure({})
    return converter


def message(offset: int, value: Any, headers: list[Any] | None = None) -> ConsumedMessage:
    raw = None if value is None else json.dumps(value).encode()
    return ConsumedMessage("t", 0, offset, f"k{offset}".encode(), raw, headers or [],
                           1_700_000_000_000 + offset, "CreateTime")  # fmt: skip


def table(row: dict[str, Any]) -> pa.Table:
    return pa.ipc.open_stream(row["payload"]).read_all()


def record_path(comps: Components, messages: list[ConsumedMessage]) -> list[dict[str, Any]]:
    chunk = run_chunk(comps, SinkInput.of(messages, meta=False))  # type: ignore[arg-type]
    return _slice_rows(RANGE, 0, messages, chunk, comps.header.get())


VALUES = [
    {"id": 1, "name": "a", "tags": ["x"], "deep": {"n": None}},
    {"id": 2, "name": "é", "tags": [], "deep": {"n": 2.5}},
    None,
    {"id": 3, "extra": True},
]


def test_plain_slices_give_the_same_rows_as_the_record_path() -> None:
    comps = Components(JobSpec("j", strings, schemaless_json, headers, ()))
    messages = [message(i, v) for i, v in enumerate(VALUES)]
    plain = _plain_slice_rows(comps, RANGE, 0, messages)
    assert plain is not None and len(plain) == 1
    records = record_path(comps, messages)
    assert [r["kind"] for r in records] == [RECORDS]
    for key in ("first", "last", "count", "group", "meta", "offsets"):
        assert plain[0][key] == records[0][key], key
    assert table(plain[0]).equals(table(records[0]))
    got = table(plain[0]).to_pylist()
    assert [json.loads(r["value"]) if r["value"] else None for r in got] == VALUES
    assert got[0]["value_struct"]["deep"] == {"n": None}
    assert got[3]["value_struct"]["extra"] is True


@pytest.mark.parametrize(
    "messages",
    [
        [message(0, {"a": 1}), message(1, {"a": 2}, [("h", b"v")])],  # headers
        [message(0, {"a": 1}), ConsumedMessage("t", 0, 1, b"k", b"{bad", [], None, "x")],
    ],
    ids=["headers", "a record that fails"],
)
def test_other_slices_take_the_record_path(messages: list[ConsumedMessage]) -> None:
    comps = Components(JobSpec("j", strings, schemaless_json, headers, ()))
    assert _plain_slice_rows(comps, RANGE, 0, messages) is None


def test_conform_fills_missing_fields_and_promotes() -> None:
    narrow = pa.array([{"a": 1, "n": None}, None])
    wide = pa.struct([("a", pa.float64()), ("n", pa.string()), ("b", pa.list_(pa.int64()))])
    out = conform(narrow, wide)
    assert out.type == wide
    assert out.to_pylist() == [{"a": 1.0, "n": None, "b": None}, None]
    stamps = pa.array([1000], pa.timestamp("ms", tz="UTC"))
    assert conform(stamps, pa.timestamp("us", tz="UTC")).to_pylist() == stamps.to_pylist()
