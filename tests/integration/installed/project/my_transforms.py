"""A transformation module of a user's project, neither installed nor in a plugin directory."""

from __future__ import annotations

import dataclasses
from typing import Any

from connect_lite.api import Transformation


class UpperCaseValue(Transformation):
    """Upper-cases a string value."""

    def apply(self, record: Any) -> Any:
        return dataclasses.replace(record, value=str(record.value).upper())
