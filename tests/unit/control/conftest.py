"""Fixtures of the control-plane tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.unit.control.real_herder import HerderParts, herder_parts


@pytest.fixture
def parts() -> Iterator[HerderParts]:
    """A real herder and worker over memory stores (see real_herder.herder_parts)."""
    made = herder_parts()
    yield made
    made.stop()
