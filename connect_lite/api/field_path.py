"""KIP-821 field paths: ``field.syntax.version`` V1 (a root field name) or V2 (dotted paths).

In V2 a path is split on dots; a name that contains dots is wrapped in backticks
(`` `a.b`.c ``), and a backtick inside a wrapped name is escaped with a backslash.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from connect_lite.api.config import ConfigDef, Importance, Type, ValidString
from connect_lite.api.data import Schema, SchemaType, Struct

FIELD_SYNTAX_VERSION = "field.syntax.version"
V1, V2 = "V1", "V2"


def define_field_syntax(config: ConfigDef) -> ConfigDef:
    """Add Kafka's ``field.syntax.version`` key (V1 or V2, default V1)."""
    return config.define(
        FIELD_SYNTAX_VERSION,
        Type.STRING,
        V1,
        ValidString.in_ignore_case(V1, V2),
        Importance.HIGH,
        "Defines the version of the syntax to access fields. If set to `V1`, then the field paths "
        "are limited to access the elements at the root level of the struct or map. If set to "
        "`V2`, the syntax will support accessing nested elements. To access nested elements, "
        "dotted notation is used. If dots are already included in the field name, then "
        "backtick pairs can be used to wrap field names containing dots.",
    )


@dataclass(frozen=True)
class FieldPath:
    """A path to a (possibly nested) field of a Struct or a map."""

    steps: tuple[str, ...]

    @staticmethod
    def parse(text: str, version: str = V1) -> FieldPath:
        if version.upper() == V1 or ("." not in text and "`" not in text):
            return FieldPath((text,))
        return FieldPath(tuple(_split_v2(text)))

    @property
    def is_root(self) -> bool:
        return len(self.steps) == 1

    @property
    def name(self) -> str:
        return self.steps[-1]

    def schema_field(self, schema: Schema) -> Schema | None:
        """The schema of the field at this path, or None when it is missing."""
        current: Schema | None = schema
        for step in self.steps:
            if current is None or current.type is not SchemaType.STRUCT:
                return None
            found = current.field(step)
            current = found.schema if found is not None else None
        return current

    def get_struct(self, struct: Struct) -> Any:
        current: Any = struct
        for step in self.steps:
            if not isinstance(current, Struct) or current.schema.field(step) is None:
                return None
            current = current.get(step)
        return current

    def get_map(self, value: Mapping[str, Any]) -> Any:
        current: Any = value
        for step in self.steps:
            if not isinstance(current, Mapping):
                return None
            current = current.get(step)
        return current

    def __str__(self) -> str:
        return ".".join(f"`{s}`" if "." in s else s for s in self.steps)


def _split_v2(text: str) -> list[str]:
    steps: list[str] = []
    i, n = 0, len(text)
    while i <= n:
        if i < n and text[i] == "`":
            name: list[str] = []
            j = i + 1
            while j < n:
                if text[j] == "\\" and j + 1 < n and text[j + 1] == "`":
                    name.append("`")
                    j += 2
                elif text[j] == "`" and (j + 1 == n or text[j + 1] == "."):
                    break
                else:
                    name.append(text[j])
                    j += 1
            if j < n:  # a closing backtick before a dot or the end
                steps.append("".join(name))
                i = j + 2
                if j + 1 == n:
                    break
                continue
        end = text.find(".", i)
        end = n if end < 0 else end
        steps.append(text[i:end])
        i = end + 1
        if end == n:
            break
    return steps


__all__ = ["FIELD_SYNTAX_VERSION", "V1", "V2", "FieldPath", "define_field_syntax"]
