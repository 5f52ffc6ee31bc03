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
from dataclasses import dataclass
from typing import Any

import pytest

from connect_lite.api import Headers, Schema, SchemaBuilder, SinkRecord, Struct
from connect_lite.converters import logical
from connect_lite.pipeline import SinkStage, SparkRuntime, TransformSpec, expressions
from connect_lite.plugins.registry import Plugins
from connect_lite.runtime.components import transform_chain
from tests.integration.pipeline.stages import spec

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
        False,
    ),
    Case(
        "timestamp-converter",
        _one("t", "TimestampConverter$Value", field="born", **{"target.type": "unix"}),
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
    return tuple(TransformSpec(t, p, n) for t, p, n in transform_chain(PLUGINS, config))


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


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
@pytest.mark.parametrize("data", ["struct", "map"])
def test_forms_agree(runtime: SparkRuntime, case: Case, data: str) -> None:
    records = _struct_records() if data == "struct" else _map_records()
    specs = _transform_specs(case.config)
    expected = _apply_each(specs, records)

    stage = SinkStage(runtime, spec(f"forms-{case.name}-{data}", transforms=specs), "forms")
    result = stage.transform(records, tolerate_errors=True)
    arrow = list(result.records)
    for error in result.errors:
        assert error.index is not None
        arrow[error.index] = FAILED
    assert arrow == expected

    chain = [(s.factory(), None if s.predicate is None else s.predicate(), s.negate) for s in specs]
    columns = expressions.run_expressions(runtime, "forms", chain, records)
    if data == "struct" and case.compiles:
        assert columns is not None, f"{case.name} did not compile"
        for i, (got, want) in enumerate(zip(columns, expected, strict=True)):
            assert got == want, f"record {i}"
        assert any(r is not None for r in expected)  # the case keeps some records
    else:
        assert columns is None
