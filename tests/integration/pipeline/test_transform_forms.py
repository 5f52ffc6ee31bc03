"""The shared test table: every built-in transform through its three forms, compared.

Each case is a Kafka-style connector config fragment. It runs over one batch with a schema
(Structs) and one without (maps), and each batch goes through:

- ``apply`` record-at-a-time on the driver (the contract),
- the Arrow form: the chain inside ``mapInArrow`` in Spark's Python workers,
- the column form: the chain compiled to Spark column expressions (batches with a schema).

All forms must give the same records. A case marks whether its schema batch compiles; a
chain that does not compile must say so (None) rather than give other results.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import pickle
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from connect_lite.api import (
    DataError,
    Headers,
    Schema,
    SchemaAndValue,
    SchemaBuilder,
    SinkRecord,
    SourceRecord,
    Struct,
    logical,
)
from connect_lite.connectors.postgres_cdc.config import Settings
from connect_lite.connectors.postgres_cdc.source import _SOURCE as CDC_SOURCE
from connect_lite.connectors.postgres_cdc.source import table_of
from connect_lite.control.components import transform_chain
from connect_lite.pipeline import SinkJob, SourceJob, SparkEngine
from connect_lite.plugins.registry import Plugins
from connect_lite.protocol.job_spec import JobSpec, TransformSpec
from tests.chain_config import chain_config
from tests.integration.pipeline import plugins
from tests.integration.pipeline.column_forms import run_expressions
from tests.integration.pipeline.jobs import Message, spec

pytestmark = pytest.mark.integration

T = "org.apache.kafka.connect.transforms."
P = "org.apache.kafka.connect.transforms.predicates."

NESTED = (
    SchemaBuilder.struct()
    .name("Nested")
    .field("a", Schema.INT64_SCHEMA)
    .field("b", Schema.OPTIONAL_STRING_SCHEMA)
    .optional()
    .build()
)
VALUE = (
    SchemaBuilder.struct()
    .name("Person")
    .version(1)
    .field("id", Schema.INT32_SCHEMA)
    .field("name", Schema.STRING_SCHEMA)
    .field("email", Schema.OPTIONAL_STRING_SCHEMA)
    .field("score", Schema.OPTIONAL_FLOAT64_SCHEMA)
    .field("ratio", Schema.OPTIONAL_FLOAT32_SCHEMA)
    .field("active", Schema.BOOLEAN_SCHEMA)
    .field("born", logical.timestamp_schema(optional=True))
    .field("nested", NESTED)
    .build()
)
KEY = SchemaBuilder.struct().name("PersonKey").field("id", Schema.INT32_SCHEMA).build()
EPOCH_2024 = dt.datetime(2024, 5, 17, 10, 30, tzinfo=dt.UTC)


def _struct_records() -> list[SinkRecord]:
    out = []
    for i in range(12):
        nested = None if i % 5 == 4 else Struct(NESTED, {"a": i * 10, "b": f"b{i}"})
        value = Struct(
            VALUE,
            {
                "id": i,
                "name": f"name-{i}",
                "email": None if i % 3 == 0 else f"p{i}@example.com",
                "score": i / 4,
                "ratio": i / 10,  # not exact in float32: must not be rounded on the way
                "active": i % 2 == 0,
                "born": None if i % 4 == 1 else EPOCH_2024 + dt.timedelta(days=i),
                "nested": nested,
            },
        )
        headers = Headers.of([("trace", f"t{i}")] if i % 2 else [])
        topic = "orders-raw" if i % 3 else "audit"
        out.append(
            SinkRecord(
                topic, i % 2, 100 + i, Struct(KEY, {"id": i}), value, KEY, VALUE,
                1_715_000_000_000 + i, "CreateTime", headers,
            )
        )  # fmt: skip
    return out


def _map_records() -> list[SinkRecord]:
    out = []
    for i in range(12):
        value: dict[str, Any] | None = {
            "id": i,
            "name": f"name-{i}",
            "email": None if i % 3 == 0 else f"p{i}@example.com",
            "score": i / 4,
            "active": i % 2 == 0,
            "nested": {"a": i * 10, "b": f"b{i}"},
        }
        if i == 7:
            value = None  # a tombstone
        headers = Headers.of([("trace", f"t{i}")] if i % 2 else [])
        topic = "orders-raw" if i % 3 else "audit"
        out.append(
            SinkRecord(
                topic, i % 2, 100 + i, {"id": i}, value, None, None,
                1_715_000_000_000 + i, "CreateTime", headers,
            )
        )  # fmt: skip
    return out


@dataclass(frozen=True)
class Case:
    name: str
    config: dict[str, str]
    compiles: bool  # whether the batch with a schema runs as Spark columns


def _one(alias: str, type_: str, **settings: str) -> dict[str, str]:
    config = {"transforms": alias, f"transforms.{alias}.type": T + type_}
    config.update({f"transforms.{alias}.{k.replace('_', '.')}": v for k, v in settings.items()})
    return config


def _gated(config: dict[str, str], pred: str, negate: bool = False, **settings: str) -> dict:
    alias = config["transforms"]
    config = dict(config, predicates="p", **{"predicates.p.type": P + pred})
    config[f"transforms.{alias}.predicate"] = "p"
    if negate:
        config[f"transforms.{alias}.negate"] = "true"
    config.update({f"predicates.p.{k}": v for k, v in settings.items()})
    return config


CASES = [
    Case("regex-router", _one("r", "RegexRouter", regex="(.*)-raw", replacement="$1-clean"), True),
    Case(
        "insert-field",
        _one(
            "i",
            "InsertField$Value",
            topic_field="topic",
            partition_field="partition",
            offset_field="offset",
            timestamp_field="ts",
            static_field="origin",
            static_value="lab",
        ),
        True,
    ),
    Case("insert-field-key", _one("i", "InsertField$Key", topic_field="topic!"), True),
    Case(
        "replace-field-exclude-renames",
        _one("r", "ReplaceField$Value", exclude="email", renames="name:full_name,id:ident"),
        True,
    ),
    Case("replace-field-include", _one("r", "ReplaceField$Value", include="id,name"), True),
    Case("mask-field", _one("m", "MaskField$Value", fields="name,id,active,score"), True),
    Case(
        "mask-field-replacement",
        _one("m", "MaskField$Value", fields="name,email", replacement="***"),
        True,
    ),
    Case("extract-field", _one("e", "ExtractField$Value", field="name"), True),
    Case("extract-field-key", _one("e", "ExtractField$Key", field="id"), True),
    Case("extract-optional-field", _one("e", "ExtractField$Value", field="email"), False),
    Case(
        "extract-nested-under-optional",
        _one("e", "ExtractField$Value", field="nested.a", **{"field.syntax.version": "V2"}),
        False,
    ),
    Case("hoist-field", _one("h", "HoistField$Value", field="wrapped"), True),
    Case("value-to-key", _one("v", "ValueToKey", fields="id,name"), True),
    Case(
        "set-schema-metadata",
        _one("s", "SetSchemaMetadata$Value", **{"schema.name": "Renamed", "schema.version": "7"}),
        True,
    ),
    Case("flatten", _one("f", "Flatten$Value", delimiter="_"), True),
    Case("cast-widen", _one("c", "Cast$Value", spec="id:int64,active:int8"), True),
    Case("cast-to-string", _one("c", "Cast$Value", spec="id:string,active:string"), True),
    Case("cast-float", _one("c", "Cast$Value", spec="score:int32"), False),
    Case("filter-topic", _gated(_one("f", "Filter"), "TopicNameMatches", pattern="orders.*"), True),
    Case(
        "filter-not-topic",
        _gated(_one("f", "Filter"), "TopicNameMatches", True, pattern="orders.*"),
        True,
    ),
    Case("filter-header", _gated(_one("f", "Filter"), "HasHeaderKey", name="trace"), True),
    Case("filter-tombstone", _gated(_one("f", "Filter"), "RecordIsTombstone"), True),
    Case(
        "router-gated",
        _gated(
            _one("r", "RegexRouter", regex="(.*)-raw", replacement="$1-gated"),
            "HasHeaderKey",
            name="trace",
        ),
        True,
    ),
    Case(
        "timestamp-router",
        _one("t", "TimestampRouter", **{"topic.format": "${topic}-${timestamp}"}),
        True,
    ),
    Case(
        "timestamp-router-hours",
        _one("t", "TimestampRouter", **{"timestamp.format": "yyyy-MM-dd_HH.mm"}),
        True,
    ),
    Case(
        "timestamp-router-text",
        _one("t", "TimestampRouter", **{"timestamp.format": "EEE"}),
        False,
    ),
    Case(
        "timestamp-converter",
        _one("t", "TimestampConverter$Value", field="born", **{"target.type": "unix"}),
        True,
    ),
    Case(
        "timestamp-converter-back",
        {
            "transforms": "unix,back",
            "transforms.unix.type": T + "TimestampConverter$Value",
            "transforms.unix.field": "born",
            "transforms.unix.target.type": "unix",
            "transforms.back.type": T + "TimestampConverter$Value",
            "transforms.back.field": "born",
            "transforms.back.target.type": "Timestamp",
        },
        True,
    ),
    Case(
        "timestamp-converter-string",
        _one(
            "t",
            "TimestampConverter$Value",
            field="born",
            **{"target.type": "string", "format": "yyyy-MM-dd"},
        ),
        False,
    ),
    Case("insert-header", _one("h", "InsertHeader", header="h1", **{"value.literal": "x"}), False),
    Case("drop-headers", _one("d", "DropHeaders", headers="trace"), False),
    Case(
        "header-from",
        _one("h", "HeaderFrom$Value", fields="id", headers="pid", operation="copy"),
        False,
    ),
    Case(
        "source-chain",
        {
            "transforms": "route,insert,mask",
            "transforms.route.type": T + "RegexRouter",
            "transforms.route.regex": "(.*)-raw",
            "transforms.route.replacement": "$1",
            "transforms.insert.type": T + "InsertField$Value",
            "transforms.insert.static.field": "origin",
            "transforms.insert.static.value": "lab",
            "transforms.mask.type": T + "MaskField$Value",
            "transforms.mask.fields": "email",
        },
        True,
    ),
]

PLUGINS = Plugins([])


def _transform_specs(config: dict[str, str]) -> tuple[TransformSpec, ...]:
    return tuple(
        TransformSpec(t, p, n) for t, p, n in transform_chain(PLUGINS, chain_config(config))
    )


FAILED = "failed"
"""What a form gives for a record the chain raised on (the same records must fail in all)."""


def _apply_each(specs: tuple[TransformSpec, ...], records: list[SinkRecord]) -> list[Any]:
    chain = [(s.factory(), None if s.predicate is None else s.predicate(), s.negate) for s in specs]
    out: list[Any] = []
    for record in records:
        for transform, predicate, negate in chain:
            try:
                if predicate is not None and bool(predicate.test(record)) == negate:
                    continue
                record = transform.apply(record)
            except Exception:
                record = FAILED
                break
            if record is None:
                break
        out.append(record)
    return out


def _kept(results: list[Any]) -> list[Any]:
    """The records a chain kept: neither dropped (None) nor FAILED."""
    return [r for r in results if r is not None and r is not FAILED]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
@pytest.mark.parametrize("data", ["struct", "map"])
def test_forms_agree(engine: SparkEngine, case: Case, data: str) -> None:
    records = _struct_records() if data == "struct" else _map_records()
    specs = _transform_specs(case.config)
    expected = _apply_each(specs, records)

    job = SinkJob(engine, spec(f"forms-{case.name}-{data}", transforms=specs), "forms")
    result = job.transform(records, tolerate_errors=True)
    arrow = list(result.records)
    for error in result.errors:
        assert error.index is not None
        arrow[error.index] = FAILED
    assert arrow == expected

    chain = [(s.factory(), None if s.predicate is None else s.predicate(), s.negate) for s in specs]
    columns = run_expressions(engine, "forms", chain, records)
    if data == "struct" and case.compiles:
        assert columns is not None, f"{case.name} did not compile"
        for i, (got, want) in enumerate(zip(columns, expected, strict=True)):
            assert got == want, f"record {i}"
        assert _kept(expected), "the case keeps no record: nothing was compared"
    else:
        assert columns is None


@pytest.mark.parametrize(
    ("name", "specs", "compiles"),
    [
        ("own-column-form", (TransformSpec(plugins.TopicSuffix),), True),
        ("inherited-column-form", (TransformSpec(plugins.InsertFieldThenSuffix),), False),
        (
            "predicate-without-column-form",
            (TransformSpec(plugins.TopicSuffix, functools.partial(plugins.TopicIs, "audit")),),
            False,
        ),
    ],
)
def test_third_party_column_forms(
    engine: SparkEngine, name: str, specs: tuple[TransformSpec, ...], compiles: bool
) -> None:
    """A plugin's own column form runs; one inherited from a class of another module does
    not (the subclass changed apply), nor does a chain whose predicate has none."""
    records = _struct_records()
    expected = _apply_each(specs, records)
    assert _kept(expected), "the case keeps no record: nothing was compared"
    chain = [(s.factory(), None if s.predicate is None else s.predicate(), s.negate) for s in specs]
    columns = run_expressions(engine, f"third-{name}", chain, records)
    if compiles:
        assert columns == expected
    else:
        assert columns is None
        job = SinkJob(engine, spec(f"third-{name}", transforms=specs), "forms")
        assert list(job.transform(records, tolerate_errors=True).records) == expected


UNWRAP = "io.debezium.transforms.ExtractNewRecordState"
CDC_TABLE = table_of(
    Settings.parse({"database.hostname": "h", "database.user": "u", "database.dbname": "d",
                    "topic.prefix": "srv"}),
    "public", "orders",
    [("id", 23, -1, True, True, "nextval('orders_id_seq'::regclass)"),
     ("item", 25, -1, False, False, "'none'::text"), ("qty", 20, -1, False, False, None)],
)  # fmt: skip


def _change_events() -> list[SinkRecord]:
    """Debezium change events of one table: snapshot rows, inserts, updates, deletes and a
    truncate, some with nulls in a column that has a default (no tombstones: a null value
    keeps a batch out of the column form)."""
    out = []
    for i in range(14):
        op = "rtcudd"[i % 6] if i != 9 else "t"
        row = {"id": i, "item": None if i % 4 == 1 else f"item-{i}", "qty": i * 3}
        source = Struct(CDC_SOURCE, {
            "version": "2.7.4.Final", "connector": "postgresql", "name": "srv", "db": "d",
            "ts_ms": 1000 + i, "schema": "public", "table": "orders", "lsn": 50 + i,
        })  # fmt: skip
        before = Struct(CDC_TABLE.value_schema, row) if op in "ud" else None
        after = Struct(CDC_TABLE.value_schema, row) if op in "rcu" else None
        value = Struct(CDC_TABLE.envelope, {"before": before, "after": after, "source": source,
                                            "op": op, "ts_ms": 2000 + i})  # fmt: skip
        key = Struct(CDC_TABLE.key_schema, {"id": i})  # type: ignore[arg-type]
        out.append(
            SinkRecord(CDC_TABLE.topic, 0, 10 + i, key, value, CDC_TABLE.key_schema,
                       CDC_TABLE.envelope, 1_715_000_000_000 + i, "CreateTime")
        )  # fmt: skip
    return out


@pytest.mark.parametrize(
    ("name", "settings", "compiles"),
    [
        ("unwrap", {}, True),
        ("unwrap-rewrite", {"delete.tombstone.handling.mode": "rewrite"}, True),
        ("unwrap-fields", {"add.fields": "op,table,source.ts_ms,lsn:at"}, True),
        (
            "unwrap-rewrite-fields",
            {
                "delete.tombstone.handling.mode": "rewrite-with-tombstone",
                "add.fields": "op,ts_ms,source.lsn",
            },
            True,
        ),
        ("unwrap-delete-as-null", {"delete.tombstone.handling.mode": "tombstone"}, True),
        ("unwrap-legacy-none", {"delete.handling.mode": "none", "drop.tombstones": "false"}, True),
        ("unwrap-null-fields", {"delete.handling.mode": "none", "add.fields": "op"}, False),
        ("unwrap-field-with-default", {"add.fields": "snapshot"}, False),  # unset: null
        ("unwrap-headers", {"add.headers": "op"}, False),
        ("unwrap-route", {"route.by.field": "item"}, False),
    ],
)
def test_unwrap_forms_agree(
    engine: SparkEngine, name: str, settings: dict[str, str], compiles: bool
) -> None:
    """Debezium's ExtractNewRecordState in the column form where it has one, the record form
    elsewhere: the same records as ``apply``, dropped deletes and truncates included."""
    records = _change_events()
    config = {"transforms": "u", "transforms.u.type": UNWRAP}
    config.update({f"transforms.u.{k}": v for k, v in settings.items()})
    specs = _transform_specs(config)
    expected = _apply_each(specs, records)
    assert _kept(expected) and None in expected, "keeps some records and drops others"
    job = SinkJob(engine, spec(f"forms-{name}", transforms=specs), "forms")
    assert list(job.transform(records, tolerate_errors=True).records) == expected
    chain = [(s.factory(), None, False) for s in specs]
    columns = run_expressions(engine, f"forms-{name}", chain, records)
    if compiles:
        assert columns is not None, f"{name} did not compile"
        for i, (got, want) in enumerate(zip(columns, expected, strict=True)):
            assert got == want, f"record {i}"
    else:
        assert columns is None


def _produced(p: Any) -> tuple[Any, ...]:
    """A produced record with its key and value unpickled (pickles of equal values may differ)."""
    key, value = (pickle.loads(b) if b is not None else None for b in (p.key, p.value))
    return (p.index, p.topic, p.partition, p.timestamp, key, value, p.headers)


def _job_spec(name: str, specs: tuple[TransformSpec, ...], columns: bool) -> JobSpec:
    return JobSpec(
        name,
        plugins.PickleConverter,
        plugins.PickleConverter,
        plugins.PickleHeaderConverter,
        specs,
        columns=columns,
    )


def _messages(records: list[SinkRecord]) -> list[Message]:
    """The records as consumed messages, keys, values and headers pickled."""
    return [
        Message(
            r.topic, r.kafka_partition, r.kafka_offset,
            pickle.dumps(SchemaAndValue(r.key_schema, r.key)),
            pickle.dumps(SchemaAndValue(r.value_schema, r.value)),
            [(h.key, pickle.dumps(SchemaAndValue(h.schema, h.value))) for h in r.headers],
            r.timestamp, "CreateTime",
        )
        for r in records
    ]  # fmt: skip


@pytest.mark.parametrize("case", [c for c in CASES if c.compiles], ids=lambda c: c.name)
def test_batch_jobs_give_the_same_records_in_both_forms(engine: SparkEngine, case: Case) -> None:
    """The production paths: a source batch and a sink batch (bytes in) with a schema, run
    with the column form and with the Arrow form, give the same results."""
    records = _struct_records()
    specs = _transform_specs(case.config)
    expected = _sink_batches_agree(engine, case.name, specs, records)
    sources = _as_sources(records)
    if case.name == "insert-field":  # offset.field needs a sink record (Kafka's rule)
        _assert_every_source_record_fails(engine, case, specs, sources)
        return
    _source_batches_agree(engine, case.name, specs, sources, len(expected))


@pytest.mark.parametrize(
    "settings",
    [{}, {"delete.handling.mode": "none", "drop.tombstones": "false"},
     {"delete.tombstone.handling.mode": "rewrite", "add.fields": "op,source.lsn"}],
    ids=["drop", "none", "rewrite-fields"],
)  # fmt: skip
def test_unwrap_batch_jobs_run_as_columns(engine: SparkEngine, settings: dict[str, str]) -> None:
    """Debezium's events (their schemas have defaults) through ExtractNewRecordState: the
    sink and source batches compile, and give what the Arrow form gives."""
    config = {"transforms": "u", "transforms.u.type": UNWRAP}
    config.update({f"transforms.u.{k}": v for k, v in settings.items()})
    specs = _transform_specs(config)
    records = _change_events()
    expected = _sink_batches_agree(engine, f"unwrap-{len(settings)}", specs, records)
    _source_batches_agree(
        engine, f"unwrap-{len(settings)}", specs, _as_sources(records), len(expected)
    )


def _sink_batches_agree(
    engine: SparkEngine, name: str, specs: tuple[TransformSpec, ...], records: list[SinkRecord]
) -> list[Any]:
    """The records as one sink batch, with and without the column form: the same results,
    those of ``apply`` (returned)."""
    expected = _kept(_apply_each(specs, records))
    messages = _messages(records)
    sink_results = []
    for columns in (True, False):
        job = SinkJob(engine, _job_spec(f"sink-{name}-{columns}", specs, columns), "s")
        sink_results.append(job.run(messages, tolerate_errors=True))
        assert job.compiled_batches == int(columns)
    assert sink_results[0].records == sink_results[1].records == expected
    assert sink_results[0].dropped == sink_results[1].dropped
    return expected


def _as_sources(records: list[SinkRecord]) -> list[SourceRecord]:
    return [
        SourceRecord(
            {"p": r.kafka_partition}, {"o": r.kafka_offset}, r.topic, r.value, r.key,
            r.kafka_partition, r.key_schema, r.value_schema, r.timestamp, r.headers,
        )
        for r in records
    ]  # fmt: skip


def _source_batches_agree(
    engine: SparkEngine,
    name: str,
    specs: tuple[TransformSpec, ...],
    sources: list[SourceRecord],
    count: int,
) -> None:
    """The records as one source batch, with and without the column form: the same
    ``count`` records produced."""
    produced = []
    for columns in (True, False):
        job = SourceJob(engine, _job_spec(f"src-{name}-{columns}", specs, columns), "s")
        result = job.run(sources, tolerate_errors=True)
        assert job.compiled_batches == int(columns)
        produced.append([_produced(p) for p in result.records])
    assert produced[0] == produced[1]
    assert len(produced[0]) == count


NOT_A_SINK_RECORD = (
    "Only SinkRecord supported for [field insertion], found: "
    "org.apache.kafka.connect.source.SourceRecord"
)


def _assert_every_source_record_fails(
    engine: SparkEngine, case: Case, specs: tuple[TransformSpec, ...], sources: list[Any]
) -> None:
    """InsertField's offset.field on source records: Kafka's DataException for each record,
    in both forms; raised by default, and reported per record when errors are tolerated."""
    for columns in (True, False):
        job = SourceJob(engine, _job_spec(f"src-{case.name}-{columns}", specs, columns), "s")
        with pytest.raises(DataError, match=re.escape(NOT_A_SINK_RECORD)) as raised:
            job.run(sources)
        assert raised.value.stage == "TRANSFORMATION"  # type: ignore[attr-defined]
        assert raised.value.record_index == 0  # type: ignore[attr-defined]
        tolerated = job.run(sources, tolerate_errors=True)
        assert tolerated.records == []
        assert [e.index for e in tolerated.errors] == list(range(len(sources)))
        assert {(e.stage, e.message) for e in tolerated.errors} == {
            ("TRANSFORMATION", NOT_A_SINK_RECORD)
        }


FIRST_SINK_BATCH = """
import json
import tests.integration.pipeline.conftest as conftest
import tests.integration.pipeline.test_transform_forms as forms
from connect_lite.pipeline import SinkJob, SparkEngine

engine = SparkEngine(conftest.SPARK_CONF)  # lazy: no session until a batch job needs one,
try:  # as for a worker's first batch while its background start is still under way
    case = next(c for c in forms.CASES if c.name == "regex-router")
    specs = forms._transform_specs(case.config)
    job = SinkJob(engine, forms._job_spec("first", specs, True), "s")
    result = job.run(forms._messages(forms._struct_records()), tolerate_errors=True)
    print(json.dumps({"compiled": job.compiled_batches, "records": len(result.records)}))
finally:
    engine.stop()
"""


@pytest.mark.timeout(240)
def test_a_sink_batch_before_the_session_exists_runs_as_columns(tmp_path: Path) -> None:
    """In a fresh process (no SparkContext yet), the first sink batch of a compiling chain."""
    script = tmp_path / "first_sink_batch.py"
    script.write_text(FIRST_SINK_BATCH)
    repo = str(Path(__file__).resolve().parents[3])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([repo, os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=200
    )
    assert run.returncode == 0, run.stderr
    outcome = json.loads(run.stdout.strip().splitlines()[-1])
    assert outcome == {"compiled": 1, "records": 12}
