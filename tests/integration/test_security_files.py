"""Security, round two, against a real worker: the local files connectors may touch, secrets
that would become names (validate entries, active topics, source partitions), traces that
quote records, and control characters that would forge log lines.

One worker serves the module: its state file in ``workdir``, connectors bounded to
``allowed`` and ``workdir`` (so that the state file's own directory is allowed and the state
file still refused), and file and env config providers.
"""

from __future__ import annotations

import json
import os
import site
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from connect_lite.testing import EmbeddedConnect, HttpResponse, wait_for
from tests.integration.testkit import unique, worker_options

pytestmark = pytest.mark.integration

SECRET = "S3cretPassw0rd"
COMMA_SECRET = "first-part,second-part"
ENV_SECRET = "EnvSecretValue1"
SECRETS = (SECRET, ENV_SECRET, "first-part", "second-part")
FORGED = "[2026-11-27 12:00:00,000] ERROR Login failed for user admin"
PROVIDERS = "org.apache.kafka.common.config.provider."


@dataclass
class Setup:
    worker: EmbeddedConnect
    allowed: Path
    secrets: Path
    answers: list[HttpResponse]

    def call(self, method: str, path: str, body: object = None) -> HttpResponse:
        answer = self.worker.http.request(method, path, body)
        self.answers.append(answer)
        return answer

    def ref(self, key: str = "password") -> str:
        return f"${{file:{self.secrets}/db.properties:{key}}}"

    def task_state(self, name: str) -> dict[str, Any] | None:
        tasks = self.call("GET", f"/connectors/{name}/status").body.get("tasks") or []
        return tasks[0] if tasks else None

    def state_files(self) -> list[Path]:
        """The state file, its WAL and whatever else SQLite keeps beside it."""
        state = self.worker.state_file
        files = sorted(state.parent.glob(f"{state.name}*"))
        assert state in files, f"no state file {state}: nothing to check"
        return files

    def assert_no_secret_leaked(self) -> None:
        """Not in the state file (WAL included), any REST answer, or the log."""
        for path in self.state_files():
            data = path.read_bytes()
            for secret in SECRETS:
                assert secret.encode() not in data, f"{secret} found in {path.name}"
        for answer in self.answers:
            for secret in SECRETS:
                assert secret.encode() not in answer.raw, f"{secret} in a REST answer"
        log = self.worker.log_text()
        for secret in SECRETS:
            assert secret not in log, f"{secret} in the worker log"


@pytest.fixture(scope="module")
def setup(bootstrap_servers: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    allowed = tmp_path_factory.mktemp("allowed")
    secrets = tmp_path_factory.mktemp("secrets")
    (secrets / "db.properties").write_text(
        f"password={SECRET}\ncomma={COMMA_SECRET}\n", encoding="utf-8"
    )
    workdir = tmp_path_factory.mktemp("files-worker")
    env = {
        **os.environ,
        "APP_SECRET": ENV_SECRET,
        "APP_IN_FILE": str(allowed / "from-env.txt"),
    }
    extra = {
        "connector.allowed.paths": f"{allowed},{workdir}",
        "config.providers": "file,env",
        "config.providers.file.class": PROVIDERS + "FileConfigProvider",
        "config.providers.file.param.allowed.paths": str(secrets),
        "config.providers.env.class": PROVIDERS + "EnvVarConfigProvider",
        "config.providers.env.param.allowlist.pattern": "APP_.*",
    }
    options = worker_options(workdir=workdir, worker_properties=extra, env=env)
    with EmbeddedConnect(bootstrap_servers=bootstrap_servers, **options) as worker:
        yield Setup(worker, allowed, secrets, [])


def _file_source(path: str, topic: str, **extra: str) -> dict[str, str]:
    return {"connector.class": "FileStreamSource", "file": path, "topic": topic, **extra}


def _file_sink(path: str, topic: str, **extra: str) -> dict[str, str]:
    return {"connector.class": "FileStreamSink", "file": path, "topics": topic, **extra}


def _file_errors(answer: HttpResponse) -> list[str]:
    assert answer.status == 200, answer.body
    return [
        error
        for config in answer.body["configs"]
        if config["value"] and config["value"]["name"] == "file"
        for error in config["value"]["errors"]
    ]


def test_files_outside_the_allowed_paths_are_an_error_in_validate_and_a_400_at_create(
    setup: Setup, tmp_path: Path
) -> None:
    allowed = setup.allowed
    (allowed / "link-out").symlink_to(tmp_path)
    site_packages = site.getsitepackages()[0]
    refused = {
        "/etc/hostname": "outside",
        str(allowed / ".." / "escaped.txt"): "outside",
        str(allowed / "link-out" / "through-a-link.txt"): "outside",
        os.path.join(site_packages, "evil.pth"): "Python installation",
        str(setup.worker.state_file): "state file",
        f"{setup.worker.state_file}-wal": "state file",
    }
    for path, why in refused.items():
        for kind, config in (
            ("FileStreamSource", _file_source(path, "t")),
            ("FileStreamSink", _file_sink(path, "t")),
        ):
            validated = setup.call("PUT", f"/connector-plugins/{kind}/config/validate", config)
            [error] = _file_errors(validated)
            assert why in error and error.startswith(f"Invalid value {path} for configuration file")
            created = setup.call("POST", "/connectors", {"name": unique("out"), "config": config})
            assert created.status == 400, (path, created.body)
            assert "connector.allowed.paths" in created.body["message"] or why in str(created.body)
    assert not (tmp_path / "through-a-link.txt").exists()
    assert not os.path.exists(os.path.join(site_packages, "evil.pth"))
    # Inside the allowed directories all is as before.
    inside = _file_source(str(allowed / "fine.txt"), "t")
    assert (
        _file_errors(
            setup.call("PUT", "/connector-plugins/FileStreamSource/config/validate", inside)
        )
        == []
    )


def test_a_lake_sinks_local_store_is_bounded_too(setup: Setup) -> None:
    def store_errors(url: str) -> list[str]:
        config = {"connector.class": "LakeSink", "topics": "t", "store.url": url}
        answer = setup.call("PUT", "/connector-plugins/LakeSink/config/validate", config)
        assert answer.status == 200, answer.body
        return [
            error
            for c in answer.body["configs"]
            if c["value"] and c["value"]["name"] == "store.url"
            for error in c["value"]["errors"]
        ]

    assert store_errors(f"file://{setup.allowed}/lake") == []
    assert store_errors(str(setup.allowed / "lake")) == []
    for outside in ("file:///root/lake", "/var/tmp/lake", f"file://{setup.allowed}/../lake"):
        [error] = store_errors(outside)
        assert "outside the directories" in error, error
    assert store_errors("s3a://bucket/lake") == []  # not a local path


def test_key_and_trust_files_of_client_overrides_are_bounded_too(setup: Setup) -> None:
    config = {
        **_file_source(str(setup.allowed / "in.txt"), "t"),
        "producer.override.ssl.ca.location": "/etc/shadow",
    }
    validated = setup.call("PUT", "/connector-plugins/FileStreamSource/config/validate", config)
    assert validated.status == 200
    [error] = [
        e
        for c in validated.body["configs"]
        if c["value"] and c["value"]["name"] == "producer.override.ssl.ca.location"
        for e in c["value"]["errors"]
    ]
    assert "outside the directories" in error
    created = setup.call("POST", "/connectors", {"name": unique("ca"), "config": config})
    assert created.status == 400 and "ssl.ca.location" in created.body["message"]


def test_a_connector_config_may_not_set_the_worker_key(setup: Setup) -> None:
    config = {**_file_sink("/etc/cron.d/evil", "t"), "connector.allowed.paths": "/"}
    for method, path, body in (
        ("PUT", "/connector-plugins/FileStreamSink/config/validate", config),
        ("POST", "/connectors", {"name": unique("widen"), "config": config}),
    ):
        answer = setup.call(method, path, body)
        assert answer.status == 400
        assert "connector.allowed.paths is a worker setting" in answer.body["message"]


def test_the_path_is_checked_again_at_each_task_start(setup: Setup, tmp_path: Path) -> None:
    """Valid when created, a link swapped to point outside: the task's next start fails, and
    nothing is written outside."""
    target = setup.allowed / unique("target")
    target.mkdir()
    link = setup.allowed / unique("link")
    link.symlink_to(target)
    name = unique("relinked")
    config = _file_sink(str(link / "out.txt"), unique("topic"))
    assert setup.call("POST", "/connectors", {"name": name, "config": config}).status == 201
    setup.worker.wait_running(name, tasks=1)
    assert (target / "out.txt").exists()

    link.unlink()
    link.symlink_to(tmp_path)
    assert setup.call("POST", f"/connectors/{name}/tasks/0/restart").status == 204
    failed = wait_for(
        lambda: (t := setup.task_state(name)) and t["state"] == "FAILED" and t,
        what="the restarted task FAILED",
    )
    assert "connector.allowed.paths" in failed["trace"]
    assert not (tmp_path / "out.txt").exists()
    assert setup.call("DELETE", f"/connectors/{name}").status == 204


def test_a_cast_failure_does_not_quote_the_record_in_the_trace(setup: Setup) -> None:
    source = setup.allowed / unique("lines")
    source.write_text("line-one-aaaa\nline-two-bbbb\n", encoding="utf-8")
    name = unique("cast")
    config = {
        **_file_source(str(source), unique("topic")),
        "transforms": "c",
        "transforms.c.type": "org.apache.kafka.connect.transforms.Cast$Value",
        "transforms.c.spec": "int32",
    }
    assert setup.call("POST", "/connectors", {"name": name, "config": config}).status == 201
    failed = wait_for(
        lambda: (t := setup.task_state(name)) and t["state"] == "FAILED" and t,
        what="the task FAILED on the cast",
    )
    assert "line-one" not in failed["trace"] and "line-two" not in failed["trace"]
    assert "out of range for requested data type INT32" in failed["trace"], failed["trace"]
    assert setup.call("DELETE", f"/connectors/{name}").status == 204


@pytest.mark.parametrize(
    "keys",
    [
        {"transforms": "REF"},
        {"predicates": "${env:APP_SECRET}"},
        {"transforms": "a", "transforms.a.type": "REF"},
        {"transforms": "a", "transforms.a.predicate": "REF"},
        {"topic.creation.groups": "REF"},
        {"transforms": "COMMA"},
        {"connector.plugin.version": "REF"},
    ],
    ids=lambda keys: "+".join(keys),
)
def test_validate_never_answers_with_a_resolved_value_in_a_name(
    setup: Setup, keys: dict[str, str]
) -> None:
    """Keys that name aliases, groups or classes take no references: 400, naming the key."""
    written = {
        key: value.replace("REF", setup.ref()).replace("COMMA", setup.ref("comma"))
        for key, value in keys.items()
    }
    config = {**_file_source(str(setup.allowed / "in.txt"), "t"), **written}
    referring = next(key for key, value in written.items() if "${" in value)
    for method, path, body in (
        ("PUT", "/connector-plugins/FileStreamSource/config/validate", config),
        ("POST", "/connectors", {"name": unique("named"), "config": config}),
        ("PUT", f"/connectors/{unique('named')}/config", config),
    ):
        answer = setup.call(method, path, body)
        assert answer.status == 400, answer.body
        assert answer.body["message"].startswith(f"Config {referring} names aliases"), answer.body
    setup.assert_no_secret_leaked()


def test_a_topic_and_a_file_named_by_references_are_kept_as_references(
    setup: Setup,
) -> None:
    """KIP-558 topics and source partitions never hold the resolved value."""
    input_file = setup.allowed / "from-env.txt"
    input_file.write_text("one\ntwo\n", encoding="utf-8")
    name = unique("named-by-ref")
    config = _file_source("${env:APP_IN_FILE}", setup.ref())
    assert setup.call("POST", "/connectors", {"name": name, "config": config}).status == 201
    setup.worker.wait_running(name, tasks=1)

    def offsets() -> Any:
        body = setup.call("GET", f"/connectors/{name}/offsets").body
        found = body.get("offsets") or []
        return found and found[0]["offset"].get("position") == 8 and found

    [offset] = wait_for(offsets, what="the source's offset after both lines")
    assert offset["partition"] == {"filename": "${env:APP_IN_FILE}"}
    topics = wait_for(
        lambda: setup.call("GET", f"/connectors/{name}/topics").body[name]["topics"],
        what="the active topic",
    )
    assert topics == [setup.ref()]
    setup.call("GET", "/connectors?expand=status&expand=info")
    setup.call("GET", "/metrics")
    state = b"".join(p.read_bytes() for p in setup.state_files())
    assert str(input_file).encode() not in state
    setup.assert_no_secret_leaked()
    assert setup.call("DELETE", f"/connectors/{name}").status == 204


def test_control_characters_are_refused_and_never_forge_a_log_line(setup: Setup) -> None:
    key = f"x\n{FORGED}"
    config = {**_file_source(str(setup.allowed / "in.txt"), "t"), key: "v"}
    for method, path, body in (
        ("PUT", "/connector-plugins/FileStreamSource/config/validate", config),
        ("POST", "/connectors", {"name": unique("forger"), "config": config}),
        ("PUT", f"/connectors/{unique('forger')}/config", config),
    ):
        answer = setup.call(method, path, body)
        assert answer.status == 400, answer.body
        assert "may not contain ISO control characters" in answer.body["message"]
    named = setup.call(
        "POST",
        "/connectors",
        {"name": f"bad\n{FORGED}", "config": _file_source(str(setup.allowed / "a"), "t")},
    )
    assert named.status == 400
    assert "control" in named.body["message"]
    log_lines = setup.worker.log_text().splitlines()
    assert not [line for line in log_lines if line.startswith(FORGED[:25])], json.dumps(
        log_lines[-20:]
    )
