"""SourceJob on a real local SparkSession: converters, transforms, order, component caching."""

from __future__ import annotations

import functools
import json
from collections import Counter
from pathlib import Path

import pytest

from connect_lite.api import Headers, SourceRecord, Struct
from connect_lite.pipeline import ProducedRecord, SourceJob, SparkEngine
from connect_lite.protocol.job_spec import TransformSpec
from tests.integration.pipeline import plugins
from tests.integration.pipeline.jobs import spec

pytestmark = pytest.mark.integration


def rec(i: int, value: object, topic: str = "t", **kw: object) -> SourceRecord:
    return SourceRecord({"file": "f"}, {"pos": i}, topic, value, **kw)


def test_schemaless_values_keys_headers_and_metadata(engine: SparkEngine):
    job = SourceJob(engine, spec("src-basic"), "task-src-basic")
    records = [
        rec(0, "a", key="k0", kafka_partition=2, timestamp=11, headers=Headers().add("h", 1)),
        rec(1, None, key=None),
        rec(2, "c", topic="other", headers=Headers().add("x", "y").add("x", None)),
    ]
    result = job.run(records)
    assert result.size == 3 and result.dropped == [] and result.errors == []
    assert result.records == [
        ProducedRecord(0, "t", 2, b"k0", b"a", [("h", b"1")], 11),
        ProducedRecord(1, "t", None, None, None, [], None),
        ProducedRecord(2, "other", None, None, b"c", [("x", b"y"), ("x", None)], None),
    ]


def test_struct_values_are_serialized(engine: SparkEngine):
    schema = plugins.person_schema()
    job = SourceJob(engine, spec("src-struct", plugins.JsonStructConverter), "task-src-struct")
    records = [
        rec(i, Struct(schema, {"id": i, "name": f"n{i}"}), value_schema=schema) for i in range(5)
    ]
    result = job.run(records)
    assert [json.loads(r.value) for r in result.records] == [
        {"id": i, "name": f"n{i}"} for i in range(5)
    ]


def test_transform_rewrites_and_drops_and_predicate_negates(engine: SparkEngine):
    transforms = (
        TransformSpec(functools.partial(plugins.DropIfContains, "drop")),
        # upper-case every record NOT on topic "keep-case"
        TransformSpec(plugins.UpperValue, functools.partial(plugins.TopicIs, "keep-case"), True),
    )
    job = SourceJob(engine, spec("src-tx", transforms=transforms), "task-src-tx")
    records = [
        rec(0, "one"),
        rec(1, "drop me"),
        rec(2, "two", topic="keep-case"),
        rec(3, "three", topic="x", kafka_partition=1, timestamp=5),
    ]
    result = job.run(records)
    assert result.dropped == [1]
    assert [(r.index, r.topic, r.partition, r.value, r.timestamp) for r in result.records] == [
        (0, "t", None, b"ONE", None),
        (2, "keep-case", None, b"two", None),
        (3, "x", 1, b"THREE", 5),
    ]
    assert [r is not None for r in result.by_index()] == [True, False, True, True]


def test_order_is_preserved_over_partitions(engine: SparkEngine):
    transforms = (TransformSpec(functools.partial(plugins.DropIfContains, "7")),)
    job = SourceJob(engine, spec("src-order", transforms=transforms), "task-src-order")
    records = [rec(i, f"v{i}", key=str(i)) for i in range(2_003)]
    result = job.run(records)
    expected = [i for i in range(2_003) if "7" not in f"v{i}"]
    assert [r.index for r in result.records] == expected
    assert [r.key for r in result.records] == [str(i).encode() for i in expected]
    assert result.dropped == [i for i in range(2_003) if "7" in f"v{i}"]


def test_vectorized_converter_gives_the_same_bytes(engine: SparkEngine):
    plain = SourceJob(engine, spec("src-plain"), "task-src-vec")
    vector = SourceJob(engine, spec("src-vec", plugins.BatchUtf8Converter), "task-src-vec")
    records = [rec(i, f"v{i}" if i % 5 else None, topic=f"t{i % 3}") for i in range(500)]
    assert vector.run(records).records == plain.run(records).records


def test_components_are_built_once_per_worker_process(engine: SparkEngine, tmp_path: Path):
    builds = tmp_path / "builds.log"
    transforms = (TransformSpec(functools.partial(plugins.build, plugins.UpperValue, str(builds))),)
    job = SourceJob(
        engine, spec("src-cache", transforms=transforms, builds=str(builds)), "task-src-cache"
    )
    batches = 6
    for b in range(batches):
        result = job.run([rec(i, f"b{b}-{i}", key="k") for i in range(40)])
        assert result.records[0].value == f"B{b}-0".upper().encode()
    lines = builds.read_text().split()
    per_component = Counter(zip(lines[::2], lines[1::2], strict=True))
    names = {name for name, _ in per_component}
    assert names == {"key:Utf8Converter", "Utf8Converter", "UpperValue"}
    assert set(per_component.values()) == {1}  # never twice in one process
    tasks_run = batches * engine.default_parallelism
    for name in names:
        assert sum(1 for n, _ in per_component if n == name) < tasks_run
