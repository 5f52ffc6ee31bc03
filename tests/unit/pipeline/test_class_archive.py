"""The class-data-sharing archive: where it lives, when it counts as stale or damaged (it is
then never handed to the JVM, which would crash on a truncated one), and the user's say."""

from __future__ import annotations

import importlib.util
import logging
import os
import shlex
import sys
import tempfile
from pathlib import Path

import pytest

from connect_lite.pipeline import class_archive, class_archive_build
from connect_lite.pipeline.class_archive import (
    MAGIC,
    QUIET,
    archive_key,
    archive_options,
    build_command,
    cache_dir,
    usable_archive,
)
from connect_lite.pipeline.java import JavaError


def write_archive(path: Path, body: bytes, recorded: int | None = None) -> Path:
    path.write_bytes(body)
    if recorded is not None:
        path.with_name(path.name + ".ok").write_text(f"{recorded}\n")
    return path


def test_the_cache_directory_is_the_users_cache_unless_told_otherwise() -> None:
    assert cache_dir({"HOME": "/home/u"}) == Path("/home/u/.cache/connect-lite")
    assert cache_dir({"HOME": "/home/u", "XDG_CACHE_HOME": "/c"}) == Path("/c/connect-lite")
    env = {"HOME": "/home/u", "XDG_CACHE_HOME": "/c", "CONNECT_LITE_CACHE_DIR": "/mine"}
    assert cache_dir(env) == Path("/mine")


def test_the_key_changes_with_the_jars_the_java_the_version_and_the_class_path(
    tmp_path: Path,
) -> None:
    java = tmp_path / "java"
    java.write_text("#!/bin/sh\n")
    jars = tmp_path / "jars"
    jars.mkdir()
    (jars / "spark-core.jar").write_bytes(b"1")
    key = archive_key(str(java), jars, "4.0.0", "")
    assert archive_key(str(java), jars, "4.0.0", "") == key
    assert archive_key(str(java), jars, "4.0.1", "") != key
    assert archive_key(str(java), jars, "4.0.0", "/extra.jar") != key
    (jars / "spark-core.jar").write_bytes(b"12")  # a jar replaced by another
    assert archive_key(str(java), jars, "4.0.0", "") != key
    (jars / "spark-core.jar").write_bytes(b"1")
    os.utime(jars / "spark-core.jar", ns=(0, 0))
    changed_time = archive_key(str(java), jars, "4.0.0", "")
    (jars / "other.jar").write_bytes(b"")
    assert len({key, changed_time, archive_key(str(java), jars, "4.0.0", "")}) == 3


def test_only_a_whole_archive_with_its_record_is_usable(tmp_path: Path) -> None:
    body = MAGIC + b"\0" * 100
    assert usable_archive(write_archive(tmp_path / "good.jsa", body, len(body)))
    assert not usable_archive(tmp_path / "missing.jsa")
    assert not usable_archive(write_archive(tmp_path / "unrecorded.jsa", body))  # a build died
    truncated = write_archive(tmp_path / "truncated.jsa", body[:50], len(body))
    assert not usable_archive(truncated)
    garbage = b"garbage" + b"\0" * 97
    assert not usable_archive(write_archive(tmp_path / "garbage.jsa", garbage, len(garbage)))
    bad_record = write_archive(tmp_path / "bad-record.jsa", body)
    bad_record.with_name("bad-record.jsa.ok").write_text("many\n")
    assert not usable_archive(bad_record)


def test_a_usable_archive_is_mapped_quietly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = MAGIC + b"\0" * 10
    path = write_archive(tmp_path / "spark.jsa", body, len(body))
    monkeypatch.setattr(class_archive, "archive_path", lambda conf, env=None: path)
    assert archive_options({}) == [f"-XX:SharedArchiveFile={path}", *QUIET]


def test_a_damaged_or_missing_archive_is_not_mapped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_archive(tmp_path / "spark.jsa", MAGIC, 1000)
    monkeypatch.setattr(class_archive, "archive_path", lambda conf, env=None: path)
    assert archive_options({}) == []
    path.unlink()
    assert archive_options({}) == []


def test_a_missing_archive_is_said_with_a_command_that_exists_where_the_worker_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The line told installed users to run scripts/setup.sh, which only a checkout has. It
    names the worker's own Python now, whose module builds the archive anywhere."""
    path = tmp_path / "spark.jsa"
    monkeypatch.setattr(class_archive, "archive_path", lambda conf, env=None: path)
    monkeypatch.setattr(class_archive.sys, "executable", "/opt/my venv/bin/python")
    with caplog.at_level(logging.INFO, logger=class_archive.__name__):
        assert archive_options({}) == []
    [line] = caplog.messages
    assert "setup.sh" not in line
    assert line.endswith(
        "To build it once (about 20 s): '/opt/my venv/bin/python' -m "
        "connect_lite.pipeline.class_archive_build"
    )


def test_the_build_command_runs_this_installations_builder() -> None:
    python, dash_m, module = shlex.split(build_command())
    assert (python, dash_m) == (sys.executable, "-m")
    assert importlib.util.find_spec(module) is not None
    assert class_archive_build.__name__ == module


def test_no_java_means_no_archive_and_spark_itself_tells(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_java(conf: object, env: object = None) -> Path:
        raise JavaError("no java")

    monkeypatch.setattr(class_archive, "archive_path", no_java)
    assert archive_options({}) == []


@pytest.mark.parametrize(
    "user",
    ["-XX:SharedArchiveFile=/mine.jsa", "-Xss4m -XX:ArchiveClassesAtExit=/out.jsa", "-Xshare:off"],
)
def test_a_user_who_manages_sharing_gets_no_archive_of_ours(
    user: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = MAGIC + b"\0"
    path = write_archive(tmp_path / "spark.jsa", body, len(body))
    monkeypatch.setattr(class_archive, "archive_path", lambda conf, env=None: path)
    assert archive_options({"spark.driver.extraJavaOptions": user}) == []


def test_xshare_auto_is_the_default_and_keeps_the_archive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = MAGIC + b"\0"
    path = write_archive(tmp_path / "spark.jsa", body, len(body))
    monkeypatch.setattr(class_archive, "archive_path", lambda conf, env=None: path)
    user = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto"  # EmbeddedConnect's
    assert archive_options({"spark.driver.extraJavaOptions": user})[0].startswith(
        "-XX:SharedArchiveFile="
    )


def test_without_a_home_the_cache_is_in_the_temporary_directory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(class_archive.os.path, "expanduser", lambda path: path)  # no passwd entry
    found = class_archive.cache_dir({})
    assert found.is_absolute() and found.parent == Path(tempfile.gettempdir())


def test_an_archive_path_with_spaces_is_quoted_for_sparks_launcher(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = MAGIC + b"\0" * 10
    (tmp_path / "John Doe").mkdir()
    path = write_archive(tmp_path / "John Doe" / "spark.jsa", body, len(body))
    monkeypatch.setattr(class_archive, "archive_path", lambda conf, env=None: path)
    assert archive_options({}) == [f'"-XX:SharedArchiveFile={path}"', *QUIET]


def test_a_failed_build_is_not_tried_again_until_forced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "spark.jsa"
    builds: list[bool] = []

    def failing_build(conf: object = None, force: bool = False) -> Path:
        builds.append(force)
        raise class_archive.ClassArchiveError("Spark's JVM exited with 1 and wrote 0 bytes")

    monkeypatch.setattr(class_archive_build, "archive_path", lambda conf, env=None: path)
    monkeypatch.setattr(class_archive_build, "build", failing_build)
    monkeypatch.setattr(class_archive_build.sys, "argv", ["class_archive_build"])
    class_archive_build.main()
    class_archive_build.main()  # the failure is remembered: no second Spark start
    assert builds == [False]
    assert "failed before" in capsys.readouterr().err
    monkeypatch.setattr(class_archive_build.sys, "argv", ["class_archive_build", "--force"])
    class_archive_build.main()
    assert builds == [False, True]


def test_no_java_is_a_warning_not_a_failed_set_up(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def no_java(conf: object, env: object = None) -> Path:
        raise class_archive.ConnectError("`java` is not on PATH")

    monkeypatch.setattr(class_archive_build, "archive_path", no_java)
    monkeypatch.setattr(class_archive_build.sys, "argv", ["class_archive_build"])
    class_archive_build.main()  # returns: scripts/setup.sh (set -e) goes on
    assert "no class-data-sharing archive" in capsys.readouterr().err
