"""The Java check before Spark starts: missing or too old stops the start with setup.sh's advice."""

from __future__ import annotations

import re
import stat
from pathlib import Path

import pytest

from connect_lite.pipeline.java import (
    INSTALL_ADVICE,
    Java,
    JavaError,
    check_java,
    find_java,
    major_version,
)

REPO = Path(__file__).resolve().parents[3]


def fake_java(bin_dir: Path, version_line: str) -> Path:
    """A ``java`` that prints ``version_line`` to stderr, as ``java -version`` does."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    java = bin_dir / "java"
    java.write_text(f"#!/bin/sh\necho '{version_line}' >&2\n")
    java.chmod(java.stat().st_mode | stat.S_IXUSR)
    return java


def test_no_java_on_path_gives_the_advice_that_setup_sh_gives(tmp_path: Path) -> None:
    with pytest.raises(JavaError) as missing:
        check_java({"PATH": str(tmp_path)})
    setup_sh = (REPO / "scripts" / "setup.sh").read_text()
    advice = re.search(r"<<'MSG'\n(.*?)\nMSG\n", setup_sh, re.S)
    assert advice is not None
    assert str(missing.value) == advice.group(1)
    assert str(missing.value).endswith(INSTALL_ADVICE)


def test_java_home_wins_over_path_and_must_hold_bin_java(tmp_path: Path) -> None:
    on_path = fake_java(tmp_path / "path", 'openjdk version "21.0.2" 2024-01-16')
    home = tmp_path / "jdk"
    in_home = fake_java(home / "bin", 'openjdk version "17.0.15" 2025-04-15')
    env = {"PATH": str(on_path.parent), "JAVA_HOME": str(home)}
    assert check_java(env) == Java(str(in_home), 17)
    assert find_java({"PATH": str(on_path.parent)}) == str(on_path)
    with pytest.raises(JavaError, match=r"JAVA_HOME is .*/empty, which has no bin/java\.\n"):
        check_java({"PATH": str(on_path.parent), "JAVA_HOME": str(tmp_path / "empty")})


def test_java_older_than_17_stops_the_start(tmp_path: Path) -> None:
    java = fake_java(tmp_path / "bin", 'openjdk version "11.0.22" 2024-01-16')
    with pytest.raises(JavaError) as old:
        check_java({"PATH": str(java.parent)})
    assert str(old.value) == (
        "connect-lite needs Java 17 or newer (PySpark 4 runs on the JVM), and "
        f"{java} is Java 11.\n{INSTALL_ADVICE}"
    )


def test_an_unreadable_version_is_let_through_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    java = fake_java(tmp_path / "bin", "something else entirely")
    assert check_java({"PATH": str(java.parent)}) == Java(str(java), None)
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert f"Could not read the version of {java}" in caplog.records[0].getMessage()


@pytest.mark.parametrize(
    "output, major",
    [
        ('openjdk version "17.0.15" 2025-04-15', 17),
        ('openjdk version "21" 2023-09-19', 21),
        ('java version "1.8.0_392"', 8),
        ('openjdk version "25-ea" 2025-09-16', 25),
        ("no version here", None),
    ],
)
def test_major_version(output: str, major: int | None) -> None:
    assert major_version(output) == major
