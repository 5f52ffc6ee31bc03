"""ExtractNewRecordState: Debezium's "unwrap" transform, which turns a change event's envelope
into the row it describes (Debezium 2.7)."""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from typing import Any

from connect_lite.api import (
    ConfigDef,
    ConfigError,
    DataError,
    Importance,
    Schema,
    SchemaBuilder,
    SchemaType,
    Struct,
    Type,
    ValidString,
)
from connect_lite.api.column_form import ColumnFrame, Expr, Lit, Not, When, struct_of
from connect_lite.transforms.base import BuiltinTransformation, updated

log = logging.getLogger(__name__)

MODE = "delete.tombstone.handling.mode"
DROP_TOMBSTONES = "drop.tombstones"
DELETE_HANDLING = "delete.handling.mode"
ROUTE_BY_FIELD = "route.by.field"
ADD_FIELDS = "add.fields"
ADD_FIELDS_PREFIX = "add.fields.prefix"
ADD_HEADERS = "add.headers"
ADD_HEADERS_PREFIX = "add.headers.prefix"
DROP_FIELDS_HEADER = "drop.fields.header.name"
DROP_FIELDS_FROM_KEY = "drop.fields.from.key"
DROP_FIELDS_COMPATIBLE = "drop.fields.keep.schema.compatible"
MODES = ("drop", "tombstone", "rewrite", "rewrite-with-tombstone")
DELETED = "__deleted"
_TOP_LEVEL = frozenset(("op", "ts_ms", "ts_us", "ts_ns"))
_TRANSACTION = frozenset(("id", "total_order", "data_collection_order"))


def _mode(name: str, value: Any) -> str | None:
    if value is None or not str(value).strip() or str(value).strip().lower() in MODES:
        return None
    return f"Invalid value {value} for configuration {name}: must be one of {', '.join(MODES)}"


@dataclass(frozen=True)
class FieldReference:
    """An ``add.fields`` or ``add.headers`` entry, ``[struct.]field[:new name]``, as Debezium
    reads it: where its value comes from, and the name it is added under."""

    struct: str | None
    """The envelope's struct it is read from (None: the envelope itself)."""
    field: str
    name: str

    @staticmethod
    def parse(entry: str, prefix: str) -> FieldReference:
        parts = entry.strip().split(":")
        if len(parts) > 2:
            raise ConfigError(f"Unexpected field name: {entry.strip()}")
        path = parts[0].split(".")
        struct: str | None
        if len(path) > 1:
            struct, field, shown = path[0], path[1], f"{path[0]}_{path[1]}"
        else:
            field = shown = path[0]
            struct = (
                None if field in _TOP_LEVEL else "transaction" if field in _TRANSACTION
                else "source"
            )  # fmt: skip
        return FieldReference(struct, field, prefix + (parts[1] if len(parts) == 2 else shown))

    def schema(self, envelope: Schema) -> Schema | None:
        """The added field's schema (an optional copy), None if the envelope lacks it."""
        found = self._field_schema(envelope)
        if found is None:
            return None
        builder = SchemaBuilder.of(found.type).optional()
        builder.name(found.name).version(found.version).doc(found.doc)
        builder.parameters(dict(found.parameters or {}))
        if found.type is SchemaType.ARRAY and found.value_schema is not None:
            builder = SchemaBuilder.array(found.value_schema).optional()
        return builder.build()

    def _field_schema(self, envelope: Schema) -> Schema | None:
        holder = envelope if self.struct is None else _child(envelope, self.struct)
        if holder is not None and holder.type is SchemaType.STRUCT:
            inner = holder.field(self.field)
            if inner is not None:
                return inner.schema
        top = envelope.field(self.field)  # a field another transform added to the envelope
        return None if top is None else top.schema

    def has_default(self, envelope: Schema) -> bool:
        found = self._field_schema(envelope)
        return found is not None and found.default is not None

    def column(self, envelope: Expr, schema: Schema) -> Expr | None:
        """``value`` as a column of the envelope (of ``schema``); None where ``value`` would
        look past a null struct to the envelope (no column form)."""
        holder = None if self.struct is None else schema.field(self.struct)
        if holder is None:
            return envelope.field(self.field)
        if holder.schema.type is SchemaType.STRUCT and holder.schema.field(self.field):
            return envelope.field(holder.name).field(self.field)
        return None

    def value(self, envelope: Struct) -> Any:
        holder: Any = envelope
        if self.struct is not None and envelope.schema.field(self.struct) is not None:
            holder = envelope.get_without_default(self.struct)
            if holder is None:
                return None
            if holder.schema.field(self.field) is None:
                holder = envelope
        if holder.schema.field(self.field) is None:
            return None
        return holder.get_without_default(self.field)


def _child(schema: Schema, name: str) -> Schema | None:
    field = schema.field(name)
    if field is None:
        raise DataError(f"{name} is not a valid field name")
    return field.schema


def is_envelope(record: Any) -> bool:
    schema = record.value_schema
    return schema is not None and schema.name is not None and schema.name.endswith(".Envelope")


class ExtractNewRecordState(BuiltinTransformation):
    """Debezium's ExtractNewRecordState: a change event becomes its ``after`` row; deletes,
    tombstones and truncates as ``delete.tombstone.handling.mode`` (or the legacy
    ``delete.handling.mode`` and ``drop.tombstones``) say; ``add.fields`` and ``add.headers``
    copy the event's metadata. Records that are not change events pass unchanged."""

    __connect_class_name__ = "io.debezium.transforms.ExtractNewRecordState"
    _column_form_reads_defaults = True
    """Its column form copies rows as ``Struct.get`` reads them, and reads no field that has a
    default without it (see ``column_form``): a Debezium envelope (``source.snapshot`` has a
    default) may run as columns (pipeline/column_plan.py)."""

    def config(self) -> ConfigDef:
        d = ConfigDef()
        d.define(
            MODE,
            Type.STRING,
            None,
            _mode,
            Importance.MEDIUM,
            "How deletes and tombstones are handled: drop, tombstone, rewrite or "
            "rewrite-with-tombstone (unset: the legacy keys decide).",
        )
        d.define(
            DROP_TOMBSTONES,
            Type.BOOLEAN,
            True,
            None,
            Importance.LOW,
            "Deprecated: drop tombstones (when delete.tombstone.handling.mode is unset).",
        )
        d.define(
            DELETE_HANDLING,
            Type.STRING,
            "drop",
            ValidString.in_ignore_case("drop", "rewrite", "none"),
            Importance.LOW,
            "Deprecated: drop, rewrite or none (when delete.tombstone.handling.mode is unset).",
        )
        d.define(
            ROUTE_BY_FIELD,
            Type.STRING,
            "",
            None,
            Importance.LOW,
            "A field of the row whose value is the record's topic.",
        )
        d.define(
            ADD_FIELDS,
            Type.LIST,
            [],
            None,
            Importance.LOW,
            "Metadata fields to add to the row: [struct.]field[:new name].",
        )
        d.define(
            ADD_FIELDS_PREFIX,
            Type.STRING,
            "__",
            None,
            Importance.LOW,
            "The prefix of the added fields' names.",
        )
        d.define(
            ADD_HEADERS,
            Type.LIST,
            [],
            None,
            Importance.LOW,
            "Metadata fields to add as headers: [struct.]field[:new name].",
        )
        d.define(
            ADD_HEADERS_PREFIX,
            Type.STRING,
            "__",
            None,
            Importance.LOW,
            "The prefix of the added headers' names.",
        )
        d.define(
            DROP_FIELDS_HEADER,
            Type.STRING,
            None,
            None,
            Importance.LOW,
            "A header listing fields to remove from the row.",
        )
        d.define(
            DROP_FIELDS_FROM_KEY,
            Type.BOOLEAN,
            False,
            None,
            Importance.LOW,
            "Whether the listed fields are removed from the key too.",
        )
        d.define(
            DROP_FIELDS_COMPATIBLE,
            Type.BOOLEAN,
            True,
            None,
            Importance.LOW,
            "Whether only optional fields are removed (the schemas stay compatible).",
        )
        return d  # fmt: skip

    def configure(self, config: dict[str, str]) -> None:
        super().configure(config)
        s = self.settings
        mode = str(s[MODE] or "").strip().lower()
        if not mode:
            legacy = str(s[DELETE_HANDLING]).lower()
            tombstones = not s[DROP_TOMBSTONES]
            log.warning("ExtractNewRecordState: %s and %s are deprecated; use %s",
                        DELETE_HANDLING, DROP_TOMBSTONES, MODE)  # fmt: skip
        else:
            legacy = {"drop": "drop", "tombstone": "none"}.get(mode, "rewrite")
            tombstones = mode == "rewrite-with-tombstone"
        self._deletes = legacy  # drop, none (a null value), rewrite
        self._keep_tombstones = tombstones
        self._route = s[ROUTE_BY_FIELD] or None
        self._fields = [FieldReference.parse(e, s[ADD_FIELDS_PREFIX]) for e in s[ADD_FIELDS]
                        if e.strip()]  # fmt: skip
        self._headers = [FieldReference.parse(e, s[ADD_HEADERS_PREFIX]) for e in s[ADD_HEADERS]
                         if e.strip()]  # fmt: skip
        self._drop_header = s[DROP_FIELDS_HEADER] or None
        self._schemas: dict[Any, Schema] = {}

    def apply(self, record: Any) -> Any:
        tombstone = record.value is None
        envelope = is_envelope(record)
        if self._headers and (envelope or tombstone):
            record = self._with_headers(record, tombstone)
        if tombstone:
            return record if self._keep_tombstones else None
        if not envelope:
            return record
        value: Struct = record.value
        after, before = value.get_without_default("after"), value.get_without_default("before")
        if after is None and before is None:  # a truncate
            return None
        if after is None:  # a delete
            if self._deletes == "drop":
                return None
            if self._deletes == "none":
                out = updated(record, value=None, value_schema=_child(value.schema, "after"))
            else:
                out = updated(record, value=before, value_schema=before.schema)
                out = self._deleted(out, "true")
            out = self._routed(out, before)
            out = self._dropped(out)
            return out if out.value is None else self._added(out, value)
        out = updated(record, value=after, value_schema=after.schema)
        if self._deletes == "rewrite":
            out = self._deleted(out, "false")
        out = self._added(self._routed(out, after), value)
        return self._dropped(out)

    def _schema(self, key: Any, build: Any) -> Schema:
        """The output schema built for ``key`` (Debezium caches 64)."""
        found = self._schemas.get(key)
        if found is None:
            if len(self._schemas) >= 64:
                self._schemas.clear()
            found = self._schemas[key] = build()
        return found

    def _with_headers(self, record: Any, tombstone: bool) -> Any:
        headers = record.headers
        for ref in self._headers:
            if tombstone:
                if ref.field == "op":
                    headers = headers.add(ref.name, "d", Schema.STRING_SCHEMA)
                continue
            schema = ref.schema(record.value_schema)
            if schema is not None:
                headers = headers.add(ref.name, ref.value(record.value), schema)
        return updated(record, headers=headers)

    def _deleted(self, record: Any, flag: str) -> Any:
        schema = self._schema(
            ("deleted", record.value_schema),
            lambda: _appended(record.value_schema, [(DELETED, _OPT_STRING)]),
        )
        values = {f.name: record.value.get(f.name) for f in record.value_schema.fields}
        return updated(record, value=Struct(schema, {**values, DELETED: flag}), value_schema=schema)

    def _added(self, record: Any, envelope: Struct) -> Any:
        if not self._fields:
            return record
        wanted = [(ref, ref.schema(envelope.schema)) for ref in self._fields]
        present = [(ref, schema) for ref, schema in wanted if schema is not None]
        op = envelope.get_without_default("op")
        schema = self._schema(
            ("fields", record.value_schema, op),
            lambda: _appended(record.value_schema, [(r.name, s) for r, s in present]),
        )
        values = {f.name: record.value.get_without_default(f.name)
                  for f in record.value_schema.fields}  # fmt: skip
        values.update({ref.name: ref.value(envelope) for ref, _ in present})
        return updated(record, value=Struct(schema, values), value_schema=schema)

    def _routed(self, record: Any, row: Struct) -> Any:
        if self._route is None:
            return record
        if row.schema.field(self._route) is None:
            raise DataError(f"{self._route} is not a valid field name")
        topic = row.get_without_default(self._route)
        if topic is not None and not isinstance(topic, str):
            raise DataError(f"Field '{self._route}' is not of type STRING")
        return updated(record, topic=topic) if topic and topic.strip() else record

    def _dropped(self, record: Any) -> Any:
        if self._drop_header is None:
            return record
        listed = next((h.value for h in record.headers if h.key == self._drop_header), None)
        if not listed:
            return record
        names = set(listed)
        if self.settings[DROP_FIELDS_FROM_KEY] and record.key is not None:
            key_schema, key = _without(record.key_schema, record.key, names, self._compatible)
            record = updated(record, key=key, key_schema=key_schema)
        if record.value is not None:
            schema, value = _without(record.value_schema, record.value, names, self._compatible)
            record = updated(record, value=value, value_schema=schema)
        return record

    @property
    def _compatible(self) -> bool:
        return bool(self.settings[DROP_FIELDS_COMPATIBLE])

    def column_form(self, frame: ColumnFrame, out: Any) -> ColumnFrame | None:
        """Where every record of the batch is a change event of one table: the ``after`` row
        (``before`` for a rewritten delete, with ``__deleted``; a null value for a delete in
        ``tombstone`` mode), deletes dropped in ``drop`` mode, truncates dropped, and
        ``add.fields`` copied from the envelope, as ``apply`` gives them.
        Tombstones run in the record form (the framework keeps a null value out of the
        column form). None, for the record form, with ``add.headers`` (header values have no
        column), ``route.by.field``, ``drop.fields.header.name``, ``add.fields`` with deletes
        as null values (``tombstone`` mode: their schema would differ), or an added field
        that has a default (``apply`` reads it without)."""
        if self._headers or self._route or self._drop_header:
            return None
        if self._deletes == "none" and self._fields:
            return None  # a delete's null value keeps the row's schema, the rest get more
        found = frame.struct_side(False)
        if found is None:
            return None
        _, envelope, schema = found
        after_field, before_field = schema.field("after"), schema.field("before")
        if (
            schema.name is None
            or not schema.name.endswith(".Envelope")
            or after_field is None
            or before_field is None
            or after_field.schema != before_field.schema
            or after_field.schema.type is not SchemaType.STRUCT
        ):
            return None
        row_schema = after_field.schema
        after, before = envelope.field("after"), envelope.field("before")
        gone = after.is_null()  # a delete, or a truncate (before is null too)
        columns: dict[str, Expr] | None = None
        if self._deletes == "drop":
            keep: Expr = Not(gone)
            out_schema = row_schema
        elif self._deletes == "none":  # a delete: a null value of the row's schema
            keep = When(gone, Not(before.is_null()), Lit(True))
            out_schema = row_schema
        else:  # rewrite: a delete becomes its before row; Struct.get gives defaults for nulls
            keep = When(gone, Not(before.is_null()), Lit(True))
            out_schema = _appended(row_schema, [(DELETED, _OPT_STRING)])
            row = When(gone, before, after)
            columns = {f.name: row.field(f.name) for f in row_schema.fields}
            columns[DELETED] = When(gone, Lit("true"), Lit("false"))
        if self._fields:
            try:
                wanted = [(ref, ref.schema(schema)) for ref in self._fields]
            except DataError:
                return None
            present = [(ref, s) for ref, s in wanted if s is not None]
            if any(ref.has_default(schema) for ref, _ in present):
                return None  # apply reads it without its default: unset and null differ
            if columns is None:
                columns = {f.name: after.field(f.name) for f in row_schema.fields}
            out_schema = _appended(out_schema, [(r.name, s) for r, s in present])
            for ref, _ in present:
                column = ref.column(envelope, schema)
                if column is None:
                    return None
                columns[ref.name] = column
        value = after if columns is None else struct_of(columns, out_schema)
        step = frame.with_side("value", value, out_schema)
        return dataclasses.replace(step, keep=When(frame.keep, keep, Lit(False)))


_OPT_STRING = Schema.OPTIONAL_STRING_SCHEMA


def _appended(schema: Schema, fields: list[tuple[str, Schema]]) -> Schema:
    """The struct schema with ``fields`` after its own: same name, version, doc and
    parameters, and required (as Kafka's SchemaUtil.copySchemaBasics makes it)."""
    builder = SchemaBuilder.struct().name(schema.name).version(schema.version).doc(schema.doc)
    builder.parameters(dict(schema.parameters or {}))
    for field in schema.fields:
        builder.field(field.name, field.schema)
    for name, field_schema in fields:
        if schema.field(name) is not None:
            raise DataError(f"Cannot create field because of field name duplication {name}")
        builder.field(name, field_schema)
    return builder.build()


def _without(
    schema: Schema, value: Struct, names: set[str], compatible: bool
) -> tuple[Schema, Struct]:
    dropped = {
        f.name for f in schema.fields if f.name in names and (f.schema.optional or not compatible)
    }
    if not dropped:
        return schema, value
    builder = SchemaBuilder.struct().name(schema.name).version(schema.version).doc(schema.doc)
    if schema.optional:
        builder.optional()
    for field in schema.fields:
        if field.name not in dropped:
            builder.field(field.name, field.schema)
    kept = builder.build()
    return kept, Struct(kept, {f.name: value.get_without_default(f.name) for f in kept.fields})


__all__ = ["ExtractNewRecordState"]
