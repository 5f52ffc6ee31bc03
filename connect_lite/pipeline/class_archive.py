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

Built by ``scripts/setup.sh`` (``python -m connect_lite.pipeline.class_archive``). A worker
without one starts as before. A user's own ``-XX:SharedArchiveFile``,
``-XX:ArchiveClassesAtExit`` or ``-Xshare`` (but ``-Xshare:auto``, the default) in
``spark.driver.extraJavaOptions`` turns this off.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from connect_lite.api.errors import ConnectError

log = logging.getLogger(__name__)

MAGIC = (0xF00BABA8).to_bytes(4, "little")
"""The first bytes of a dynamic CDS archive (HotSpot's CDS_DYNAMIC_ARCHIVE_MAGIC)."""

QUIET = ("-Xlog:cds=off", "-Xlog:cds+dynamic=off")
"""A refused archive only costs the speed-up: no warning for users (the JVM's is cryptic)."""

USER_CDS_OPTIONS = ("-XX:SharedArchiveFile", "-XX:ArchiveClassesAtExit", "-Xshare")
"""Options of the user's that mean they manage class-data sharing themselves."""

EXIT_TIMEOUT_S = 120.0
"""How long a build waits for its JVM to write the archive and exit."""


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
            "No class-data-sharing archive of Spark's classes at %s: Spark starts without it "
            "(scripts/setup.sh builds it)",
            path,
        )
        return []
    return [_option("-XX:SharedArchiveFile", path), *QUIET]


def _option(name: str, path: Path) -> str:
    """``name=path``, quoted when the path has spaces: Spark's launcher splits
    ``spark.driver.extraJavaOptions`` as a shell would."""
    option = f"{name}={path}"
    return f'"{option}"' if any(c.isspace() for c in option) else option


def build(conf: Mapping[str, str] | None = None, force: bool = False) -> Path:
    """Build the archive for ``conf`` (the worker's ``spark.*`` keys), unless a usable one is
    there (or ``force``): one Spark session that runs the warm-up job, then exits."""
    from connect_lite.pipeline.session import SparkRuntime
    from connect_lite.pipeline.transfer import warm_up

    conf = dict(conf or {})
    path = archive_path(conf)
    if usable_archive(path) and not force:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    options = " ".join([_option("-XX:ArchiveClassesAtExit", partial), *QUIET])
    user = conf.get("spark.driver.extraJavaOptions", "")
    runtime = SparkRuntime({**conf, "spark.driver.extraJavaOptions": f"{user} {options}".strip()})
    try:
        warm_up(runtime)
    finally:
        runtime.stop()
    code = _exit_jvm()
    size = partial.stat().st_size if partial.exists() else 0
    if code != 0 or size == 0:
        partial.unlink(missing_ok=True)
        raise ClassArchiveError(f"Spark's JVM exited with {code} and wrote {size} bytes")
    _ok_file(path).unlink(missing_ok=True)  # the old archive is no longer vouched for
    os.replace(partial, path)
    _ok_file(path).write_text(f"{size}\n")
    return path


def _exit_jvm() -> int | None:
    """End the (stopped) session's JVM and wait for it: it writes the archive as it exits.
    Its exit code, None if there was no JVM."""
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    proc = getattr(gateway, "proc", None)
    if gateway is None or proc is None:
        return None
    gateway.shutdown()
    if proc.stdin is not None:
        proc.stdin.close()  # the JVM exits when its stdin ends
    code = int(proc.wait(EXIT_TIMEOUT_S))
    SparkContext._gateway = None
    SparkContext._jvm = None
    return code


def _failed_file(path: Path) -> Path:
    return path.with_name(path.name + ".failed")


def main() -> None:
    """``python -m connect_lite.pipeline.class_archive [--force]``: build it if missing. A
    build that failed is not tried again for the same Java and PySpark (each try costs a
    Spark start) until ``--force``."""
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    force = "--force" in sys.argv[1:]
    path: Path | None = None
    try:
        path = archive_path({})
        if usable_archive(path) and not force:
            return
        failed = _failed_file(path)
        if failed.exists() and not force:
            print(
                f"No class-data-sharing archive: building it failed before ({failed}); "
                "Spark starts slower. To try again: "
                ".venv/bin/python -m connect_lite.pipeline.class_archive --force",
                file=sys.stderr,
            )
            return
        print("Building a class-data-sharing archive of Spark's classes (once)...", file=sys.stderr)
        begin = time.monotonic()
        built = build(force=force)
    except Exception as error:  # the worker still runs without it, only slower to start
        print(
            f"Warning: no class-data-sharing archive ({error}); Spark starts slower",
            file=sys.stderr,
        )
        if path is not None:
            with contextlib.suppress(OSError):
                _failed_file(path).write_text(f"{error}\n")
        return
    _failed_file(built).unlink(missing_ok=True)
    print(f"Built {built} in {time.monotonic() - begin:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
