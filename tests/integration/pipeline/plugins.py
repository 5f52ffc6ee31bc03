"""Tiny converters, transforms and predicates for the pipeline tests (pickled by value)."""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import time
from typing import Any

from connect_lite.api import (
    Converter,
    DataError,
    HeaderConverter,
    Predicate,
    RetriableError,
    Schema,
    SchemaAndValue,
    Struct,
    Transformation,
)
from connect_lite.api.column_form import ColumnFrame, ReplaceMatch
from connect_lite.transforms.insert_field import InsertFieldValue


def record_build(path: str | None, name: str) -> None:
    """Append 'name pid' to path: counts factory calls across Spark worker processes."""
    if path:
        with open(path, "a") as f:
            f.write(f"{name} {os.getpid()}\n")


class Utf8Converter(Converter):
    """Strings <-> UTF-8 bytes; a value 'boom' fails (to test error reporting)."""

    def configure(self, config: dict[str, str], is_key: bool) -> None:
        self.is_key = is_key
        self.fail_on = config.get("fail.on")

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        if value is None:
            return None
        if value == self.fail_on:
            raise ValueError(f"cannot convert {value!r}")
        return str(value).encode()

    def to_connect_data(self, topic: str, value: bytes | None) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, None)
        text = value.decode()
        if text == self.fail_on:
            raise RetriableError(f"cannot read {text!r}")
        return SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, text)


class BatchUtf8Converter(Utf8Converter):
    """Utf8Converter with the optional vectorized methods."""

    def from_connect_batch(self, topic: str, schema: Schema | None, values: list[Any]) -> list[Any]:
        if self.fail_on in values:
            raise ValueError("batch failed")
        return [None if v is None else str(v).encode() for v in values]

    def to_connect_batch(self, topic: str, values: list[bytes | None]) -> list[SchemaAndValue]:
        s = Schema.OPTIONAL_STRING_SCHEMA
        return [SchemaAndValue(s, None if v is None else v.decode()) for v in values]


class JsonStructConverter(Converter):
    """JSON without envelope; Structs are written as objects; reads back flat Structs."""

    def __init__(self, schema: Schema | None = None) -> None:
        self.schema = schema

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        if isinstance(value, Struct):
            value = value.as_dict()
        return None if value is None else json.dumps(value, separators=(",", ":")).encode()

    def to_connect_data(self, topic: str, value: bytes | None) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue(None, None)
        data = json.loads(value)
        if self.schema is None:
            return SchemaAndValue(None, data)
        return SchemaAndValue(self.schema, Struct(self.schema, data))


class PickleConverter(Converter):
    """Connect data <-> pickled SchemaAndValue: any record survives a round trip unchanged."""

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        return pickle.dumps(SchemaAndValue(schema, value))

    def to_connect_data(self, topic: str, value: bytes | None) -> SchemaAndValue:
        return SchemaAndValue(None, None) if value is None else pickle.loads(value)


class PickleHeaderConverter(HeaderConverter):
    """Header values <-> pickled SchemaAndValue."""

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        return pickle.dumps(SchemaAndValue(schema, value))

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        return SchemaAndValue(None, None) if value is None else pickle.loads(value)


class Utf8HeaderConverter(HeaderConverter):
    def __init__(self, fail_on: str | None = None) -> None:
        self.fail_on = fail_on

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        if header_key == self.fail_on:
            raise DataError(f"bad header {header_key}")
        return None if value is None else f"{value}".encode()

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        if header_key == self.fail_on:
            raise DataError(f"bad header {header_key}")
        return SchemaAndValue(
            Schema.OPTIONAL_STRING_SCHEMA, None if value is None else value.decode()
        )


class UpperValue(Transformation):
    """Upper-cases string values (and the 'name' field of Struct values)."""

    def apply(self, record: Any) -> Any:
        value = record.value
        if isinstance(value, Struct):
            new = Struct(value.schema, value.as_dict())
            new.put("name", str(value.get("name")).upper())
            return dataclasses.replace(record, value=new)
        if value == "explode":
            raise KeyError("explode")
        return dataclasses.replace(record, value=str(value).upper())


class TopicSuffix(Transformation):
    """Appends ``-out`` to the topic; a third-party transform with a column form of its own."""

    def apply(self, record: Any) -> Any:
        return dataclasses.replace(record, topic=record.topic + "-out")

    def column_form(self, frame: ColumnFrame, out: Any) -> ColumnFrame | None:
        return frame.with_column("topic", ReplaceMatch(frame.cols["topic"], "(.*)", "$1-out"))


class InsertFieldThenSuffix(InsertFieldValue):
    """InsertField$Value that also renames the topic: a subclass in another module, whose
    inherited column form must not be used (it would lose the rename)."""

    def __init__(self) -> None:
        self.configure({"static.field": "origin", "static.value": "lab"})

    def apply(self, record: Any) -> Any:
        inserted = super().apply(record)
        return dataclasses.replace(inserted, topic=inserted.topic + "-out")


class DropIfContains(Transformation):
    def __init__(self, needle: str) -> None:
        self.needle = needle

    def apply(self, record: Any) -> Any:
        return None if self.needle in str(record.value) else record


class TopicIs(Predicate):
    def __init__(self, topic: str) -> None:
        self.topic = topic

    def test(self, record: Any) -> bool:
        if record.topic == "bad-topic":
            raise RuntimeError("predicate failed")
        return record.topic == self.topic


class WaitForFile(Transformation):
    """Holds every record until ``path`` exists: a job only cancellation (or the file) ends."""

    def __init__(self, path: str) -> None:
        self.path = path

    def apply(self, record: Any) -> Any:
        while not os.path.exists(self.path):
            time.sleep(0.05)
        return record


class EndThePythonWorker(Transformation):
    """Ends the Python worker that runs it, as a crash would: the whole job fails."""

    def apply(self, record: Any) -> Any:
        os._exit(17)


def build(cls: type, path: str | None = None, *args: Any, **config: Any) -> Any:
    """A factory body: construct, configure, and log the build to ``path``."""
    record_build(path, cls.__name__)
    instance = cls(*args)
    if issubclass(cls, Converter):
        instance.configure({k.replace("_", "."): v for k, v in config.items()}, is_key=False)
    return instance


def key_build(cls: type, path: str | None = None, **config: Any) -> Any:
    record_build(path, "key:" + cls.__name__)
    instance = cls()
    instance.configure({k.replace("_", "."): v for k, v in config.items()}, is_key=True)
    return instance


def person_schema() -> Schema:
    from connect_lite.api import SchemaBuilder

    return (
        SchemaBuilder.struct()
        .name("person")
        .field("id", Schema.INT64_SCHEMA)
        .field("name", Schema.STRING_SCHEMA)
        .build()
    )
