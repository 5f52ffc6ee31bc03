"""Converters, header converters, transformations and predicates: the record-level plugins."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Generic

from connect_lite.api.column_form import ColumnFrame, Expr
from connect_lite.api.config import ConfigDef
from connect_lite.api.data import Schema, SchemaAndValue
from connect_lite.api.records import R


class Converter(ABC):
    """Turns Connect data into bytes and back, for keys or values."""

    def version(self) -> str:
        return "undefined"

    def config(self) -> ConfigDef:
        return ConfigDef()

    def configure(self, config: dict[str, str], is_key: bool) -> None:  # noqa: B027  # optional
        """Receives the converter's own config (prefix stripped) and whether it converts keys."""

    @abstractmethod
    def from_connect_data(self, topic: str, schema: Schema | None, value: Any) -> bytes | None: ...

    @abstractmethod
    def to_connect_data(self, topic: str, value: bytes | None) -> SchemaAndValue: ...


class HeaderConverter(ABC):
    """Turns header values into bytes and back."""

    def version(self) -> str:
        return "undefined"

    def config(self) -> ConfigDef:
        return ConfigDef()

    def configure(self, config: dict[str, str]) -> None:  # noqa: B027  # optional
        """Receives the header converter's own config (prefix stripped)."""

    @abstractmethod
    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None: ...

    @abstractmethod
    def to_connect_header(
        self, topic: str, header_key: str, value: bytes | None
    ) -> SchemaAndValue: ...


class Transformation(ABC, Generic[R]):
    """A single message transform: returns a new record, the same record, or None to drop it."""

    def version(self) -> str:
        return "undefined"

    def config(self) -> ConfigDef:
        return ConfigDef()

    def configure(self, config: dict[str, str]) -> None:  # optional
        """Receives the transform's own config (prefix stripped)."""

    @abstractmethod
    def apply(self, record: R) -> R | None: ...

    def column_form(self, frame: ColumnFrame, out: R) -> ColumnFrame | None:  # optional
        """What ``apply`` does to a batch whose records share their schemas, as column
        expressions over ``frame``; ``out`` is ``apply``'s result on the batch's first record
        (its schemas are the output schemas). None, the default: no column form, and the
        batch runs ``apply`` per record. See :mod:`connect_lite.api.column_form`."""
        return None

    def close(self) -> None:  # optional
        """Release resources."""


class Predicate(ABC, Generic[R]):
    """A condition on records that decides whether a transformation applies."""

    def version(self) -> str:
        return "undefined"

    def config(self) -> ConfigDef:
        return ConfigDef()

    def configure(self, config: dict[str, str]) -> None:  # optional
        """Receives the predicate's own config (prefix stripped)."""

    @abstractmethod
    def test(self, record: R) -> bool: ...

    def column_condition(self, frame: ColumnFrame) -> Expr | None:  # optional
        """``test`` as a boolean column expression over ``frame``; None, the default: the
        batch runs record by record. See :mod:`connect_lite.api.column_form`."""
        return None

    def close(self) -> None:  # optional
        """Release resources."""


__all__ = ["Converter", "HeaderConverter", "Predicate", "Transformation"]
