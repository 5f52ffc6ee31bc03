"""The offset store as the worker's tasks and REST requests see it: a source partition's value
that is, whole, a resolved config provider value is kept as its reference.

A source task whose ``file`` came from ``${file:…:password}`` would otherwise record the secret
inside a source partition, in the state file and in REST answers (the topic tracker does the
same for active topics). Names are matched whole, never in part, so two names cannot
become one; a partition is concealed the same way when it is written and when it is looked
up, so a task finds its offsets. Offset values (positions) are kept exactly as the task wrote
them: changing them would lose or repeat records.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from connect_lite.api.records import canonical_json
from connect_lite.storage.base import OffsetStore

Conceal = Callable[[str], str]


def _concealed(value: Any, conceal: Conceal) -> Any:
    if isinstance(value, str):
        return conceal(value)
    if isinstance(value, Mapping):
        return {key: _concealed(item, conceal) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_concealed(item, conceal) for item in value]
    return value


class ConcealedOffsets(OffsetStore):
    """Source partitions' string values stored and looked up as their references."""

    def __init__(self, inner: OffsetStore, conceal: Conceal) -> None:
        self.inner = inner
        self._conceal = conceal

    def get(self, connector: str, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        return self.inner.get(connector, _concealed(partition, self._conceal))

    def put_many(
        self, connector: str, offsets: Mapping[str, tuple[Mapping[str, Any], Any]]
    ) -> None:
        shown: dict[str, tuple[Mapping[str, Any], Any]] = {}
        for partition, offset in offsets.values():
            concealed = _concealed(partition, self._conceal)
            shown[canonical_json(concealed)] = (concealed, offset)
        self.inner.put_many(connector, shown)

    def all(self, connector: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        return self.inner.all(connector)

    def remove_connector(self, connector: str) -> None:
        self.inner.remove_connector(connector)


__all__ = ["ConcealedOffsets"]
