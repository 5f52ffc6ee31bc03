"""Filter: drops every record it is applied to; meant to be guarded by a predicate."""

from __future__ import annotations

import dataclasses
from typing import Any

from connect_lite.api.column_form import ColumnFrame, Lit
from connect_lite.transforms.base import BuiltinTransformation, kafka_class


class Filter(BuiltinTransformation):
    """Kafka's Filter: returns None for every record, so the chain stops and the record is
    dropped. On its own it drops everything; with ``predicate`` (and ``negate``) it drops
    exactly the records that match (or do not match)."""

    __connect_class_name__ = kafka_class("Filter")

    def apply(self, record: Any) -> None:
        return None

    def column_form(self, frame: ColumnFrame, out: Any) -> ColumnFrame | None:
        return dataclasses.replace(frame, keep=Lit(False))
