"""A class-data-sharing (CDS) archive of Spark's classes: built once, mapped by each JVM start.

Spark's JVM loads some 18,000 classes at start. Java 17 can dump the classes a run loaded
into an archive (``-XX:ArchiveClassesAtExit``) that later JVMs map instead of parsing and
verifying the jars again (``-XX:SharedArchiveFile``). On the 2-core machine this cut the
session start from 4.5-5.0 s to 2.5-2.7 s, and the warm-up job from 3.4-3.6 s to 2.1-2.2 s.

Where: ``$CONNECT_LITE_CACHE_DIR``, else ``$XDG_CACHE_HOME/connect-lite``, else
``~/.cache/connect-lite``; in its ``cds/`` directory, one archive per :func:`archive_key`
(the ``java`` binary, the PySpark version and jars, the driver's extra class path), so a
new Java or PySpark gets an archive of its own and never maps a stale one.

Safety: the JVM crashes (SIGBUS) on a truncated archive, and silently drops all sharing on
a damaged one. So an archive is written under a temporary name, renamed only after its JVM
exited cleanly, and recorded with its size in a ``.ok`` file; :func:`usable_archive` maps it
only if it is still that size and starts with the dynamic archive's magic number. The JVM's
own CDS log is turned off, so a refused archive (e.g. a class path changed by hand) costs the
speed-up and prints nothing to users.

Built by ``python -m connect_lite.pipeline.class_archive_build`` (a module of its own: building
needs a session, and the session reads this module), which ``scripts/setup.sh`` runs in a
checkout; :func:`build_command` is that command for an installed connect-lite too. A worker
without one starts as before, slower, and says so at INFO with that command. A user's own
``-XX:SharedArchiveFile``, ``-XX:ArchiveClassesAtExit`` or ``-Xshare`` (but ``-Xshare:auto``,
the default) in ``spark.driver.extraJavaOptions`` turns this off.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shlex
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from connect_lite.api.errors import ConnectError

log = logging.getLogger(__name__)

MAGIC = (0xF00BABA8).to_bytes(4, "little")
"""The first bytes of a dynamic CDS archive (HotSpot's CDS_DYNAMIC_ARCHIVE_MAGIC)."""

QUIET = ("-Xlog:cds=off", "-Xlog:cds+dynamic=off")
"""A refused archive only costs the speed-up: no warning for users (the JVM's is cryptic)."""

BUILD_MODULE = "connect_lite.pipeline.class_archive_build"
"""The module that builds the archive: ``python -m`` it with the worker's Python."""

USER_CDS_OPTIONS = ("-XX:SharedArchiveFile", "-XX:ArchiveClassesAtExit", "-Xshare")
"""Options of the user's that mean they manage class-data sharing themselves."""


class ClassArchiveError(ConnectError):
    """The archive could not be built (the worker still runs without it)."""


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """connect-lite's cache directory (outside any checkout)."""
    env = os.environ if env is None else env
    if env.get("CONNECT_LITE_CACHE_DIR"):
        return Path(env["CONNECT_LITE_CACHE_DIR"])
    base = env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or "~", ".cache")
    home = Path(os.path.expanduser(base))
    if not home.is_absolute():  # no HOME and no passwd entry: never a directory under the cwd
        return Path(tempfile.gettempdir()) / f"connect-lite-cache-{os.getuid()}"
    return home / "connect-lite"


def archive_key(java: str, jars_dir: Path, spark_version: str, extra_class_path: str) -> str:
    """What the archive depends on, hashed: the java binary, Spark's version and its jars (names,
    sizes, times), and the driver's extra class path. Any change means another archive."""
    digest = hashlib.sha256()
    real = os.path.realpath(java)
    stat = os.stat(real)
    digest.update(f"{real}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    digest.update(f"{spark_version}\0{extra_class_path}\0".encode())
    for jar in sorted(jars_dir.glob("*.jar")):
        jar_stat = jar.stat()
        digest.update(f"{jar.name}\0{jar_stat.st_size}\0{jar_stat.st_mtime_ns}\0".encode())
    return digest.hexdigest()[:20]


def archive_path(conf: Mapping[str, str], env: Mapping[str, str] | None = None) -> Path:
    """Where the archive for this Java, this PySpark and ``conf`` lives (it may not exist)."""
    import pyspark

    from connect_lite.pipeline.java import find_java

    env = os.environ if env is None else env
    jars = Path(pyspark.__file__).parent / "jars"
    key = archive_key(
        find_java(env), jars, pyspark.__version__, conf.get("spark.driver.extraClassPath", "")
    )
    return cache_dir(env) / "cds" / f"spark-{key}.jsa"


def build_command(python: str | None = None) -> str:
    """The shell command that builds the archive with ``python`` (this process's by default,
    which is the worker's): it works wherever connect-lite is installed, a checkout's ``.venv``
    or a user's own virtualenv, where ``scripts/setup.sh`` does not exist."""
    return f"{shlex.quote(python or sys.executable)} -m {BUILD_MODULE}"


def _ok_file(path: Path) -> Path:
    return path.with_name(path.name + ".ok")


def usable_archive(path: Path) -> bool:
    """Whether ``path`` is a whole archive written by :func:`build`: its ``.ok`` record names
    its size, and it starts with the magic number. Never raises."""
    try:
        recorded = int(_ok_file(path).read_text().strip())
        if path.stat().st_size != recorded:
            return False
        with path.open("rb") as archive:
            return archive.read(len(MAGIC)) == MAGIC
    except (OSError, ValueError):
        return False


def user_manages_sharing(user_options: str) -> bool:
    """Whether the user's options handle class-data sharing (``-Xshare:auto``, the default
    that EmbeddedConnect's FAST_DEFAULTS spell out, does not)."""
    options = user_options.replace("-Xshare:auto", "")
    return any(option in options for option in USER_CDS_OPTIONS)


def archive_options(conf: Mapping[str, str], env: Mapping[str, str] | None = None) -> list[str]:
    """The JVM options that map this installation's archive; none if there is no usable one,
    or if the user's own ``spark.driver.extraJavaOptions`` handle class-data sharing."""
    if user_manages_sharing(conf.get("spark.driver.extraJavaOptions", "")):
        return []
    try:
        path = archive_path(conf, env)
    except (OSError, ConnectError) as error:  # no java, or a jar gone: Spark itself will tell
        log.debug("No class-data-sharing archive: %s", error)
        return []
    if not usable_archive(path):
        log.info(
            "No class-data-sharing archive of Spark's classes at %s: Spark starts without it, "
            "a few seconds slower. To build it once (about 20 s): %s",
            path,
            build_command(),
        )
        return []
    return [_option("-XX:SharedArchiveFile", path), *QUIET]


def _option(name: str, path: Path) -> str:
    """``name=path``, quoted when the path has spaces: Spark's launcher splits
    ``spark.driver.extraJavaOptions`` as a shell would."""
    option = f"{name}={path}"
    return f'"{option}"' if any(c.isspace() for c in option) else option
