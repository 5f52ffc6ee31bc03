"""The herder's checks of a create or put request: the connector name and the initial state."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_lite.api.errors import BadRequestError
from connect_lite.protocol.states import TargetState


def parse_initial_state(value: str | None) -> TargetState:
    """KIP-980 ``initial_state``: RUNNING (default), PAUSED or STOPPED, in any case."""
    if value is None:
        return TargetState.RUNNING
    names = [state.value for state in TargetState]
    if value.upper() not in names:
        raise BadRequestError(
            f"Invalid initial_state '{value}': must be one of {', '.join(names)}."
        )
    return TargetState(value.upper())


def with_name(name: str, config: Mapping[str, Any]) -> dict[str, Any]:
    """Kafka's name check: a ``name`` in the config must equal the connector's; else it is added."""
    config = dict(config)
    given = config.get("name")
    if given is not None and given != name:
        raise BadRequestError(
            f"Connector name configuration ({given}) doesn't match connector name in the URL "
            f"({name})"
        )
    config["name"] = name
    return config
