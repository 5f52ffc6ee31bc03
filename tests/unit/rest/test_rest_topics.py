"""KIP-558 routes and GET /metrics in the HTTP layer."""

from __future__ import annotations

from typing import Any

from connect_lite.api.errors import ForbiddenError


def test_topics_shape_and_reset(client: Any, herder: Any) -> None:
    herder.topics["c"] = ["b", "a"]
    response = client.get("/connectors/c/topics")
    assert response.status_code == 200
    assert response.get_json() == {"c": {"topics": ["a", "b"]}}
    assert client.get("/connectors/never/topics/").get_json() == {"never": {"topics": []}}
    reset = client.put("/connectors/c/topics/reset")
    assert reset.status_code == 202 and reset.data == b""
    assert ("reset_topics", "c") in herder.calls


def test_forbidden_is_403_with_the_herders_message(client: Any, herder: Any) -> None:
    """The mapping only; the real herder's texts are in test_rest_real_herder."""
    herder.fail_with = ForbiddenError("Topic tracking is disabled.")
    response = client.get("/connectors/c/topics")
    assert response.status_code == 403
    assert response.get_json() == {"error_code": 403, "message": "Topic tracking is disabled."}


def test_metrics_is_prometheus_text(client: Any) -> None:
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/plain; version=")
    assert b"fake_metric 1.0" in response.data
