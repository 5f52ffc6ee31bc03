"""The built-in config providers and the resolution of ${provider:path:key} references."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from connect_lite.api import ConfigData, ConfigError, ConfigProvider
from connect_lite.config import user_regex
from connect_lite.config.providers import (
    DirectoryConfigProvider,
    EnvVarConfigProvider,
    FileConfigProvider,
)
from connect_lite.config.resolution import (
    Concealer,
    ConfigResolver,
    Redactor,
    log_unknown_providers,
    references,
)

SECRET = "s3cret-Passw0rd"


@pytest.fixture
def secrets(tmp_path: Path) -> Path:
    root = tmp_path / "secrets"
    root.mkdir()
    (root / "db.properties").write_text(f"password={SECRET}\nuser = alice\n")
    (root / "k8s").mkdir()
    (root / "k8s" / "token").write_text("tok-123\n")
    (root / "k8s" / "sub").mkdir()
    return root


def provider(cls: type[ConfigProvider], **params: str) -> ConfigProvider:
    instance = cls()
    instance.configure(params)
    return instance


def test_references_parse_kafka_forms() -> None:
    refs = references("a ${file:/x/y.properties:k} b ${env:HOME} ${vault:secret/db:pw}")
    assert [(r.provider, r.path, r.key) for r in refs] == [
        ("file", "/x/y.properties", "k"),
        ("env", "", "HOME"),
        ("vault", "secret/db", "pw"),
    ]


def test_file_provider_reads_keys_of_a_properties_file(secrets: Path) -> None:
    file = provider(FileConfigProvider)
    path = str(secrets / "db.properties")
    assert file.get(path, {"password"}).data == {"password": SECRET}
    assert file.get(path).data == {"password": SECRET, "user": "alice"}


def test_file_provider_errors_name_the_key_and_path_never_a_value(secrets: Path) -> None:
    file = provider(FileConfigProvider)
    path = str(secrets / "db.properties")
    with pytest.raises(ConfigError) as missing:
        file.get(path, {"nope"})
    assert "nope" in str(missing.value) and path in str(missing.value)
    assert SECRET not in str(missing.value)
    with pytest.raises(ConfigError, match="Could not read properties from file"):
        file.get(str(secrets / "absent.properties"), {"k"})


def test_allowed_paths_refuse_other_paths_links_and_look_alike_prefixes(
    secrets: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "secrets-other"
    outside.mkdir()
    (outside / "x.properties").write_text("password=elsewhere\n")
    (secrets / "link.properties").symlink_to(outside / "x.properties")
    file = provider(FileConfigProvider, **{"allowed.paths": str(secrets)})
    assert file.get(str(secrets / "db.properties"), {"password"}).data["password"] == SECRET
    for path in (outside / "x.properties", secrets / "link.properties"):
        with pytest.raises(ConfigError, match=r"is not allowed by allowed\.paths"):
            file.get(str(path), {"password"})
    with pytest.raises(ConfigError, match="not absolute"):
        provider(FileConfigProvider, **{"allowed.paths": "relative/dir"})


def test_directory_provider_reads_one_file_per_key(secrets: Path) -> None:
    directory = provider(DirectoryConfigProvider, **{"allowed.paths": str(secrets)})
    path = str(secrets / "k8s")
    assert directory.get(path, {"token"}).data == {"token": "tok-123\n"}  # as Kafka: not trimmed
    assert directory.get(path).data == {"token": "tok-123\n"}  # sub-directories do not count
    for bad in ("absent", "sub", "../db.properties"):
        with pytest.raises(ConfigError, match="No file"):
            directory.get(path, {bad})
    with pytest.raises(ConfigError, match="not allowed"):
        directory.get("/etc", {"hostname"})


def test_a_link_in_a_directory_is_read_only_if_it_stays_inside_allowed_paths(
    secrets: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("not-for-you")
    k8s = secrets / "k8s"
    (k8s / "escape").symlink_to(outside)
    (k8s / "inside").symlink_to(secrets / "db.properties")  # as Kubernetes' ..data links
    directory = provider(DirectoryConfigProvider, **{"allowed.paths": str(secrets)})
    assert directory.get(str(k8s), {"inside"}).data["inside"].startswith("password=")
    with pytest.raises(ConfigError, match=r"File escape in directory .* links outside"):
        directory.get(str(k8s), {"escape"})
    with pytest.raises(ConfigError, match="links outside"):
        directory.get(str(k8s))
    unguarded = provider(DirectoryConfigProvider)
    assert unguarded.get(str(k8s), {"escape"}).data == {"escape": "not-for-you"}


def test_relative_paths_are_read_only_without_allowed_paths(
    secrets: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(secrets)
    assert provider(FileConfigProvider).get("db.properties", {"user"}).data == {"user": "alice"}
    guarded = provider(FileConfigProvider, **{"allowed.paths": str(secrets)})
    with pytest.raises(ConfigError, match="not allowed"):
        guarded.get("db.properties", {"user"})


def test_env_provider_honours_its_allowlist(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APP_DB_PASSWORD", SECRET)
    monkeypatch.setenv("OTHER_SECRET", "nope-nope")
    env = provider(EnvVarConfigProvider, **{"allowlist.pattern": "APP_.*"})
    assert env.get("", {"APP_DB_PASSWORD"}).data == {"APP_DB_PASSWORD": SECRET}
    assert set(env.get("").data) == {"APP_DB_PASSWORD"}
    with pytest.raises(ConfigError, match=r"OTHER_SECRET is not allowed by allowlist\.pattern"):
        env.get("", {"OTHER_SECRET"})
    with pytest.raises(ConfigError, match="No key APP_ABSENT"):
        env.get("", {"APP_ABSENT"})
    with pytest.raises(ConfigError, match="Path is not supported"):
        env.get("/some/path", {"APP_DB_PASSWORD"})


def test_env_provider_allowlist_cannot_hold_the_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pattern is the operator's, the names asked for a user's: a badly backtracking
    pattern is matched by RE2, one that needs re has a time limit."""
    monkeypatch.setenv("APP_TOKEN", "t")
    env = provider(EnvVarConfigProvider, **{"allowlist.pattern": "(A+)+PP_.*"})
    began = time.monotonic()
    with pytest.raises(ConfigError, match="is not allowed by allowlist"):
        env.get("", {"A" * 40})  # hours with re
    assert time.monotonic() - began < 5
    lookahead = provider(EnvVarConfigProvider, **{"allowlist.pattern": "(?!OTHER_).*"})
    assert lookahead.get("", {"APP_TOKEN"}).data == {"APP_TOKEN": "t"}
    monkeypatch.setattr(user_regex, "TIMEOUT_MS", 100)
    slow = provider(EnvVarConfigProvider, **{"allowlist.pattern": "(A+)+(?!x)B|APP_.*"})
    with pytest.raises(ConfigError, match=r"^allowlist\.pattern: The regex .* took longer"):
        slow.get("", {"A" * 40})


def resolver_for(secrets: Path, **extra: ConfigProvider) -> ConfigResolver:
    return ConfigResolver(
        {
            "file": provider(FileConfigProvider, **{"allowed.paths": str(secrets)}),
            "dir": provider(DirectoryConfigProvider, **{"allowed.paths": str(secrets)}),
            "env": provider(EnvVarConfigProvider, **{"allowlist.pattern": "APP_.*"}),
            **extra,
        }
    )


def test_resolve_replaces_references_and_leaves_unknown_providers(
    secrets: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("APP_TOKEN", "env-token-9")
    resolver = resolver_for(secrets)
    file_ref = f"${{file:{secrets}/db.properties:password}}"
    config = {
        "password": file_ref,
        "url": f"jdbc:x://h/db?user=${{file:{secrets}/db.properties:user}}&pw={file_ref}",
        "token": f"${{dir:{secrets}/k8s:token}}",
        "env": "${env:APP_TOKEN}",
        "template": "${vault:secret/db:pw}",
        "plain": "no references",
    }
    with caplog.at_level(logging.WARNING):
        resolved = resolver.resolve(config)
    assert resolved.values == {
        "password": SECRET,
        "url": f"jdbc:x://h/db?user=alice&pw={SECRET}",
        "token": "tok-123\n",
        "env": "env-token-9",
        "template": "${vault:secret/db:pw}",
        "plain": "no references",
    }
    assert resolved.ttl_ms is None
    # Said by whoever resolves for a start (log_unknown_providers), not by every resolution.
    assert resolved.unknown == {"template": ["vault"]}
    assert caplog.text == ""
    # The concealer puts each reference back, in one pass, wherever its value was copied.
    assert resolved.conceal({"copy": f"pw={SECRET};t=env-token-9"}) == {
        "copy": f"pw={file_ref};t=${{env:APP_TOKEN}}"
    }
    assert resolved.conceal(resolved.values) == config


def test_a_key_full_of_unknown_providers_logs_one_line(
    secrets: Path, caplog: pytest.LogCaptureFixture
) -> None:
    value = "".join(f"${{v{i}:k}}${{v{i}:k}}" for i in range(2000))  # 36 KB, 2000 names
    resolved = resolver_for(secrets).resolve({"many": value})
    with caplog.at_level(logging.WARNING):
        log_unknown_providers(resolved)
    assert resolved.values == {"many": value}
    [record] = caplog.records
    assert record.getMessage() == (
        "Config many refers to config providers 'v0', 'v1', 'v2' and 1997 more, which "
        "config.providers does not name; its text is used as written"
    )


def test_an_unresolvable_reference_names_key_and_provider_never_a_value(
    secrets: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTHER_SECRET", "do-not-show")
    resolver = resolver_for(secrets)
    good = f"${{file:{secrets}/db.properties:password}}"
    config = {
        "ok": good,
        "bad": "${env:OTHER_SECRET}",
        "gone": f"${{file:{secrets}/db.properties:nope}}",
    }
    with pytest.raises(ConfigError) as raised:
        resolver.resolve(config)
    text = str(raised.value)
    assert "Could not resolve ${env:OTHER_SECRET} in config bad with config provider env" in text
    assert f"in config gone with config provider file: No key nope in file {secrets}" in text
    assert set(raised.value.errors) == {"bad", "gone"}
    assert "do-not-show" not in text and SECRET not in text
    lenient = resolver.resolve_leniently(config)
    assert lenient.values == {"ok": SECRET, "bad": config["bad"], "gone": config["gone"]}
    assert set(lenient.errors) == {"bad", "gone"}


class _Expiring(ConfigProvider):
    def __init__(self) -> None:
        self.calls = 0

    def get(self, path: str, keys: set[str] | None = None) -> ConfigData:
        self.calls += 1
        return ConfigData(
            {k: f"{path}-{k}-value" for k in keys or ()}, ttl_ms=1500 if path else None
        )


def test_one_get_per_path_and_the_shortest_ttl(secrets: Path) -> None:
    expiring = _Expiring()
    resolver = ConfigResolver({"x": expiring})
    resolved = resolver.resolve({"a": "${x:p:a}", "b": "${x:p:b}", "c": "${x:c}"})
    assert resolved.values == {"a": "p-a-value", "b": "p-b-value", "c": "-c-value"}
    assert expiring.calls == 2
    assert resolved.ttl_ms == 1500


def test_a_provider_that_crashes_is_a_config_error(secrets: Path) -> None:
    class Broken(ConfigProvider):
        def get(self, path: str, keys: set[str] | None = None) -> ConfigData:
            raise OSError("backend down")

    with pytest.raises(ConfigError) as raised:
        ConfigResolver({"b": Broken()}).resolve({"k": "${b:k}"})
    # Only the type: a third-party message is not bound to leave values out.
    assert str(raised.value).endswith("with config provider b: the provider failed with OSError")
    assert "backend down" not in str(raised.value)


def test_the_redactor_hides_resolved_values_and_passwords_but_not_short_words(
    secrets: Path,
) -> None:
    resolver = resolver_for(secrets)
    resolver.resolve({"password": f"${{file:{secrets}/db.properties:password}}"})
    resolver.redactor.add_passwords(["hunter2-pw", "abc", None])
    line = f"connect with {SECRET} or hunter2-pw, abc"
    assert resolver.redactor.conceal(line) == (
        f"connect with ${{file:{secrets}/db.properties:password}} or [hidden], abc"
    )


def test_the_concealer_never_rewrites_a_stand_in() -> None:
    concealer = Concealer({"env": "${x:short}", "long-env-value": "${env:LONG}"})
    assert concealer.conceal("long-env-value env") == "${env:LONG} ${x:short}"
    assert not Redactor()
