"""Config providers in the herder and worker: stored as written, resolved only at start."""

from __future__ import annotations

import io
import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from connect_lite.api.errors import BadRequestError, ConfigError, ConnectError
from connect_lite.config.resolution import ConfigResolver, Redactor
from connect_lite.control.config_providers import load_config_providers, resolve_worker_props
from connect_lite.control.herder import RELOAD_MIN_DELAY_MS
from connect_lite.control.status import StatusReporter
from connect_lite.logs.context import ContextFilter
from connect_lite.logs.loggers import install_redaction
from connect_lite.plugins.registry import Plugins
from connect_lite.plugins.types import PluginType
from connect_lite.protocol.states import State
from connect_lite.storage.memory import open_memory_stores
from tests.unit.control.real_herder import BUNDLED, TEST_PLUGINS, HerderParts, herder_parts

SECRET = "s3cret-Passw0rd"
PROVIDERS = {
    "config.providers": "file,env",
    "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
    "config.providers.env.class": "EnvVarConfigProvider",
    "config.providers.env.param.allowlist.pattern": "APP_.*",
}


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    path = tmp_path / "db.properties"
    path.write_text(f"password={SECRET}\n")
    return path


@pytest.fixture
def with_providers(tmp_path: Path) -> Iterator[HerderParts]:
    made = herder_parts({**PROVIDERS, "config.providers.file.param.allowed.paths": str(tmp_path)})
    yield made
    made.stop()


def source(secret_file: Path, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "ScriptedSource",
        "topic": "t",
        "value.prefix": f"${{file:{secret_file}:password}}-",
        **extra,
    }


def test_configs_are_stored_as_written_and_the_connector_gets_values(
    with_providers: HerderParts, secret_file: Path
) -> None:
    herder = with_providers.herder
    config = source(secret_file)
    herder.create_connector("c", config)
    reference = config["value.prefix"]
    assert herder.connector_config("c")["value.prefix"] == reference
    running = herder.worker._connectors["c"]
    assert running.config.plugin_config["value.prefix"] == f"{SECRET}-"
    # The connector copies its (resolved) config into its task config: stored as written.
    [task] = herder.task_configs("c")
    assert task.config["value.prefix"] == reference
    assert with_providers.started[0][2]["value.prefix"] == reference
    assert SECRET not in repr(herder.stores.configs.get_task_configs("c"))


def test_only_a_whole_value_or_a_long_copy_is_put_back(
    with_providers: HerderParts, secret_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("APP_ONE", "1")
    herder = with_providers.herder
    herder.create_connector(
        "c", source(secret_file, **{"tasks.max": "${env:APP_ONE}", "max.records": "1001"})
    )
    [task] = herder.task_configs("c")
    assert task.config["tasks.max"] == "${env:APP_ONE}"
    assert task.config["max.records"] == "1001"  # "1" is too short to be told from other text
    assert task.config["task.index"] == "0" and "${" not in task.config["task.class"]


def test_a_connector_class_given_by_reference_never_shows_its_value(
    with_providers: HerderParts, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("APP_CLASS", "Tr0ub4dor-and-3")
    with pytest.raises(BadRequestError) as refused:
        with_providers.herder.create_connector(
            "c", {"connector.class": "${env:APP_CLASS}", "topic": "t"}
        )
    # Refused before anything is resolved: a class named by reference is never looked up.
    assert "connector.class names aliases, groups or classes" in str(refused.value)
    assert "Tr0ub4dor" not in str(refused.value)


def test_validate_conceals_only_the_requests_own_values(
    with_providers: HerderParts, secret_file: Path
) -> None:
    """No oracle: a guess of another connector's secret comes back as sent."""
    herder = with_providers.herder
    herder.create_connector("c", source(secret_file))
    infos = herder.validate_config(
        "ScriptedSource", {"connector.class": "ScriptedSource", "topic": f"{SECRET} guess"}
    )
    shown = {c["value"]["name"]: c["value"]["value"] for c in infos.configs if c["value"]}
    assert shown["topic"] == f"{SECRET} guess"


def test_validate_never_quotes_a_short_resolved_value(
    with_providers: HerderParts, secret_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Free text keeps values under 4 characters, but a key's own "Invalid value" shows it as
    written."""
    monkeypatch.setenv("APP_TASKS", "x9")
    infos = with_providers.herder.validate_config(
        "ScriptedSource", source(secret_file, **{"tasks.max": "${env:APP_TASKS}"})
    )
    values = {c["value"]["name"]: c["value"] for c in infos.configs if c["value"]}
    assert values["tasks.max"]["errors"][0] == (
        "Invalid value ${env:APP_TASKS} for configuration tasks.max: Not a number of type INT"
    )
    assert "x9" not in repr(infos)


def test_validate_resolves_in_memory_and_shows_references(
    with_providers: HerderParts, secret_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("APP_TASKS", "not-a-number")
    infos = with_providers.herder.validate_config(
        "ScriptedSource",
        source(
            secret_file,
            **{
                "tasks.max": "${env:APP_TASKS}",
                "max.records": "${env:APP_ABSENT}",
                "secret": "plain-password-1",
                "producer.override.ssl.key.password": f"${{file:{secret_file}:password}}",
                "producer.override.sasl.password": "plain-sasl-pw",
            },
        ),
    )
    values = {c["value"]["name"]: c["value"] for c in infos.configs if c["value"]}
    assert values["value.prefix"]["value"] == f"${{file:{secret_file}:password}}-"
    assert values["secret"]["value"] == "[hidden]"
    assert values["producer.override.ssl.key.password"]["value"] == "[hidden]"
    assert values["producer.override.sasl.password"]["value"] == "[hidden]"
    assert values["tasks.max"]["value"] == "${env:APP_TASKS}"
    assert values["tasks.max"]["errors"][0] == (
        "Invalid value ${env:APP_TASKS} for configuration tasks.max: Not a number of type INT"
    )
    assert values["max.records"]["errors"][-1].startswith(
        "Could not resolve ${env:APP_ABSENT} in config max.records with config provider env"
    )
    assert infos.error_count == sum(len(v["errors"]) for v in values.values())
    text = repr(infos)
    for secret in (SECRET, "not-a-number", "plain-password-1", "plain-sasl-pw"):
        assert secret not in text


def test_create_with_an_unresolvable_reference_is_a_400_naming_key_and_provider(
    with_providers: HerderParts, tmp_path: Path
) -> None:
    outside = "/etc/hostname"
    with pytest.raises(BadRequestError) as refused:
        with_providers.herder.create_connector(
            "c", source(tmp_path / "x", **{"value.prefix": f"${{file:{outside}:k}}"})
        )
    assert (
        f"Could not resolve ${{file:{outside}:k}} in config value.prefix with config provider "
        f"file: Path {outside} is not allowed by allowed.paths"
    ) in str(refused.value)
    assert with_providers.herder.connectors() == []


def test_a_connector_whose_secret_is_gone_fails_with_a_trace_naming_it(
    with_providers: HerderParts, secret_file: Path
) -> None:
    herder = with_providers.herder
    herder.create_connector("c", source(secret_file))
    secret_file.unlink()
    herder.restart_connector("c", include_tasks=False, only_failed=False)
    status = herder.connector_status("c").connector
    assert status.state is State.FAILED
    assert "Could not resolve ${file:" in (status.trace or "")
    assert "in config value.prefix with config provider file" in (status.trace or "")


def test_expiring_values_restart_the_connector_unless_reload_is_none(tmp_path: Path) -> None:
    made = herder_parts(
        {
            "config.providers": "counting",
            "config.providers.counting.class": "CountingConfigProvider",
            "config.providers.counting.param.ttl.ms": "100",
        }
    )
    try:
        herder = made.herder
        config = {
            "connector.class": "ScriptedSource",
            "topic": "t",
            "value.prefix": "${counting:gen}",
        }
        herder.create_connector("quiet", {**config, "config.action.reload": "none"})
        assert "quiet" not in herder._reloads
        herder._schedule_reload("quiet", -1)  # ignored, as Kafka ignores a negative ttl
        assert "quiet" not in herder._reloads
        herder._schedule_reload("quiet", 0)  # never sooner than RELOAD_MIN_DELAY_MS
        assert herder._reloads["quiet"].interval == RELOAD_MIN_DELAY_MS / 1000
        herder.put_connector_config("quiet", {**config, "config.action.reload": "none"})
        assert "quiet" not in herder._reloads  # a restart drops the pending reload
        herder.create_connector("c", config)
        first = herder.worker._connectors["c"].config.plugin_config["value.prefix"]
        deadline = time.monotonic() + 30
        while herder.worker._connectors["c"].config.plugin_config["value.prefix"] == first:
            assert time.monotonic() < deadline, "the connector was never restarted"
            time.sleep(0.05)
        assert herder.connector_config("c")["value.prefix"] == "${counting:gen}"
        herder.delete_connector("c")
        assert "c" not in herder._reloads
    finally:
        made.stop()


def test_status_traces_conceal_resolved_values_and_passwords(
    secret_file: Path, tmp_path: Path
) -> None:
    redactor = Redactor()
    resolver = load_config_providers(
        {**PROVIDERS, "config.providers.file.param.allowed.paths": str(tmp_path)},
        Plugins([]),
        redactor,
    )
    resolver.resolve({"p": f"${{file:{secret_file}:password}}"})
    redactor.add_passwords(["plain-password-1"])
    stores = open_memory_stores()
    status = StatusReporter(stores.statuses, "w", redactor=redactor)
    try:
        status.connector("c", State.FAILED, f"login {SECRET} / plain-password-1 refused")
        trace = stores.statuses.get_connector("c").trace  # type: ignore[union-attr]
    finally:
        status.close()
    assert trace == f"login ${{file:{secret_file}:password}} / [hidden] refused"


def test_log_lines_and_tracebacks_conceal_secrets() -> None:
    redactor = Redactor()
    redactor.add({SECRET: "${env:APP_X}"})
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    root = logging.getLogger()
    root.addHandler(handler)
    remove = install_redaction(redactor)
    try:
        log = logging.getLogger("connect_lite.test.redaction")
        log.warning("connecting with %s", SECRET)
        log.info("%d", "not a number")  # a bad call is the handler's to report, not a raise
        try:
            raise RuntimeError(f"auth failed for {SECRET}")
        except RuntimeError:
            log.exception("task failed")
    finally:
        remove()
        root.removeHandler(handler)
    text = stream.getvalue()
    assert SECRET not in text
    assert "connecting with ${env:APP_X}" in text
    assert "RuntimeError: auth failed for ${env:APP_X}" in text


UNKNOWN_PROVIDER_WARNING = (
    "refers to config provider 'vault', which config.providers does not name; its text is "
    "used as written"
)


def test_a_reference_to_an_unlisted_provider_is_said_once_per_start_in_its_context(
    with_providers: HerderParts, caplog: pytest.LogCaptureFixture
) -> None:
    """Validation, the connector's start, and each task's resolutions all resolve the config:
    the warning came four times, once as ``[c|task-0] [c|task-0]``. Now the start says it, in
    the connector's context, once."""
    herder = with_providers.herder
    config = {"connector.class": "ScriptedSource", "topic": "t", "token": "${vault:db:pw}"}
    caplog.handler.addFilter(ContextFilter())
    with caplog.at_level(logging.WARNING):
        herder.validate_config("ScriptedSource", config)
        herder.create_connector("c", config)
        running = herder.worker._connectors["c"]
        assert running.fresh_config(herder.worker.resolver).raw["token"] == "${vault:db:pw}"
    warned = [r for r in caplog.records if "config.providers does not name" in r.getMessage()]
    assert [(str(r.connector_context), r.getMessage()) for r in warned] == [
        ("[c|worker] ", f"Config token {UNKNOWN_PROVIDER_WARNING}")
    ]


def test_the_worker_config_says_its_own_unlisted_provider(
    caplog: pytest.LogCaptureFixture,
) -> None:
    props = {**PROVIDERS, "bootstrap.servers": "h:1", "ssl.key.password": "${vault:pw}"}
    with caplog.at_level(logging.WARNING):
        resolve_worker_props(props, load_config_providers(props, Plugins([])))
    assert [r.getMessage() for r in caplog.records] == [
        f"Worker config ssl.key.password {UNKNOWN_PROVIDER_WARNING}"
    ]


def test_worker_properties_may_use_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APP_BOOTSTRAP", "127.0.0.1:9999")
    props = {**PROVIDERS, "bootstrap.servers": "${env:APP_BOOTSTRAP}", "other": "${env:HOME}"}
    resolver = load_config_providers(props, Plugins([]))
    with pytest.raises(ConfigError, match="in config other with config provider env"):
        resolve_worker_props(props, resolver)
    del props["other"]
    resolved = resolve_worker_props(props, resolver)
    assert resolved["bootstrap.servers"] == "127.0.0.1:9999"
    assert resolved["config.providers.env.class"] == "EnvVarConfigProvider"


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"config.providers": "x"}, "config.providers names 'x', but config.providers.x.class"),
        (
            {"config.providers": "x", "config.providers.x.class": "NoSuchProvider"},
            "Invalid value NoSuchProvider for configuration config.providers.x.class",
        ),
        (
            {
                "config.providers": "f",
                "config.providers.f.class": "FileConfigProvider",
                "config.providers.f.param.allowed.paths": "relative",
            },
            "Config provider 'f' (FileConfigProvider) refused its settings: Path relative",
        ),
    ],
)
def test_bad_provider_settings_are_config_errors(props: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_config_providers(props, Plugins([]))


def test_providers_answer_to_kafka_names_and_aliases_and_stay_out_of_listings() -> None:
    plugins = Plugins([BUNDLED, TEST_PLUGINS])
    for name in ("FileConfigProvider", "File", "DirectoryConfigProvider", "EnvVar"):
        assert plugins.find(name, [PluginType.CONFIG_PROVIDER]).type is PluginType.CONFIG_PROVIDER
    third_party = plugins.find("Counting", [PluginType.CONFIG_PROVIDER])
    assert third_party.location is not None and third_party.version == "1.0.0"
    assert all(d.type is not PluginType.CONFIG_PROVIDER for d in plugins.all())
    with pytest.raises(ConnectError):
        from connect_lite.config.validation import plugin_config_keys

        plugin_config_keys(plugins, "FileConfigProvider")


def test_a_resolver_without_providers_changes_nothing() -> None:
    config = {"a": "${file:/x:y}", "b": "plain"}
    assert ConfigResolver().resolve(config).values == config


def test_password_keys_of_a_tasks_transforms_are_hidden_in_logs(parts: HerderParts) -> None:
    worker = parts.herder.worker
    desc = worker.plugins.find("Uppercase", [PluginType.TRANSFORMATION])
    config = {
        "transforms": "up",
        "transforms.up.type": "Uppercase",
        "transforms.up.api.key": "k-123456",
    }
    worker._hide_component_passwords([("transform", "up", desc)], config)
    assert worker.resolver.redactor.conceal("key k-123456 refused") == "key [hidden] refused"


def test_a_task_that_starts_gets_the_connector_config_resolved_anew() -> None:
    made = herder_parts(
        {
            "config.providers": "counting",
            "config.providers.counting.class": "CountingConfigProvider",
        }
    )
    try:
        worker = made.herder.worker
        config = {
            "connector.class": "ScriptedSource",
            "topic": "t",
            "value.prefix": "${counting:gen}",
        }
        made.herder.create_connector("c", config)
        runner = worker._connectors["c"]
        started_with = runner.config.plugin_config["value.prefix"]
        fresh = runner.fresh_config(worker.resolver)
        assert fresh.plugin_config["value.prefix"] not in (started_with, "${counting:gen}")
        assert fresh.plugin_config["value.prefix"].startswith("gen-")
    finally:
        made.stop()


@pytest.mark.parametrize(
    ("key", "resolved"),
    [
        ("consumer.override.auto.offset.reset", "x9"),  # Kafka's text quotes it in `...`
        ("consumer.override.compression.codec", "x9"),  # librdkafka's quotes it in "..."
        ("consumer.override.max.poll.records", "x9"),
    ],
)
def test_validate_never_quotes_a_short_resolved_override_value(
    with_providers: HerderParts, monkeypatch: pytest.MonkeyPatch, key: str, resolved: str
) -> None:
    monkeypatch.setenv("APP_VALUE", resolved)
    config = {"connector.class": "RecordingSink", "topics": "t", "output.file": "o"}
    infos = with_providers.herder.validate_config(
        "RecordingSink", {**config, key: "${env:APP_VALUE}"}
    )
    [value] = [c["value"] for c in infos.configs if c["value"] and c["value"]["name"] == key]
    [message] = value["errors"]
    assert message.startswith("Invalid value ${env:APP_VALUE} for configuration ")
    assert resolved not in repr(infos)
