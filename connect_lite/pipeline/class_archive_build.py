"""Building the class-data-sharing archive (class_archive.py): one Spark session whose JVM
dumps the classes it loaded as it exits.

``python -m connect_lite.pipeline.class_archive_build [--force]``, which ``scripts/setup.sh``
runs. A module of its own, apart from class_archive.py: building starts a session, and the
session reads class_archive.py for the options that map the archive.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from connect_lite.pipeline.class_archive import (
    QUIET,
    ClassArchiveError,
    _ok_file,
    _option,
    archive_path,
    build_command,
    usable_archive,
)
from connect_lite.pipeline.session import SparkEngine
from connect_lite.pipeline.transfer import warm_up

EXIT_TIMEOUT_S = 120.0
"""How long a build waits for its JVM to write the archive and exit."""


def build(conf: Mapping[str, str] | None = None, force: bool = False) -> Path:
    """Build the archive for ``conf`` (the worker's ``spark.*`` keys), unless a usable one is
    there (or ``force``): one Spark session that runs the warm-up job, then exits."""
    conf = dict(conf or {})
    path = archive_path(conf)
    if usable_archive(path) and not force:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    options = " ".join([_option("-XX:ArchiveClassesAtExit", partial), *QUIET])
    user = conf.get("spark.driver.extraJavaOptions", "")
    engine = SparkEngine({**conf, "spark.driver.extraJavaOptions": f"{user} {options}".strip()})
    try:
        warm_up(engine)
    finally:
        engine.stop()
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
    """``python -m connect_lite.pipeline.class_archive_build [--force]``: build it if missing. A
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
                f"Spark starts slower. To try again: {build_command()} --force",
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
