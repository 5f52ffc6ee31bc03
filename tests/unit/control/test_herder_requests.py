"""The herder's checks of a create or put: the connector name and KIP-980's initial state."""

from __future__ import annotations

import pytest

from connect_lite.api.errors import BadRequestError
from connect_lite.control.connector_requests import parse_initial_state, with_name
from connect_lite.protocol.states import TargetState
from tests.unit.control.real_herder import HerderParts


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


def test_the_herder_checks_overrides_by_librdkafka_too(parts: HerderParts) -> None:
    """What Kafka's Java rules take but librdkafka, connect-lite's client, would refuse."""
    config = {
        "connector.class": "ScriptedSource",
        "topic": "t",
        "producer.override.linger.ms": "1000000",  # a LONG of at least 0; librdkafka: ≤ 900000
    }
    infos = parts.herder.validate_config("ScriptedSource", config)
    [entry] = [c for c in infos.configs if c["value"]["name"] == "producer.override.linger.ms"]
    [message] = entry["value"]["errors"]
    assert message.startswith("Invalid value 1000000 for configuration linger.ms: librdkafka")
    with pytest.raises(BadRequestError) as refused:
        parts.herder.create_connector("c", config)
    assert message in str(refused.value)
    assert parts.herder.connectors() == []
