"""Secrets through config providers, in a real worker (broker, Spark, SQLite): the tasks get
the values, while the state file, REST answers and logs only ever hold the references."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from connect_lite.testing import EmbeddedConnect, HttpResponse, wait_for
from tests.integration.testkit import lines, sink_config, unique, worker_options

pytestmark = pytest.mark.integration

FILE_SECRET = "file-secret-7Qx9"
DIR_SECRET = "dir-secret-Lm3k"
ENV_SECRET = "env-secret-Zp8w"
REFUSED_ENV = "refused-secret-Hy4c"
ROTATING_SECRET = "rotating-secret-Vb2n"
KAFKA_PROVIDERS = "org.apache.kafka.common.config.provider."
SECRETS = (FILE_SECRET, DIR_SECRET, ENV_SECRET, REFUSED_ENV, ROTATING_SECRET)


@dataclass
class Secured:
    worker: EmbeddedConnect
    secrets_dir: Path
    answers: list[HttpResponse]

    def call(self, method: str, path: str, body: object = None) -> HttpResponse:
        answer = self.worker.http.request(method, path, body)
        self.answers.append(answer)
        return answer

    def status(self, name: str) -> dict[str, Any]:
        answer = self.call("GET", f"/connectors/{name}/status")
        assert answer.status == 200, answer.body
        return dict(answer.body)

    def wait_running(self, name: str) -> None:
        def running() -> bool:
            status = self.status(name)
            states = [status["connector"]["state"], *(t["state"] for t in status["tasks"])]
            return len(states) > 1 and set(states) == {"RUNNING"}

        wait_for(running, what=f"{name} and its tasks RUNNING")

    def assert_no_secret_leaked(self) -> None:
        """Not in the state file (WAL included), in any REST answer, or in the log."""
        state = self.worker.state_file
        files = sorted(state.parent.glob(f"{state.name}*"))
        assert {state.name, f"{state.name}-wal"} <= {f.name for f in files}  # the worker runs
        for path in files:
            data = path.read_bytes()
            for secret in SECRETS:
                assert secret.encode() not in data, f"{secret} found in {path.name}"
        self.call("GET", "/connectors?expand=status&expand=info")
        self.call("GET", "/metrics")
        for answer in self.answers:
            for secret in SECRETS:
                assert secret.encode() not in answer.raw, f"{secret} in a REST answer"
        log = self.worker.log_text()
        for secret in SECRETS:
            assert secret not in log, f"{secret} in the worker log"

    @property
    def file_ref(self) -> str:
        return f"${{file:{self.secrets_dir}/db.properties:password}}"

    @property
    def dir_ref(self) -> str:
        return f"${{dir:{self.secrets_dir}/k8s:token}}"


@pytest.fixture(scope="module")
def secured(bootstrap_servers: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Secured]:
    secrets_dir = tmp_path_factory.mktemp("secrets")
    (secrets_dir / "db.properties").write_text(f"password={FILE_SECRET}\n")
    (secrets_dir / "k8s").mkdir()
    (secrets_dir / "k8s" / "token").write_text(DIR_SECRET)
    env = {
        **os.environ,
        "APP_SECRET": ENV_SECRET,
        "APP_FLUSH_MS": "500",
        "REFUSED_SECRET": REFUSED_ENV,
    }
    workdir = tmp_path_factory.mktemp("secrets-worker")
    extra = {
        "config.providers": "file,dir,env",
        "config.providers.file.class": KAFKA_PROVIDERS + "FileConfigProvider",
        "config.providers.file.param.allowed.paths": str(secrets_dir),
        "config.providers.dir.class": "DirectoryConfigProvider",
        "config.providers.dir.param.allowed.paths": str(secrets_dir),
        "config.providers.env.class": KAFKA_PROVIDERS + "EnvVarConfigProvider",
        "config.providers.env.param.allowlist.pattern": "APP_.*",
        # KIP-421: the worker's own keys may refer to providers too.
        "offset.flush.interval.ms": "${env:APP_FLUSH_MS}",
    }
    options = worker_options(workdir=workdir, worker_properties=extra, env=env)
    with EmbeddedConnect(bootstrap_servers=bootstrap_servers, **options) as worker:
        yield Secured(worker, secrets_dir, [])


def test_tasks_get_the_values_while_file_rest_and_logs_keep_the_references(
    secured: Secured, tmp_path: Path
) -> None:
    name, topic = unique("secret-src"), unique("secret-topic")
    prefix = f"{secured.file_ref}|{secured.dir_ref}|${{env:APP_SECRET}}|"
    config = {
        "connector.class": "ScriptedSource",
        "topic": topic,
        "tasks.max": "1",
        "max.records": "5",
        "value.prefix": prefix,
        "secret": "${env:APP_SECRET}",
    }
    assert secured.call("PUT", f"/connectors/{name}/config", config).status == 201
    out = tmp_path / "records.jsonl"
    sink = unique("secret-sink")
    assert secured.call("PUT", f"/connectors/{sink}/config", sink_config(topic, out)).status == 201
    secured.wait_running(name)
    records = wait_for(lambda: len(lines(out)) >= 5 and lines(out), what="the 5 records")
    values = sorted(json.loads(line)["value"] for line in records)
    assert values == [f"{FILE_SECRET}|{DIR_SECRET}|{ENV_SECRET}|{n}" for n in range(5)]

    stored = secured.call("GET", f"/connectors/{name}/config").body
    assert stored["value.prefix"] == prefix and stored["secret"] == "${env:APP_SECRET}"
    [task] = secured.call("GET", f"/connectors/{name}/tasks").body
    assert task["config"]["value.prefix"] == prefix
    assert task["config"]["secret"] == "${env:APP_SECRET}"
    info = secured.call("GET", "/connectors?expand=info").body[name]["info"]
    assert info["config"]["value.prefix"] == prefix
    validated = secured.call(
        "PUT", "/connector-plugins/ScriptedSource/config/validate", {**config, "name": name}
    ).body
    shown = {c["value"]["name"]: c["value"]["value"] for c in validated["configs"] if c["value"]}
    assert shown["value.prefix"] == prefix and shown["secret"] == "[hidden]"
    assert validated["error_count"] == 0

    # An update and a delete: no copy of a secret may linger anywhere in the file either.
    assert (
        secured.call("PUT", f"/connectors/{name}/config", {**config, "max.records": "6"}).status
        == 200
    )
    secured.wait_running(name)
    assert secured.call("DELETE", f"/connectors/{name}").status == 204
    assert secured.call("DELETE", f"/connectors/{sink}").status == 204
    secured.assert_no_secret_leaked()


@pytest.mark.parametrize(
    ("reference", "reason"),
    [
        ("${file:/etc/hostname:x}", "file: Path /etc/hostname is not allowed by allowed.paths"),
        (
            "${env:REFUSED_SECRET}",
            "env: Environment variable REFUSED_SECRET is not allowed by allowlist.pattern",
        ),
    ],
)
def test_allowlists_refuse_a_path_or_a_variable_naming_key_and_provider(
    secured: Secured, reference: str, reason: str
) -> None:
    config = {
        "connector.class": "ScriptedSource",
        "topic": unique("t"),
        "tasks.max": "1",
        "value.prefix": reference,
    }
    refused = secured.call("PUT", f"/connectors/{unique('refused')}/config", config)
    assert refused.status == 400
    assert (
        f"Could not resolve {reference} in config value.prefix with config provider {reason}"
    ) in refused.body["message"]
    secured.assert_no_secret_leaked()


def test_a_secret_that_cannot_be_resolved_fails_the_task_with_a_clear_trace(
    secured: Secured,
) -> None:
    rotating = secured.secrets_dir / "rotating.properties"
    rotating.write_text(f"password={ROTATING_SECRET}\n")
    name = unique("rotating")
    reference = f"${{file:{rotating}:password}}"
    config = {
        "connector.class": "ScriptedSource",
        "topic": unique("t"),
        "tasks.max": "1",
        "poll.interval.ms": "200",
        "value.prefix": reference,
    }
    assert secured.call("PUT", f"/connectors/{name}/config", config).status == 201
    secured.wait_running(name)
    rotating.unlink()
    assert secured.call("POST", f"/connectors/{name}/tasks/0/restart").status == 204

    def failed() -> object:
        status = secured.status(name)
        return status["tasks"] and status["tasks"][0]["state"] == "FAILED" and status

    status = wait_for(failed, what="the task to fail")
    trace = status["tasks"][0]["trace"]
    assert (
        f"Could not resolve {reference} in config value.prefix with config provider file: "
        f"Could not read properties from file {rotating}"
    ) in trace
    assert status["connector"]["state"] == "RUNNING"
    assert secured.call("DELETE", f"/connectors/{name}").status == 204
    secured.assert_no_secret_leaked()


def test_a_reference_to_an_unlisted_provider_is_logged_once_in_the_connectors_context(
    secured: Secured,
) -> None:
    """It was logged four times for one connector (validation, the connector's start, its task's
    config and the task's own), once with a doubled context: ``[c|task-0] [c|task-0]``."""
    name = unique("unlisted")
    config = {
        "connector.class": "ScriptedSource",
        "topic": unique("t"),
        "tasks.max": "1",
        "token": "${vault:db:password}",
    }
    assert secured.call("PUT", f"/connectors/{name}/config", config).status == 201
    secured.wait_running(name)
    warned = [
        line
        for line in secured.worker.log_text().splitlines()
        if name in line and "config.providers does not name" in line
    ]
    assert len(warned) == 1, warned
    assert (
        f"WARN [{name}|worker] Config token refers to config provider 'vault', which "
        "config.providers does not name; its text is used as written"
    ) in warned[0]
    assert secured.call("DELETE", f"/connectors/{name}").status == 204
