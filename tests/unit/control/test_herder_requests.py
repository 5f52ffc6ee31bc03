"""The herder's checks of a create or put: the connector name and KIP-980's initial state."""

from __future__ import annotations

import pytest

from connect_lite.api.errors import BadRequestError
from connect_lite.control.connector_requests import parse_initial_state, with_name
from connect_lite.protocol.states import TargetState


@pytest.mark.parametrize(
    "given, state",
    [(None, TargetState.RUNNING), ("paused", TargetState.PAUSED), ("Stopped", TargetState.STOPPED)],
)
def test_initial_state_in_any_case(given: str | None, state: TargetState) -> None:
    assert parse_initial_state(given) is state


@pytest.mark.parametrize("given", ["SLEEPING", "", " PAUSED"])
def test_other_initial_states_are_400(given: str) -> None:
    message = f"Invalid initial_state '{given}': must be one of RUNNING, PAUSED, STOPPED."
    with pytest.raises(BadRequestError) as raised:
        parse_initial_state(given)
    assert str(raised.value) == message


def test_the_name_is_added_or_must_match() -> None:
    assert with_name("c", {"x": "1"}) == {"x": "1", "name": "c"}
    assert with_name("c", {"name": None}) == {"name": "c"}
    with pytest.raises(BadRequestError) as raised:
        with_name("c", {"name": "d"})
    assert str(raised.value) == (
        "Connector name configuration (d) doesn't match connector name in the URL (c)"
    )
