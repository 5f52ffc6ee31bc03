"""Finding the Java that Spark will run on, and checking it before Spark starts."""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass

from connect_lite.api.errors import ConnectError

log = logging.getLogger(__name__)

MIN_JAVA = 17
"""The oldest Java that PySpark 4 runs on."""

INSTALL_ADVICE = """\
Install it, then run this command again:
  Debian/Ubuntu:  sudo apt-get install -y openjdk-17-jre-headless
  Fedora/RHEL:    sudo dnf install -y java-17-openjdk-headless
  macOS:          brew install openjdk@17
Or set JAVA_HOME and put $JAVA_HOME/bin on PATH."""
"""The advice ``scripts/setup.sh`` gives when ``java`` is missing (a test keeps them equal)."""

VERSION_TIMEOUT_S = 30.0
_VERSION = re.compile(r'version "(\d+)(?:\.(\d+))?')


class JavaError(ConnectError):
    """No usable Java for Spark: missing, or older than MIN_JAVA."""


@dataclass(frozen=True)
class Java:
    """The ``java`` Spark would run and the major version it reports (None if unknown)."""

    path: str
    major: int | None


def find_java(env: Mapping[str, str]) -> str:
    """The ``java`` that Spark's launcher runs: ``$JAVA_HOME/bin/java`` when JAVA_HOME is set,
    else ``java`` on PATH. JavaError, with the install advice, when there is none."""
    java_home = env.get("JAVA_HOME")
    if java_home:
        path = os.path.join(java_home, "bin", "java")
        if os.access(path, os.X_OK):
            return path
        raise JavaError(
            f"connect-lite needs Java {MIN_JAVA} or newer (PySpark 4 runs on the JVM), and "
            f"JAVA_HOME is {java_home}, which has no bin/java.\n{INSTALL_ADVICE}"
        )
    found = shutil.which("java", path=env.get("PATH", os.defpath))
    if found is None:
        raise JavaError(
            f"connect-lite needs Java {MIN_JAVA} or newer (PySpark 4 runs on the JVM), and "
            f"`java` is not on PATH.\n{INSTALL_ADVICE}"
        )
    return found


def major_version(version_output: str) -> int | None:
    """The major version in ``java -version`` output (``1.8.0_392`` is 8), None if absent."""
    match = _VERSION.search(version_output)
    if match is None:
        return None
    major = int(match.group(1))
    if major == 1 and match.group(2) is not None:
        return int(match.group(2))
    return major


def check_java(env: Mapping[str, str] | None = None) -> Java:
    """The Java Spark will use, checked: JavaError if missing or too old. A ``java -version``
    that cannot be read is logged and let through: Spark's own start then tells."""
    env = os.environ if env is None else env
    path = find_java(env)
    try:
        done = subprocess.run(
            [path, "-version"],
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT_S,
            env=dict(env),
        )
    except (OSError, subprocess.SubprocessError) as error:
        log.warning("Could not run %s -version (%s); starting Spark anyway", path, error)
        return Java(path, None)
    major = major_version(done.stderr + done.stdout)
    if major is None:
        log.warning("Could not read the version of %s; starting Spark anyway", path)
    elif major < MIN_JAVA:
        raise JavaError(
            f"connect-lite needs Java {MIN_JAVA} or newer (PySpark 4 runs on the JVM), and "
            f"{path} is Java {major}.\n{INSTALL_ADVICE}"
        )
    return Java(path, major)


__all__ = [
    "INSTALL_ADVICE",
    "MIN_JAVA",
    "Java",
    "JavaError",
    "check_java",
    "find_java",
    "major_version",
]
