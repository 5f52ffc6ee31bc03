"""Shipping code to a cluster's executors with Spark's own mechanisms; never a shared path.

When ``spark.master`` is not local, executors may run on other machines, so nothing the
worker reads from its own disk can be assumed there:

- ``connect_lite`` itself goes as a zip through ``addPyFile`` when the session starts; Spark
  puts it first on its Python workers' ``sys.path``. A handshake job then checks that the
  executors import that copy, on the same Python version (cloudpickle does not cross
  versions), and fails the session start with a clear message otherwise.
- Each plugin location a batch job's converters, transforms and predicates come from goes as a
  zip through ``addArchive``, named by the location's private package and a hash of its
  contents (so two versions, or a changed copy, never share a name). Spark unpacks it in
  each executor's work directory; the executor-side isolation (plugins/isolation.py,
  ``use_copy``) loads the location's modules from there under the same private package
  names as on the worker, so KIP-891 isolation holds on every executor.

In local mode (``local``, ``local[...]``) nothing is shipped: the Python workers run on this
machine and import connect_lite and the plugin locations from where the worker does.
Installed plugins (``plugin.modules``, entry points) are not shipped: they must be installed
in the executors' Python environment (``spark.pyspark.python``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import platform
import re
import tempfile
import threading
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from connect_lite.api.errors import ConnectError
from connect_lite.plugins import isolation
from connect_lite.protocol.job_spec import JobSpec, ShippedLocation

if TYPE_CHECKING:
    from pyspark import SparkContext

_SKIPPED_DIRS = {"__pycache__"}
_SKIPPED_SUFFIXES = (".pyc", ".pyo")


class ExecutorMismatchError(ConnectError):
    """The executors cannot run this worker's batch job code (wrong connect_lite or Python)."""


def is_local(master: str) -> bool:
    """True for masters whose executors run in the driver's JVM on this machine."""
    return master == "local" or master.startswith("local[")


def _files(directory: Path) -> list[Path]:
    """Every file below ``directory`` that a copy needs, in a stable order."""
    found: list[Path] = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS)
        found.extend(Path(root, f) for f in sorted(files) if not f.endswith(_SKIPPED_SUFFIXES))
    return found


def content_hash(directory: Path) -> str:
    """A hash of the relative names and contents of the files a copy of ``directory`` holds."""
    digest = hashlib.sha256()
    for path in _files(directory):
        digest.update(path.relative_to(directory).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def pack(directory: Path, target: Path, prefix: str = "") -> Path:
    """Zip the files of ``directory`` into ``target``, their names under ``prefix``."""
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in _files(directory):
            archive.write(path, prefix + path.relative_to(directory).as_posix())
    return target


def archive_name(location: str, digest: str) -> str:
    """The archive of a location: its private package's name, then its content hash."""
    package = isolation.location_package(location).rsplit(".", 1)[-1]
    return f"{package}-{digest}.zip"


class Shipper:
    """The driver side: packs each thing once per worker, adds it once per SparkContext.

    Owns the zips it packed (in a private temporary directory, until ``close``) and which of
    them the current SparkContext was given. Lock: ``_lock``, over both (packing happens
    under it). No thread.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._dir: tempfile.TemporaryDirectory[str] | None = None
        self._packed: dict[str, Path] = {}  # location or package dir -> its zip
        self._added: set[str] = set()  # zips added to the current SparkContext

    def _workdir(self) -> Path:
        if self._dir is None:
            self._dir = tempfile.TemporaryDirectory(prefix="connect-lite-shipped-")
        return Path(self._dir.name)

    def package(self, sc: SparkContext) -> str:
        """Ship connect_lite (``addPyFile``); the zip's file name."""
        import connect_lite

        home = Path(connect_lite.__file__).resolve().parent
        with self._lock:
            self._added.clear()  # a new SparkContext: nothing of it was added yet
            zipped = self._packed.get(str(home))
            if zipped is None:
                name = f"connect_lite-{connect_lite.__version__}-{content_hash(home)}.zip"
                zipped = pack(home, self._workdir() / name, "connect_lite/")
                self._packed[str(home)] = zipped
        sc.addPyFile(str(zipped))
        return zipped.name

    def locations(self, sc: SparkContext, locations: Sequence[str]) -> tuple[ShippedLocation, ...]:
        """Ship each plugin location (``addArchive``, once per SparkContext)."""
        shipped = []
        with self._lock:
            for location in locations:
                zipped = self._packed.get(location)
                if zipped is None:
                    name = archive_name(location, content_hash(Path(location)))
                    zipped = pack(Path(location), self._workdir() / name)
                    self._packed[location] = zipped
                if zipped.name not in self._added:
                    sc.addArchive(str(zipped))
                    self._added.add(zipped.name)
                shipped.append(ShippedLocation(location, zipped.name))
        return tuple(shipped)

    def ship(self, sc: SparkContext, spec: JobSpec) -> JobSpec:
        """``spec`` with its plugin locations shipped (``locations``); ``spec`` itself if they
        were shipped as it says already."""
        shipped = self.locations(sc, spec.plugin_locations)
        return spec if shipped == spec.shipped else dataclasses.replace(spec, shipped=shipped)

    def close(self) -> None:
        with self._lock:
            if self._dir is not None:
                self._dir.cleanup()
            self._dir = None
            self._packed.clear()
            self._added.clear()


def use_shipped(shipped: Iterable[ShippedLocation]) -> None:
    """Executor side: load each shipped location from where Spark unpacked its archive."""
    if not shipped:
        return
    from pyspark import SparkFiles

    for location in shipped:
        isolation.use_copy(location.origin, SparkFiles.get(location.archive))


_PYTHON_ERROR = re.compile(r"^[A-Za-z_]\w*(?:Error|Exception): .+$")


def _cause(error: BaseException) -> str:
    """The Python exception line of an executor's traceback inside a Py4J error's text (such
    as ``ModuleNotFoundError: No module named 'pyarrow'``), else the text's first line."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    found = [line for line in lines if _PYTHON_ERROR.match(line)]
    return (found or lines or [type(error).__name__])[0][:500]


def executor_facts(_: Iterable[Any]) -> Iterator[tuple[str, str, str]]:
    """The handshake job's function: connect_lite's version and file, and Python's version.

    It imports pyarrow, the one dependency beyond PySpark of the code the batch jobs run on
    executors: an executor whose Python lacks it fails here, at the session's start, not at
    a batch. (Not that code itself: it imports this module, through the session.)"""
    import pyarrow  # noqa: F401  # see the docstring

    import connect_lite

    yield connect_lite.__version__, connect_lite.__file__, platform.python_version()


def handshake(sc: SparkContext, package_zip: str) -> None:
    """Run one small job on the executors; ExecutorMismatchError unless they import the
    shipped connect_lite on this Python's major.minor version."""
    import connect_lite

    partitions = max(1, sc.defaultParallelism)
    try:
        facts = sc.parallelize(range(partitions), partitions).mapPartitions(executor_facts)
        seen = set(facts.collect())
    except Exception as error:
        raise ExecutorMismatchError(
            f"Spark's executors could not run connect_lite's handshake job: {_cause(error)}. "
            "Executors need a Python with connect-lite's dependencies (spark.pyspark.python)"
        ) from error
    ours = platform.python_version_tuple()[:2]
    for version, where, python in sorted(seen):
        if package_zip not in where:
            raise ExecutorMismatchError(
                f"Spark's executors import connect_lite {version} from {where}, not the shipped "
                f"{package_zip}: remove it from the executors' PYTHONPATH"
            )
        if version != connect_lite.__version__ or python.split(".")[:2] != list(ours):
            raise ExecutorMismatchError(
                f"Spark's executors run connect_lite {version} on Python {python}; this worker "
                f"runs connect_lite {connect_lite.__version__} on Python "
                f"{platform.python_version()}. Give executors a matching Python "
                "(spark.pyspark.python, or a packed environment through spark.archives)"
            )
