"""Assertions and bodies shared by the REST tests."""

from __future__ import annotations

from typing import Any

from werkzeug.test import TestResponse

SOURCE = "org.example.FileSource"
NOW_S = 1_700_000_000.5
"""The fixed clock of the Loggers fixture."""


def error(response: TestResponse, code: int, message: str | None) -> None:
    """The response is Kafka's JSON error body with this code and message."""
    assert response.status_code == code
    assert response.content_type == "application/json"
    assert response.get_json() == {"error_code": code, "message": message}


def src_config(**extra: Any) -> dict[str, Any]:
    return {"connector.class": SOURCE, "tasks.max": "2", **extra}
