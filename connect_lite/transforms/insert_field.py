"""InsertField: add record metadata (topic, partition, offset, timestamp) or a static value
as fields of a Struct or map key or value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from connect_lite.api import (
    ConfigDef,
    ConfigError,
    Importance,
    Schema,
    SchemaBuilder,
    Struct,
    Type,
)
from connect_lite.api.column_form import ColumnFrame, Lit, fields_of, out_schema, struct_of
from connect_lite.api.config import invalid
from connect_lite.api.logical import millis_to_timestamp, timestamp_schema
from connect_lite.transforms.base import (
    REPLACE_NULL_WITH_DEFAULT,
    KeyOrValue,
    SchemaCache,
    copy_schema_basics,
    define_replace_null_with_default,
    kafka_class,
    require_map,
    require_sink_record,
    require_struct,
    struct_get,
)

TOPIC_FIELD = "topic.field"
PARTITION_FIELD = "partition.field"
OFFSET_FIELD = "offset.field"
TIMESTAMP_FIELD = "timestamp.field"
STATIC_FIELD = "static.field"
STATIC_VALUE = "static.value"
PURPOSE = "field insertion"

_OPTIONALITY_DOC = (
    "Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it "
    "optional (the default)."
)
_SCHEMAS = {  # (optional, required) schema of each inserted field
    TOPIC_FIELD: (Schema.OPTIONAL_STRING_SCHEMA, Schema.STRING_SCHEMA),
    PARTITION_FIELD: (Schema.OPTIONAL_INT32_SCHEMA, Schema.INT32_SCHEMA),
    OFFSET_FIELD: (Schema.OPTIONAL_INT64_SCHEMA, Schema.INT64_SCHEMA),
    TIMESTAMP_FIELD: (timestamp_schema(optional=True), timestamp_schema()),
    STATIC_FIELD: (Schema.OPTIONAL_STRING_SCHEMA, Schema.STRING_SCHEMA),
}


@dataclass(frozen=True)
class InsertionSpec:
    """A field name with Kafka's optionality suffix parsed off: ``name!`` is required,
    ``name?`` and a bare ``name`` are optional."""

    name: str
    optional: bool

    @staticmethod
    def parse(spec: str | None) -> InsertionSpec | None:
        if spec is None:
            return None
        if spec.endswith("?"):
            return InsertionSpec(spec[:-1], True)
        if spec.endswith("!"):
            return InsertionSpec(spec[:-1], False)
        return InsertionSpec(spec, True)


class _InsertField(KeyOrValue):
    """Kafka's InsertField. Null keys/values pass through unchanged; a partition or timestamp
    the record lacks is left out (schemaless) or null (with a schema)."""

    def config(self) -> ConfigDef:
        config = ConfigDef()
        docs = {
            TOPIC_FIELD: "Field name for Kafka topic. ",
            PARTITION_FIELD: "Field name for Kafka partition. ",
            OFFSET_FIELD: "Field name for Kafka offset - only applicable to sink connectors.<br/>",
            TIMESTAMP_FIELD: "Field name for record timestamp. ",
            STATIC_FIELD: "Field name for static data field. ",
        }
        for key, doc in docs.items():
            config.define(
                key, Type.STRING, None, importance=Importance.MEDIUM, doc=doc + _OPTIONALITY_DOC
            )
        config.define(
            STATIC_VALUE,
            Type.STRING,
            None,
            importance=Importance.MEDIUM,
            doc="Static field value, if field name configured.",
        )
        return define_replace_null_with_default(config)

    def configure(self, config: dict[str, str]) -> None:
        self.settings = self.config().parse(config)
        self._specs = {
            key: spec
            for key in _SCHEMAS
            if (spec := InsertionSpec.parse(self.settings[key])) is not None
        }
        self._static_value: str | None = self.settings[STATIC_VALUE]
        self._replace_null = bool(self.settings[REPLACE_NULL_WITH_DEFAULT])
        self._schemas = SchemaCache(self._updated_schema)
        if not self._specs:
            raise ConfigError("No field insertion configured")
        static = self._specs.get(STATIC_FIELD)
        if static is not None and self._static_value is None:
            message = invalid(
                STATIC_VALUE, None, f"No value specified for static field: {static.name}"
            )
            raise ConfigError(message, {STATIC_VALUE: [message]})

    def apply(self, record: Any) -> Any:
        value = self.operating_value(record)
        if value is None:
            return record
        if self.operating_schema(record) is None:
            updated = dict(require_map(value, PURPOSE))
            updated.update(self._insertions(record, timestamp_as_datetime=False))
            return self.new_record(record, None, updated)
        struct = require_struct(value, PURPOSE)
        schema = self._schemas.get(struct.schema)
        values = {
            f.name: struct_get(struct, f.name, self._replace_null) for f in struct.schema.fields
        }
        values.update(self._insertions(record, timestamp_as_datetime=True))
        return self.new_record(record, schema, Struct(schema, values))

    def _insertions(self, record: Any, timestamp_as_datetime: bool) -> dict[str, Any]:
        """The fields to add, in Kafka's order; metadata the record lacks is left out."""
        found: dict[str, Any] = {}
        specs = self._specs
        if TOPIC_FIELD in specs:
            found[specs[TOPIC_FIELD].name] = record.topic
        if PARTITION_FIELD in specs and record.kafka_partition is not None:
            found[specs[PARTITION_FIELD].name] = record.kafka_partition
        if OFFSET_FIELD in specs:
            found[specs[OFFSET_FIELD].name] = require_sink_record(record, PURPOSE).kafka_offset
        if TIMESTAMP_FIELD in specs and record.timestamp is not None:
            stamp = record.timestamp
            found[specs[TIMESTAMP_FIELD].name] = (
                millis_to_timestamp(stamp) if timestamp_as_datetime else stamp
            )
        if STATIC_FIELD in specs and self._static_value is not None:
            found[specs[STATIC_FIELD].name] = self._static_value
        return found

    def _updated_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields:
            builder.field(field.name, field.schema)
        for key, spec in self._specs.items():
            optional_schema, required_schema = _SCHEMAS[key]
            builder.field(spec.name, optional_schema if spec.optional else required_schema)
        return builder.build()

    def column_form(self, frame: ColumnFrame, out: Any) -> ColumnFrame | None:
        found, schema = frame.struct_side(self.is_key), out_schema(self.is_key, out)
        if found is None or schema is None:
            return None
        side, column, struct = found
        columns = fields_of(column, struct)
        sources = {
            TOPIC_FIELD: frame.cols["topic"],
            PARTITION_FIELD: frame.cols["partition"],
            OFFSET_FIELD: frame.cols.get("offset"),
            TIMESTAMP_FIELD: frame.cols["timestamp"],
            STATIC_FIELD: Lit(self._static_value),
        }
        for key, source in sources.items():
            spec = InsertionSpec.parse(self.settings[key] or None)
            if spec is not None:
                if source is None:
                    return None
                columns[spec.name] = source
        if any(f.name not in columns for f in schema.fields):
            return None
        return frame.with_side(side, struct_of(columns, schema), schema)


class InsertFieldKey(_InsertField):
    is_key = True
    __connect_class_name__ = kafka_class("InsertField$Key")


class InsertFieldValue(_InsertField):
    is_key = False
    __connect_class_name__ = kafka_class("InsertField$Value")


__all__ = ["InsertFieldKey", "InsertFieldValue", "InsertionSpec"]
