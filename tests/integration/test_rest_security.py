"""A real worker refuses connector configs that would load code or call URLs through overrides."""

from __future__ import annotations

import pytest

from tests.integration.worker_process import WorkerProcess, source_config, unique

pytestmark = pytest.mark.integration

DENIED = {
    "producer.override.plugin.library.paths": "/tmp/evil.so",
    "consumer.override.sasl.kerberos.kinit.cmd": "touch /tmp/pwned",
    "admin.override.sasl.oauthbearer.token.endpoint.url": "http://127.0.0.1:9/token",
}


@pytest.mark.parametrize("key", sorted(DENIED))
def test_denied_override_is_refused_on_create_update_and_validate(
    worker: WorkerProcess, key: str
) -> None:
    name = unique("denied")
    config = {**source_config(unique("t")), key: DENIED[key]}
    created = worker.rest.post("/connectors", {"name": name, "config": config})
    assert created.status == 400, created.body
    assert (
        "may not be overridden" in created.body["message"]
        or "is not allowed" in (created.body["message"])
    )
    assert key.split(".override.", 1)[1] in created.body["message"]
    assert worker.rest.get(f"/connectors/{name}").status == 404

    clean = worker.rest.put(f"/connectors/{name}/config", source_config(unique("t")))
    assert clean.status == 201, clean.body
    updated = worker.rest.put(f"/connectors/{name}/config", config)
    assert updated.status == 400, updated.body
    stored = worker.rest.get(f"/connectors/{name}/config").body
    assert key not in stored

    validated = worker.rest.put(
        "/connector-plugins/ScriptedSource/config/validate", {"name": name, **config}
    )
    assert validated.status == 200
    assert validated.body["error_count"] == 1
    [entry] = [c for c in validated.body["configs"] if c["value"]["name"] == key]
    assert len(entry["value"]["errors"]) == 1
    assert worker.rest.delete(f"/connectors/{name}").status == 204
