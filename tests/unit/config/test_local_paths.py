"""connector.allowed.paths: which local files a connector may read or write."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from connect_lite.api import ConfigDef, LocalPath, Type
from connect_lite.api.errors import BadRequestError
from connect_lite.config.local_paths import LocalPaths
from connect_lite.config.validation import names_plugins, refuse_unsafe_keys
from connect_lite.config.worker import WorkerConfig


@pytest.fixture
def bound(tmp_path: Path) -> LocalPaths:
    (tmp_path / "allowed").mkdir()
    (tmp_path / "plugins").mkdir()
    return LocalPaths.of(
        [str(tmp_path / "allowed")],
        str(tmp_path / "allowed" / "state.db"),
        [str(tmp_path / "plugins")],
    )


def test_a_path_inside_an_allowed_directory_is_fine(tmp_path: Path, bound: LocalPaths) -> None:
    assert bound.problem(str(tmp_path / "allowed" / "in.txt")) is None
    assert bound.problem(str(tmp_path / "allowed" / "new" / "deeper" / "out.txt")) is None


def test_a_path_outside_is_refused_and_the_message_names_the_key(
    tmp_path: Path, bound: LocalPaths
) -> None:
    problem = bound.problem("/etc/passwd")
    assert problem is not None
    assert "outside" in problem and "connector.allowed.paths" in problem
    # A sibling directory whose name starts like the allowed one is outside too.
    assert bound.problem(str(tmp_path / "allowed-not" / "x.txt")) is not None


def test_dot_dot_and_links_are_resolved_before_the_check(tmp_path: Path, bound: LocalPaths) -> None:
    assert bound.problem(str(tmp_path / "allowed" / ".." / "escape.txt")) is not None
    link = tmp_path / "allowed" / "link"
    link.symlink_to("/etc")
    assert bound.problem(str(link / "passwd")) is not None
    file_link = tmp_path / "allowed" / "cron"
    file_link.symlink_to(tmp_path / "outside.txt")
    assert bound.problem(str(file_link)) is not None


def test_the_state_file_and_its_companions_are_never_allowed(
    tmp_path: Path, bound: LocalPaths
) -> None:
    for suffix in ("", "-wal", "-shm", "-journal", ".lock"):
        problem = bound.problem(str(tmp_path / "allowed" / f"state.db{suffix}"))
        assert problem is not None and "state file" in problem


def test_plugins_and_the_python_installation_are_never_allowed(tmp_path: Path) -> None:
    bound = LocalPaths.of(["/"], str(tmp_path / "state.db"), [str(tmp_path / "plugins")])
    assert bound.problem(str(tmp_path / "plugins" / "evil.py")) is not None
    site = next(p for p in sys.path if "site-packages" in p and os.path.isdir(p))
    assert bound.problem(os.path.join(site, "evil.pth")) is not None
    assert bound.problem(os.path.join(sys.prefix, "bin", "python3")) is not None
    import connect_lite

    assert bound.problem(connect_lite.__file__) is not None
    # A directory that holds one of them is refused too: a lake sink would write inside it.
    assert bound.problem(str(tmp_path)) is not None
    assert bound.problem("/") is not None
    assert bound.problem(str(tmp_path / "data.txt")) is None


def test_the_default_is_the_state_files_directory(tmp_path: Path) -> None:
    config = WorkerConfig(
        {"bootstrap.servers": "localhost:9092", "state.storage.file": str(tmp_path / "s.db")}
    )
    assert config.local_paths.allowed == (str(tmp_path.resolve()),)
    widened = WorkerConfig(
        {
            "bootstrap.servers": "localhost:9092",
            "state.storage.file": str(tmp_path / "s.db"),
            "connector.allowed.paths": f"{tmp_path / 'a'}, {tmp_path / 'b'}",
        }
    )
    assert widened.local_paths.allowed == (
        str(tmp_path.resolve() / "a"),
        str(tmp_path.resolve() / "b"),
    )


def test_url_keys_bound_file_urls_and_plain_paths_only() -> None:
    assert LocalPath.URL.paths("file:///data/lake") == ["/data/lake"]
    assert LocalPath.URL.paths("file://localhost/data/lake") == ["/data/lake"]
    assert LocalPath.URL.paths("data/lake") == ["data/lake"]
    assert LocalPath.URL.paths("s3a://bucket/lake") == []
    assert LocalPath.URL.paths("") == []
    assert LocalPath.PATH.paths(["a", " ", "b"]) == ["a", "b"]


def test_check_reports_each_declared_key(tmp_path: Path, bound: LocalPaths) -> None:
    config_def = (
        ConfigDef()
        .define("file", Type.STRING, None, local_path=LocalPath.PATH)
        .define("store.url", Type.STRING, None, local_path=LocalPath.URL)
        .define("topic", Type.STRING, None)
    )
    inside = str(tmp_path / "allowed" / "x")
    assert bound.check(config_def, {"file": inside, "store.url": "file://" + inside}) == {}
    problems = bound.check(
        config_def, {"file": "/etc/shadow", "store.url": "file:///root", "topic": "/etc/x"}
    )
    assert set(problems) == {"file", "store.url"}
    assert problems["file"].startswith("Invalid value /etc/shadow for configuration file:")


def test_keys_that_name_plugins_take_no_references() -> None:
    for key in (
        "transforms",
        "predicates",
        "topic.creation.groups",
        "connector.class",
        "value.converter",
        "transforms.a.type",
        "predicates.p.type",
        "transforms.a.predicate",
        "connector.plugin.version",
        "transforms.a.plugin.version",
    ):
        assert names_plugins(key), key
        with pytest.raises(BadRequestError, match=key.replace(".", r"\.")):
            refuse_unsafe_keys({key: "${file:/secrets.properties:password}"})
    for key in ("topic", "transforms.a.field", "file", "topics"):
        assert not names_plugins(key), key
        refuse_unsafe_keys({key: "${file:/secrets.properties:password}"})


def test_control_characters_in_keys_and_the_worker_key_are_refused() -> None:
    with pytest.raises(BadRequestError, match="control characters") as caught:
        refuse_unsafe_keys({"a\n[2026-11-27 12:00:00,000] ERROR forged": "x"})
    assert "\n" not in str(caught.value)
    with pytest.raises(BadRequestError, match="worker setting"):
        refuse_unsafe_keys({"connector.allowed.paths": "/"})


def test_client_overrides_naming_key_or_trust_files_are_bounded(
    tmp_path: Path, bound: LocalPaths
) -> None:
    inside = str(tmp_path / "allowed" / "ca.pem")
    props = {
        "producer.override.ssl.ca.location": "/etc/shadow",
        "consumer.override.ssl.keystore.location": inside,
        "admin.override.SSL.KEY.LOCATION": "/root/.ssh/id_rsa",
        "producer.override.ssl.endpoint.identification.algorithm": "/etc/x",  # not a file key
        "ssl.ca.location": "/etc/shadow",  # not an override: not the connector's
    }
    problems = bound.check(ConfigDef(), props)
    assert set(problems) == {
        "producer.override.ssl.ca.location",
        "admin.override.SSL.KEY.LOCATION",
    }


def test_jdbc_keys_bound_sqlite_files_only() -> None:
    assert LocalPath.JDBC.paths("jdbc:sqlite:/data/app.db") == ["/data/app.db"]
    assert LocalPath.JDBC.paths("jdbc:sqlite:file:/data/app.db?mode=rwc") == ["/data/app.db"]
    assert LocalPath.JDBC.paths("JDBC:SQLITE:rel.db") == ["rel.db"]
    assert LocalPath.JDBC.paths("jdbc:sqlite::memory:") == []
    assert LocalPath.JDBC.paths("jdbc:postgresql://h:5432/db") == []


def test_jdbc_urls_that_only_look_in_memory_name_their_file() -> None:
    assert LocalPath.JDBC.paths("jdbc:sqlite::memory:/../../x.db") == [":memory:/../../x.db"]
    assert LocalPath.JDBC.paths("jdbc:sqlite::memory:?cache=shared") == []
    assert LocalPath.JDBC.paths(
        "jdbc:postgresql://h/db?sslrootcert=/etc/ca.pem&sslkey=/k.pem&user=u"
    ) == ["/etc/ca.pem", "/k.pem"]
