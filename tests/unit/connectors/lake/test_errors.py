"""Which failures are retriable: transient I/O only; a bad batch or setting is not."""

from __future__ import annotations

import errno
from typing import Any

import pytest

from connect_lite.api import ConnectError, DataError, RetriableError
from connect_lite.connectors.lake.errors import is_retriable

# Java classes by name -> superclass name (None: java.lang.Throwable's parent)
_SUPERS: dict[str, str | None] = {
    "java.lang.Object": None,
    "java.lang.Throwable": "java.lang.Object",
    "java.lang.Exception": "java.lang.Throwable",
    "java.lang.RuntimeException": "java.lang.Exception",
    "java.io.IOException": "java.lang.Exception",
    "java.io.FileNotFoundException": "java.io.IOException",
    "java.net.SocketTimeoutException": "java.io.IOException",
    "org.apache.hadoop.fs.UnsupportedFileSystemException": "java.io.IOException",
    "org.apache.hadoop.fs.PathIOException": "java.io.IOException",
    "org.apache.hadoop.fs.PathPermissionException": "org.apache.hadoop.fs.PathIOException",
    "org.apache.hadoop.security.AccessControlException": "java.io.IOException",
    "org.apache.spark.SparkException": "java.lang.Exception",
    "org.apache.spark.SparkDateTimeException": "java.lang.RuntimeException",
    "java.time.DateTimeException": "java.lang.RuntimeException",
}
_SPARK_THROWABLES = {"org.apache.spark.SparkException", "org.apache.spark.SparkDateTimeException"}


class JavaClass:
    """What Py4J gives for a java.lang.Class: its name, superclass and interfaces."""

    def __init__(self, name: str) -> None:
        self.name = name

    def getName(self) -> str:  # Java's names, as Py4J gives them
        return self.name

    def getSuperclass(self) -> JavaClass | None:
        parent = _SUPERS[self.name]
        return None if parent is None else JavaClass(parent)

    def getInterfaces(self) -> list[JavaClass]:
        if self.name in _SPARK_THROWABLES:
            return [JavaClass("org.apache.spark.SparkThrowable")]
        return []


class Throwable:
    def __init__(
        self,
        name: str,
        message: str = "",
        cause: Throwable | None = None,
        error_class: str | None = None,
    ) -> None:
        self.name, self.message, self.cause, self.error_class = name, message, cause, error_class

    def getClass(self) -> JavaClass:
        return JavaClass(self.name)

    def getMessage(self) -> str:
        return self.message

    def getCause(self) -> Throwable | None:
        return self.cause

    def getErrorClass(self) -> str | None:
        assert self.name in _SPARK_THROWABLES, "only a SparkThrowable has getErrorClass"
        return self.error_class


def py4j_error(name: str, **attrs: Any) -> Exception:
    """An instance of a class named as Py4J's or PySpark's, with ``attrs``."""
    module = "py4j.protocol" if name.startswith("Py4J") else "pyspark.errors.exceptions.captured"
    error = type(name, (Exception,), {"__module__": module})()
    error.__dict__.update(attrs)
    return error


def java_error(throwable: Throwable) -> Exception:
    return py4j_error("Py4JJavaError", java_exception=throwable)


def job_failed(cause: Throwable) -> Throwable:
    return Throwable("org.apache.spark.SparkException", "Job aborted due to stage failure", cause)


TRANSIENT = [
    OSError(errno.EIO, "I/O error"),
    OSError(errno.ENOSPC, "No space left on device"),
    OSError(errno.ETIMEDOUT, "timed out"),
    ConnectionResetError(errno.ECONNRESET, "reset"),
    ConnectionRefusedError(),  # no errno: the JVM's port is closed
    RetriableError("says so"),
    py4j_error("Py4JNetworkError"),  # the JVM died
    java_error(job_failed(Throwable("java.io.IOException", "Connection reset by peer"))),
    java_error(Throwable("java.net.SocketTimeoutException", "read timed out")),
    java_error(
        Throwable(
            "org.apache.spark.SparkException",
            "[SPARK_JOB_CANCELLED] Job 3 cancelled part of cancelled job group g1",
            error_class="SPARK_JOB_CANCELLED",
        )
    ),
]

PERMANENT = [
    PermissionError(errno.EACCES, "Permission denied"),
    OSError(errno.EPERM, "Operation not permitted"),
    FileNotFoundError(errno.ENOENT, "No such file"),
    IsADirectoryError(errno.EISDIR, "Is a directory"),
    OSError("no errno"),
    DataError("bad"),
    ConnectError("bad"),
    ValueError("bug"),
    py4j_error("Py4JError"),  # a call Py4J could not make: no method of that name ...
    py4j_error("AnalysisException"),  # no Java origin
    # ANSI CAST of a RecordField string: a DateTimeException of PySpark, no I/O in its chain
    py4j_error(
        "DateTimeException",
        _origin=Throwable(
            "org.apache.spark.SparkDateTimeException",
            "[CAST_INVALID_INPUT] The value 'x' cannot be cast to TIMESTAMP",
            error_class="CAST_INVALID_INPUT",
        ),
    ),
    # a time zone Java does not know
    py4j_error(
        "DateTimeException",
        _origin=Throwable(
            "org.apache.spark.SparkDateTimeException",
            "[INVALID_TIMEZONE] The timezone: +99:99 is invalid",
            Throwable("java.time.DateTimeException", "Zone offset hours not in valid range"),
            error_class="INVALID_TIMEZONE",
        ),
    ),
    # s3:// without the jars: HadoopStore's getFileSystem
    java_error(
        Throwable(
            "org.apache.hadoop.fs.UnsupportedFileSystemException",
            'No FileSystem for scheme "s3"',
        )
    ),
    java_error(job_failed(Throwable("java.io.FileNotFoundException", "/x (Permission denied)"))),
    java_error(job_failed(Throwable("java.io.IOException", "Mkdirs failed to create file:/x"))),
    java_error(job_failed(Throwable("org.apache.hadoop.fs.PathPermissionException", "/x"))),
    java_error(
        Throwable(
            "java.io.IOException",
            "write failed",
            Throwable("org.apache.hadoop.security.AccessControlException", "denied"),
        )
    ),
    java_error(job_failed(Throwable("java.lang.RuntimeException", "a bug"))),
]


@pytest.mark.parametrize("error", TRANSIENT, ids=repr)
def test_transient_failures_are_retriable(error: BaseException) -> None:
    assert is_retriable(error) is True


@pytest.mark.parametrize("error", PERMANENT, ids=repr)
def test_a_bad_batch_or_setting_is_not_retriable(error: BaseException) -> None:
    assert is_retriable(error) is False


def test_a_jvm_that_dies_while_the_error_is_read_is_retriable() -> None:
    class Gone(Throwable):
        def getClass(self) -> JavaClass:
            raise py4j_error("Py4JNetworkError")

    assert is_retriable(java_error(Gone("java.io.IOException"))) is True
    assert is_retriable(java_error(Throwable("no.such.Class"))) is False  # a KeyError: a bug
