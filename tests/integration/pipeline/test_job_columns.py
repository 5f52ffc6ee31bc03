"""The batch jobs pick the column form for batches with a schema, and fall back to Arrow."""

from __future__ import annotations

import dataclasses
import json

import pytest

from connect_lite.api import Schema, SchemaBuilder, SchemaType, SourceRecord, Struct
from connect_lite.control.components import transform_chain
from connect_lite.pipeline import SinkJob, SourceJob, SparkEngine
from connect_lite.plugins.registry import Plugins
from connect_lite.protocol.job_spec import TransformSpec
from tests.chain_config import chain_config
from tests.integration.pipeline import plugins
from tests.integration.pipeline.jobs import Message, spec

pytestmark = pytest.mark.integration

T = "org.apache.kafka.connect.transforms."
CHAIN = {
    "transforms": "route,insert,mask,drop",
    "transforms.route.type": T + "RegexRouter",
    "transforms.route.regex": "(.*)-raw",
    "transforms.route.replacement": "$1",
    "transforms.insert.type": T + "InsertField$Value",
    "transforms.insert.static.field": "origin",
    "transforms.insert.static.value": "lab",
    "transforms.mask.type": T + "MaskField$Value",
    "transforms.mask.fields": "name",
    "transforms.drop.type": T + "Filter",
    "transforms.drop.predicate": "isAudit",
    "predicates": "isAudit",
    "predicates.isAudit.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
    "predicates.isAudit.pattern": "audit.*",
}
PERSON = plugins.person_schema()
WITH_ORIGIN = (
    SchemaBuilder.struct()
    .name("person")
    .field("id", Schema.INT64_SCHEMA)
    .field("name", Schema.STRING_SCHEMA)
    .field("origin", Schema.OPTIONAL_STRING_SCHEMA)
    .build()
)


def _specs(config: dict[str, str] = CHAIN) -> tuple[TransformSpec, ...]:
    return tuple(
        TransformSpec(t, p, n) for t, p, n in transform_chain(Plugins([]), chain_config(config))
    )


def test_source_batch_with_a_schema_runs_as_columns(engine: SparkEngine) -> None:
    job = SourceJob(
        engine,
        spec("cols-src", plugins.JsonStructConverter, _specs()),
        "task-cols-src",
    )
    records = [
        SourceRecord(
            {"f": 1},
            {"pos": i},
            "audit" if i == 2 else "people-raw",
            Struct(PERSON, {"id": i, "name": f"n{i}"}),
            value_schema=PERSON,
        )
        for i in range(5)
    ]
    result = job.run(records)
    assert job.compiled_batches == 1
    assert result.dropped == [2]
    assert [(r.index, r.topic) for r in result.records] == [(i, "people") for i in (0, 1, 3, 4)]
    assert [json.loads(r.value or b"") for r in result.records] == [
        {"id": i, "name": "", "origin": "lab"} for i in (0, 1, 3, 4)
    ]


def test_sink_batch_with_a_schema_runs_as_columns(engine: SparkEngine) -> None:
    job = SinkJob(
        engine,
        spec("cols-sink", plugins.JsonStructConverter, _specs(), value_args=(PERSON,)),
        "task-cols-sink",
    )
    messages = [
        Message("audit" if i == 1 else "people-raw", 0, i, None, json.dumps(
            {"id": i, "name": f"n{i}"}).encode())
        for i in range(4)
    ]  # fmt: skip
    result = job.run(messages)
    assert job.compiled_batches == 1
    assert result.dropped == [1] and result.indices == [0, 2, 3]
    assert [r.topic for r in result.records] == ["people"] * 3
    assert [r.value for r in result.records] == [
        Struct(WITH_ORIGIN, {"id": i, "name": "", "origin": "lab"}) for i in (0, 2, 3)
    ]
    assert result.next_offsets()  # every input offset still counts, dropped ones too


def test_schemaless_and_failing_batches_use_the_arrow_form(engine: SparkEngine) -> None:
    job = SinkJob(engine, spec("cols-schemaless", plugins.JsonStructConverter, _specs()), "t")
    messages = [Message("people-raw", 0, i, None, json.dumps({"id": i, "name": "x"}).encode())
                for i in range(3)]  # fmt: skip
    result = job.run(messages)
    assert job.compiled_batches == 0
    assert [r.value for r in result.records] == [{"id": i, "name": "", "origin": "lab"}
                                                 for i in range(3)]  # fmt: skip

    failing = SinkJob(
        engine,
        spec("cols-bad", plugins.JsonStructConverter, _specs(), value_args=(PERSON,)),
        "task-cols-bad",
    )
    bad = [*messages, Message("people-raw", 0, 9, None, b"{not json")]
    outcome = failing.run(bad, tolerate_errors=True)
    assert [e.index for e in outcome.errors] == [3]
    assert outcome.errors[0].stage == "VALUE_CONVERTER"
    assert outcome.indices == [0, 1, 2]


def test_sink_rows_that_do_not_fit_the_columns_run_in_the_arrow_form(
    engine: SparkEngine,
) -> None:
    """A tombstone (no schema) among Structs: the batch still runs as columns, the
    tombstone goes through apply (InsertField passes it through, as Kafka), and the records
    keep their input order."""
    no_mask = {**CHAIN, "transforms": "route,insert,drop"}
    job = SinkJob(
        engine,
        spec("cols-mixed", plugins.JsonStructConverter, _specs(no_mask), value_args=(PERSON,)),
        "task-cols-mixed",
    )
    messages = [
        Message("people-raw", 0, i, None, None if i == 2 else json.dumps(
            {"id": i, "name": f"n{i}"}).encode())
        for i in range(5)
    ]  # fmt: skip
    result = job.run(messages)
    assert job.compiled_batches == 1
    assert result.indices == [0, 1, 2, 3, 4]
    assert [r.kafka_offset for r in result.records] == [0, 1, 2, 3, 4]
    assert result.records[2].value is None and result.records[2].topic == "people"
    assert [r.value for r in result.records if r.value is not None] == [
        Struct(WITH_ORIGIN, {"id": i, "name": f"n{i}", "origin": "lab"}) for i in (0, 1, 3, 4)
    ]


def test_the_column_form_can_be_turned_off(engine: SparkEngine) -> None:
    """transforms.columns.enable=false: the same records, through the Arrow form."""
    records = [
        SourceRecord({"f": 1}, {"pos": i}, "people-raw", Struct(PERSON, {"id": i, "name": "x"}),
                     value_schema=PERSON)
        for i in range(3)
    ]  # fmt: skip
    results = []
    for columns in (True, False):
        job_spec = dataclasses.replace(
            spec(f"cols-switch-{columns}", plugins.JsonStructConverter, _specs()), columns=columns
        )
        job = SourceJob(engine, job_spec, f"task-cols-switch-{columns}")
        results.append(job.run(records).records)
        assert job.compiled_batches == (1 if columns else 0)
    assert results[0] == results[1]


def test_a_schema_with_defaults_stays_in_the_arrow_form(engine: SparkEngine) -> None:
    """The transforms read a null field as its default (replace.null.with.default); a column
    would keep the null, so such a batch is not compiled."""
    with_default = (
        SchemaBuilder.struct()
        .name("person")
        .field("id", Schema.INT64_SCHEMA)
        .field("name", SchemaBuilder.of(SchemaType.STRING).optional().default_value("?").build())
        .build()
    )
    job = SourceJob(
        engine, spec("cols-defaults", plugins.JsonStructConverter, _specs()), "task-cols-def"
    )
    records = [
        SourceRecord({"f": 1}, {"pos": i}, "people-raw", Struct(with_default, {"id": i}),
                     value_schema=with_default)
        for i in range(2)
    ]  # fmt: skip
    result = job.run(records)
    assert job.compiled_batches == 0
    assert [json.loads(r.value or b"") for r in result.records] == [
        {"id": i, "name": "", "origin": "lab"} for i in range(2)
    ]
