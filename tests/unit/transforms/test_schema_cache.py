"""SchemaCache (Kafka's schemaUpdateCache) and the transforms that build schemas through it:
equal input schemas give the same output schema object, equal to an uncached build."""

from __future__ import annotations

from typing import Any

import pytest

from connect_lite.api import (
    DataError,
    Schema,
    SchemaBuilder,
    SchemaType,
    SourceRecord,
    Struct,
)
from connect_lite.transforms.base import SCHEMA_CACHE_SIZE, BuiltinTransformation, SchemaCache
from connect_lite.transforms.cast import CastValue
from connect_lite.transforms.flatten import FlattenValue
from connect_lite.transforms.header_from import HeaderFromValue
from connect_lite.transforms.hoist_field import HoistFieldValue
from connect_lite.transforms.insert_field import InsertFieldValue
from connect_lite.transforms.replace_field import ReplaceFieldValue
from connect_lite.transforms.set_schema_metadata import SetSchemaMetadataValue
from connect_lite.transforms.timestamp_converter import TimestampConverterValue
from connect_lite.transforms.value_to_key import ValueToKey


def struct_schema(id_schema: Schema = Schema.INT64_SCHEMA) -> Schema:
    """A new (equal but not identical) schema on every call."""
    inner = SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA).build()
    return (
        SchemaBuilder.struct()
        .name("row")
        .field("id", id_schema)
        .field("name", Schema.OPTIONAL_STRING_SCHEMA)
        .field("ts", Schema.INT64_SCHEMA)
        .field("inner", inner)
        .build()
    )


def record(schema: Schema, id_: int = 7) -> SourceRecord:
    inner_schema = schema.fields_by_name["inner"].schema
    value = Struct(
        schema,
        {"id": id_, "name": "n", "ts": 1_700_000_000_000, "inner": Struct(inner_schema, {"x": 1})},
    )
    return SourceRecord(None, None, "t", value, value_schema=schema, timestamp=1)


TRANSFORMS: dict[str, tuple[type[BuiltinTransformation], dict[str, str]]] = {
    "InsertField": (
        InsertFieldValue,
        {"topic.field": "topic", "static.field": "s", "static.value": "v"},
    ),
    "ReplaceField": (ReplaceFieldValue, {"exclude": "name", "renames": "id:key"}),
    "Cast": (CastValue, {"spec": "id:string"}),
    "Flatten": (FlattenValue, {}),
    "HoistField": (HoistFieldValue, {"field": "wrapped"}),
    "ValueToKey": (ValueToKey, {"fields": "id,name"}),
    "SetSchemaMetadata": (
        SetSchemaMetadataValue,
        {"schema.name": "renamed", "schema.version": "2"},
    ),
    "TimestampConverter": (TimestampConverterValue, {"target.type": "Timestamp", "field": "ts"}),
    "HeaderFrom": (HeaderFromValue, {"fields": "name", "headers": "h", "operation": "move"}),
}


def configured(name: str) -> BuiltinTransformation:
    kind, config = TRANSFORMS[name]
    transform = kind()
    transform.configure(config)
    return transform


def output_schema(name: str, out: Any) -> Schema:
    return out.key_schema if name == "ValueToKey" else out.value_schema


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_equal_input_schemas_share_one_cached_output_schema(name: str) -> None:
    transform = configured(name)
    first = transform.apply(record(struct_schema(), 1))
    second_input = record(struct_schema(), 2)  # an equal schema, a different object
    second = transform.apply(second_input)
    assert output_schema(name, second) is output_schema(name, first)
    # results equal those of a transform that has never seen a schema (nothing cached)
    assert second == configured(name).apply(second_input)
    assert output_schema(name, first) != struct_schema()  # the transform did change it


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_a_different_input_schema_gets_its_own_output_schema(name: str) -> None:
    transform = configured(name)
    first = transform.apply(record(struct_schema()))
    other_input = record(struct_schema(Schema.OPTIONAL_INT64_SCHEMA))
    other = transform.apply(other_input)
    assert other == configured(name).apply(other_input)
    assert output_schema(name, other) != output_schema(name, first)


def test_an_unhashable_schema_is_built_every_time() -> None:
    listy = SchemaBuilder.array(Schema.INT32_SCHEMA).optional().default_value([1]).build()
    schema = SchemaBuilder.struct().field("l", listy).build()
    with pytest.raises(TypeError):
        hash(schema)
    transform = configured("InsertField")
    value = Struct(schema, {"l": [2]})
    first = transform.apply(SourceRecord(None, None, "t", value, value_schema=schema))
    second = transform.apply(SourceRecord(None, None, "t", value, value_schema=schema))
    assert first == second
    assert first.value_schema is not second.value_schema
    assert first.value.get("l") == [2] and first.value.get("topic") == "t"


def counting_cache(size: int = SCHEMA_CACHE_SIZE) -> tuple[SchemaCache, list[Schema]]:
    built: list[Schema] = []

    def build(schema: Schema) -> Schema:
        built.append(schema)
        return SchemaBuilder.struct().field("wrapped", schema).build()

    return SchemaCache(build, size), built


def named(i: int) -> Schema:
    return SchemaBuilder.of(SchemaType.STRING).name(f"s{i}").build()


def test_cache_builds_once_per_equal_schema() -> None:
    cache, built = counting_cache()
    first = cache.get(named(1))
    assert cache.get(named(1)) is first  # equal, not identical: a dict hit
    assert cache.get(named(2)) is not first
    assert cache.get(named(1)) is first  # after another schema: still cached
    assert built == [named(1), named(2)]
    assert first == SchemaBuilder.struct().field("wrapped", named(1)).build()


def test_cache_holds_at_most_its_size_and_drops_the_oldest() -> None:
    cache, built = counting_cache()
    for i in range(SCHEMA_CACHE_SIZE + 1):
        cache.get(named(i))
    assert len(cache) == SCHEMA_CACHE_SIZE
    cache.get(named(SCHEMA_CACHE_SIZE))  # the newest: still there
    assert len(built) == SCHEMA_CACHE_SIZE + 1
    cache.get(named(0))  # the oldest: dropped, so built again
    assert len(built) == SCHEMA_CACHE_SIZE + 2
    assert len(cache) == SCHEMA_CACHE_SIZE


def test_cache_does_not_keep_errors() -> None:
    calls: list[Schema] = []

    def build(schema: Schema) -> Schema:
        calls.append(schema)
        if len(calls) == 1:
            raise DataError("first build fails")
        return schema

    cache = SchemaCache(build)
    with pytest.raises(DataError):
        cache.get(named(1))
    assert cache.get(named(1)) == named(1)
    assert len(calls) == 2 and len(cache) == 1


def test_failing_builds_still_fail_for_every_record() -> None:
    transform = configured("ValueToKey")
    transform.configure({"fields": "missing"})
    for _ in range(2):
        with pytest.raises(DataError, match="Field does not exist: missing"):
            transform.apply(record(struct_schema()))


def test_reconfiguring_starts_a_new_cache() -> None:
    transform = configured("HoistField")
    first = transform.apply(record(struct_schema()))
    transform.configure({"field": "other"})
    second = transform.apply(record(struct_schema()))
    assert [f.name for f in first.value_schema.fields] == ["wrapped"]
    assert [f.name for f in second.value_schema.fields] == ["other"]
