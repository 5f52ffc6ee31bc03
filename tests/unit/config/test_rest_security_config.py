"""The REST security keys of a worker config: start-up errors name the key, never a password."""

from __future__ import annotations

from pathlib import Path

import pytest

from connect_lite.api.errors import ConfigError
from connect_lite.config.rest_security import BASIC_AUTH_EXTENSION
from connect_lite.config.worker import WorkerConfig

BASE = {"bootstrap.servers": "b:1"}


def test_defaults_are_closed_but_not_locked() -> None:
    security = WorkerConfig(BASE).rest_security()
    assert security.tls is None and security.credentials is None
    assert security.cors_origins == () and security.allowed_hosts == frozenset()
    assert security.max_request_bytes == 8 * 1024 * 1024


def test_credentials_file_is_read_as_java_properties(tmp_path: Path) -> None:
    users = tmp_path / "users.properties"
    users.write_text("# comment\nalice=s3cret\nbob: hunter2\n")
    config = WorkerConfig({**BASE, "rest.basic.auth.credentials.file": str(users)})
    assert dict(config.rest_security().credentials or {}) == {"alice": "s3cret", "bob": "hunter2"}
    with_extension = WorkerConfig(
        {
            **BASE,
            "rest.extension.classes": BASIC_AUTH_EXTENSION,
            "rest.basic.auth.credentials.file": str(users),
        }
    )
    assert with_extension.rest_security().credentials is not None


@pytest.mark.parametrize(
    ("props", "message"),
    [
        (
            {"rest.extension.classes": BASIC_AUTH_EXTENSION},
            "rest.extension.classes lists .* which needs rest.basic.auth.credentials.file",
        ),
        (
            {"rest.extension.classes": "com.example.MyRestExtension"},
            "rest.extension.classes: com.example.MyRestExtension is not available",
        ),
        (
            {"rest.basic.auth.credentials.file": "/nonexistent/users.properties"},
            "^rest.basic.auth.credentials.file: cannot read /nonexistent/users.properties",
        ),
        (
            {"listeners": "https://127.0.0.1:8443"},
            "^ssl.keystore.location is required for an https listener",
        ),
        (
            {"listeners": "https://127.0.0.1:8443", "listeners.https.ssl.client.auth": "maybe"},
            r"^Invalid value maybe for configuration listeners\.https\.ssl\.client\.auth",
        ),
    ],
)
def test_bad_security_settings_fail_the_start_naming_the_key(
    props: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        WorkerConfig({**BASE, **props}).rest_security()


def test_an_empty_credentials_file_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty.properties"
    empty.write_text("# nobody\n")
    config = WorkerConfig({**BASE, "rest.basic.auth.credentials.file": str(empty)})
    with pytest.raises(ConfigError, match="holds no user=password line"):
        config.rest_security()


def test_jks_keystores_are_refused_by_the_worker_config() -> None:
    with pytest.raises(ConfigError, match=r"value JKS for configuration ssl\.keystore\.type"):
        WorkerConfig({**BASE, "ssl.keystore.type": "JKS"})


def test_a_user_with_an_empty_password_is_refused(tmp_path: Path) -> None:
    users = tmp_path / "users.properties"
    users.write_text("alice=s3cret\nbob=\n")
    config = WorkerConfig({**BASE, "rest.basic.auth.credentials.file": str(users)})
    with pytest.raises(ConfigError, match="user bob has an empty password"):
        config.rest_security()


def test_passwords_stay_out_of_reprs(tmp_path: Path) -> None:
    users = tmp_path / "users.properties"
    users.write_text("alice=s3cret\n")
    config = WorkerConfig(
        {
            **BASE,
            "listeners": "https://127.0.0.1:8443",
            "ssl.keystore.location": "/k.p12",
            "ssl.keystore.password": "store-pass",
            "rest.basic.auth.credentials.file": str(users),
        }
    )
    text = repr(config.rest_security())
    assert "s3cret" not in text and "store-pass" not in text
