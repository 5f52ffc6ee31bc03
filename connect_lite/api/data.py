"""Kafka Connect's data model: schemas, structs, headers and SchemaAndValue."""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from connect_lite.api.errors import DataError


class SchemaType(enum.Enum):
    """The schema types of Kafka Connect's data model."""

    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT32 = "float32"
    FLOAT64 = "float64"
    BOOLEAN = "boolean"
    STRING = "string"
    BYTES = "bytes"
    ARRAY = "array"
    MAP = "map"
    STRUCT = "struct"

    @property
    def is_primitive(self) -> bool:
        return self not in (SchemaType.ARRAY, SchemaType.MAP, SchemaType.STRUCT)


@dataclass(frozen=True)
class Field:
    """A named field of a STRUCT schema."""

    name: str
    index: int
    schema: Schema


@dataclass(frozen=True)
class Schema:
    """An immutable Connect schema. Build complex ones with SchemaBuilder."""

    type: SchemaType
    optional: bool = False
    default: Any = None
    name: str | None = None
    version: int | None = None
    doc: str | None = None
    parameters: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    """In the order they were set, as Kafka keeps them (a LinkedHashMap): Kafka's JsonConverter
    writes them in that order. Equality does not look at the order, as Kafka's does not."""
    fields: tuple[Field, ...] = ()
    key_schema: Schema | None = None
    value_schema: Schema | None = None
    _parameter_set: frozenset[tuple[str, str]] = field(default=frozenset(), init=False, repr=False)

    def __post_init__(self) -> None:
        if self.parameters:
            object.__setattr__(self, "_parameter_set", frozenset(self.parameters))

    def field(self, name: str) -> Field | None:
        """The field with that name, for STRUCT schemas."""
        return self.fields_by_name.get(name)

    @functools.cached_property
    def fields_by_name(self) -> dict[str, Field]:
        """Field name -> field, built on first use: ``field`` runs for every ``Struct.put``.

        Kept in the instance ``__dict__`` (which a frozen dataclass allows), so it takes no
        part in ``__eq__``, ``__hash__`` or ``repr``, and ``__getstate__`` leaves it out of
        pickles. Treat it as read-only."""
        return {f.name: f for f in self.fields}

    def __getstate__(self) -> dict[str, Any]:
        """The dataclass fields only: the name index is rebuilt on first use after unpickling."""
        state = self.__dict__
        if "fields_by_name" in state:
            state = {k: v for k, v in state.items() if k != "fields_by_name"}
        return state

    @property
    def params(self) -> dict[str, str]:
        return dict(self.parameters)

    # Predefined primitive schemas, named as in Kafka's Schema interface.
    INT8_SCHEMA: ClassVar[Schema]
    INT16_SCHEMA: ClassVar[Schema]
    INT32_SCHEMA: ClassVar[Schema]
    INT64_SCHEMA: ClassVar[Schema]
    FLOAT32_SCHEMA: ClassVar[Schema]
    FLOAT64_SCHEMA: ClassVar[Schema]
    BOOLEAN_SCHEMA: ClassVar[Schema]
    STRING_SCHEMA: ClassVar[Schema]
    BYTES_SCHEMA: ClassVar[Schema]
    OPTIONAL_INT8_SCHEMA: ClassVar[Schema]
    OPTIONAL_INT16_SCHEMA: ClassVar[Schema]
    OPTIONAL_INT32_SCHEMA: ClassVar[Schema]
    OPTIONAL_INT64_SCHEMA: ClassVar[Schema]
    OPTIONAL_FLOAT32_SCHEMA: ClassVar[Schema]
    OPTIONAL_FLOAT64_SCHEMA: ClassVar[Schema]
    OPTIONAL_BOOLEAN_SCHEMA: ClassVar[Schema]
    OPTIONAL_STRING_SCHEMA: ClassVar[Schema]
    OPTIONAL_BYTES_SCHEMA: ClassVar[Schema]


for _t in SchemaType:
    if _t.is_primitive:
        setattr(Schema, f"{_t.name}_SCHEMA", Schema(_t))
        setattr(Schema, f"OPTIONAL_{_t.name}_SCHEMA", Schema(_t, optional=True))


class SchemaBuilder:
    """Fluent builder for schemas, as Kafka's SchemaBuilder."""

    def __init__(self, type_: SchemaType) -> None:
        self._type = type_
        self._optional = False
        self._default: Any = None
        self._name: str | None = None
        self._version: int | None = None
        self._doc: str | None = None
        self._params: dict[str, str] = {}
        self._fields: list[Field] = []
        self._key: Schema | None = None
        self._value: Schema | None = None

    @staticmethod
    def struct() -> SchemaBuilder:
        return SchemaBuilder(SchemaType.STRUCT)

    @staticmethod
    def array(value_schema: Schema) -> SchemaBuilder:
        b = SchemaBuilder(SchemaType.ARRAY)
        b._value = value_schema
        return b

    @staticmethod
    def map(key_schema: Schema, value_schema: Schema) -> SchemaBuilder:
        b = SchemaBuilder(SchemaType.MAP)
        b._key, b._value = key_schema, value_schema
        return b

    @staticmethod
    def of(type_: SchemaType) -> SchemaBuilder:
        return SchemaBuilder(type_)

    def optional(self) -> SchemaBuilder:
        self._optional = True
        return self

    def required(self) -> SchemaBuilder:
        self._optional = False
        return self

    def default_value(self, value: Any) -> SchemaBuilder:
        self._default = value
        return self

    def name(self, name: str | None) -> SchemaBuilder:
        self._name = name
        return self

    def version(self, version: int | None) -> SchemaBuilder:
        self._version = version
        return self

    def doc(self, doc: str | None) -> SchemaBuilder:
        self._doc = doc
        return self

    def parameter(self, key: str, value: str) -> SchemaBuilder:
        self._params[key] = value
        return self

    def parameters(self, params: Mapping[str, str]) -> SchemaBuilder:
        self._params.update(params)
        return self

    def field(self, name: str, schema: Schema) -> SchemaBuilder:
        if self._type is not SchemaType.STRUCT:
            raise DataError("Cannot create fields on type " + self._type.name)
        if any(f.name == name for f in self._fields):
            raise DataError(f"Cannot create field because of field name duplication {name}")
        self._fields.append(Field(name, len(self._fields), schema))
        return self

    def build(self) -> Schema:
        return Schema(
            self._type,
            self._optional,
            self._default,
            self._name,
            self._version,
            self._doc,
            tuple(self._params.items()),
            tuple(self._fields),
            self._key,
            self._value,
        )


class Struct:
    """A value with a STRUCT schema: field values by name, validated against the schema."""

    __slots__ = ("_schema", "_values")

    def __init__(self, schema: Schema, values: Mapping[str, Any] | None = None) -> None:
        if schema.type is not SchemaType.STRUCT:
            raise DataError("Not a struct schema: " + schema.type.name)
        self._schema = schema
        if not values:
            self._values: dict[str, Any] = {}
            return
        by_name = schema.fields_by_name
        if not values.keys() <= by_name.keys():
            unknown = next(name for name in values if name not in by_name)
            raise DataError(f"{unknown} is not a valid field name")
        self._values = dict(values)

    @property
    def schema(self) -> Schema:
        return self._schema

    def put(self, name: str, value: Any) -> Struct:
        if name not in self._schema.fields_by_name:
            raise DataError(f"{name} is not a valid field name")
        self._values[name] = value
        return self

    def get(self, name: str) -> Any:
        f = self._schema.field(name)
        if f is None:
            raise DataError(f"{name} is not a valid field name")
        if name in self._values:
            return self._values[name]
        return f.schema.default

    def get_without_default(self, name: str) -> Any:
        """Kafka's ``Struct.getWithoutDefault``: the stored value, None when the field was never
        set or set to null. ``get`` may give the schema default instead, which KIP-1040's
        ``replace.null.with.default=false`` must not."""
        if name not in self._schema.fields_by_name:
            raise DataError(f"{name} is not a valid field name")
        return self._values.get(name)

    def __getitem__(self, name: str) -> Any:
        return self.get(name)

    def as_dict(self) -> dict[str, Any]:
        return {f.name: self.get(f.name) for f in self._schema.fields}

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Struct)
            and self._schema == other._schema
            and self.as_dict() == other.as_dict()
        )

    def __hash__(self) -> int:
        return hash((self._schema, tuple(sorted(map(repr, self.as_dict().items())))))

    def __repr__(self) -> str:
        inner = ",".join(f"{k}={v!r}" for k, v in self.as_dict().items())
        return f"Struct{{{inner}}}"

    def __getstate__(self) -> tuple[Schema, dict[str, Any]]:
        return (self._schema, self._values)

    def __setstate__(self, state: tuple[Schema, dict[str, Any]]) -> None:
        self._schema, self._values = state


@dataclass(frozen=True)
class SchemaAndValue:
    """A value together with its (optional) schema."""

    schema: Schema | None
    value: Any


SchemaAndValue.NULL = SchemaAndValue(None, None)  # type: ignore[attr-defined]  # Kafka's constant


@dataclass(frozen=True)
class Header:
    """One record header: a key, a value and the value's optional schema."""

    key: str
    value: Any
    schema: Schema | None = None


@dataclass(frozen=True)
class Headers:
    """An immutable, ordered collection of headers; keys may repeat."""

    items: tuple[Header, ...] = field(default=())

    def __iter__(self) -> Iterator[Header]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __bool__(self) -> bool:
        return bool(self.items)

    def last_with_name(self, key: str) -> Header | None:
        for header in reversed(self.items):
            if header.key == key:
                return header
        return None

    def all_with_name(self, key: str) -> list[Header]:
        return [h for h in self.items if h.key == key]

    def add(self, key: str, value: Any, schema: Schema | None = None) -> Headers:
        """A new Headers with one more header at the end."""
        return Headers((*self.items, Header(key, value, schema)))

    def remove(self, key: str) -> Headers:
        """A new Headers without any header of that key."""
        return Headers(tuple(h for h in self.items if h.key != key))

    @staticmethod
    def of(pairs: Iterable[tuple[str, Any]]) -> Headers:
        return Headers(tuple(Header(k, v) for k, v in pairs))


def schema_json_form(
    schema: Schema, write_default: Callable[[Schema], Any] | None = None
) -> dict[str, Any]:
    """``schema`` in the JSON schema form of Kafka's JsonConverter envelope, in Kafka's key
    order: ``type``, ``fields`` (each with its ``field`` name) or ``items`` or ``keys`` and
    ``values``, ``optional``, ``name``, ``version``, ``doc``, ``parameters``, and ``default``
    when ``write_default`` gives one for the schema (its default value as JSON; None leaves
    it out). It is also the ``connect.schema`` metadata of a frame's typed columns."""
    node: dict[str, Any] = {"type": schema.type.value}
    if schema.type is SchemaType.STRUCT:
        node["fields"] = [
            {**schema_json_form(f.schema, write_default), "field": f.name} for f in schema.fields
        ]
    elif schema.type in (SchemaType.ARRAY, SchemaType.MAP):
        parts = ("items",) if schema.type is SchemaType.ARRAY else ("keys", "values")
        schemas = (
            (schema.value_schema,)
            if schema.type is SchemaType.ARRAY
            else (schema.key_schema, schema.value_schema)
        )
        for part, child in zip(parts, schemas, strict=True):
            if child is None:
                raise DataError("Array and map schemas need their item, key and value schemas")
            node[part] = schema_json_form(child, write_default)
    node["optional"] = schema.optional
    if schema.name is not None:
        node["name"] = schema.name
    if schema.version is not None:
        node["version"] = schema.version
    if schema.doc is not None:
        node["doc"] = schema.doc
    if schema.parameters:
        node["parameters"] = dict(schema.parameters)
    if schema.default is not None and write_default is not None:
        default = write_default(schema)
        if default is not None:
            node["default"] = default
    return node


__all__ = [
    "Field",
    "Header",
    "Headers",
    "Schema",
    "SchemaAndValue",
    "SchemaBuilder",
    "SchemaType",
    "Struct",
    "schema_json_form",
]
