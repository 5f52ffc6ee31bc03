"""Which failures of Spark and the store may pass (a ``RetriableError``: the worker hands
the same records over again), and which belong to the batch or the configuration.

Not retriable unless known to be transient: a bad batch or a wrong setting retried
forever would stall the task instead of failing it (or, with ``errors.tolerance=all``,
sending the records to the dead letter queue). Retriable are:

* I/O errors of the JVM: a ``java.io.IOException`` in the cause chain of a Java error,
  except those that name a permanent problem (a missing file, no permission, no
  FileSystem for the URL's scheme, a path that is not a directory, ...);
* a Spark job cancelled (the worker cancels the task's jobs when it stops it);
* the JVM gone (Py4J's network errors, connections refused or reset): the worker builds
  the batch again, on a new session if it has to;
* ``OSError`` with an errno that passes: I/O errors, timeouts, connections, a full disk.
"""

from __future__ import annotations

import errno
from typing import Any

from connect_lite.api import ConnectError, RetriableError

_TRANSIENT_ERRNOS = {
    getattr(errno, name)
    for name in (
        "EIO",
        "EAGAIN",
        "EWOULDBLOCK",
        "EINTR",
        "EBUSY",
        "ENOSPC",
        "EDQUOT",
        "ENOBUFS",
        "ETIMEDOUT",
        "ECONNRESET",
        "ECONNREFUSED",
        "ECONNABORTED",
        "EPIPE",
        "ENETDOWN",
        "ENETUNREACH",
        "ENETRESET",
        "EHOSTDOWN",
        "EHOSTUNREACH",
        "ESTALE",
    )
    if hasattr(errno, name)
}

_IO_EXCEPTION = "java.io.IOException"

_PERMANENT_JAVA = {
    "java.io.FileNotFoundException",
    "java.io.UnsupportedEncodingException",
    "java.net.MalformedURLException",
    "java.nio.charset.CharacterCodingException",
    "java.nio.file.AccessDeniedException",
    "java.nio.file.FileAlreadyExistsException",
    "java.nio.file.NoSuchFileException",
    "java.nio.file.NotDirectoryException",
    "org.apache.hadoop.fs.FileAlreadyExistsException",
    "org.apache.hadoop.fs.ParentNotDirectoryException",
    "org.apache.hadoop.fs.PathIOException",  # PathNotFound, PathPermission, PathExists ...
    "org.apache.hadoop.fs.UnsupportedFileSystemException",
    "org.apache.hadoop.security.AccessControlException",
    "org.apache.hadoop.fs.s3a.AWSBadRequestException",
    "org.apache.hadoop.fs.s3a.UnknownStoreException",
    "org.apache.hadoop.fs.s3a.CredentialInitializationException",
    "org.apache.hadoop.fs.s3a.auth.NoAuthWithAWSException",
}
"""Java exceptions (or their superclasses) that no retry fixes, IOExceptions though most
of them are."""

_PERMANENT_MESSAGES = ("Mkdirs failed to create", "Permission denied")
"""Plain IOExceptions of Hadoop's local FileSystem for a directory it may not write."""

_CANCELLED = "SPARK_JOB_CANCELLED"
_MAX_CAUSES = 32


def is_retriable(error: BaseException) -> bool:
    """Whether the same records may succeed when handed over again (see the module)."""
    if isinstance(error, RetriableError):
        return True
    if isinstance(error, ConnectError):
        return False
    if isinstance(error, OSError):
        return _transient_os_error(error)
    module = type(error).__module__
    if not module.startswith(("py4j", "pyspark")):
        return False
    if any(cls.__name__ == "Py4JNetworkError" for cls in type(error).__mro__):
        return True  # the JVM is gone
    throwable = getattr(error, "java_exception", None)  # Py4JJavaError
    if throwable is None:
        throwable = getattr(error, "_origin", None)  # a pyspark CapturedException
    if throwable is None:
        return False
    try:
        return _transient_java_error(throwable)
    except Exception as failure:  # the JVM died meanwhile: that passes, a bug does not
        return any(cls.__name__ == "Py4JNetworkError" for cls in type(failure).__mro__) or (
            isinstance(failure, OSError) and _transient_os_error(failure)
        )


def _transient_os_error(error: OSError) -> bool:
    if isinstance(error, ConnectionError | TimeoutError | InterruptedError):
        return True
    return error.errno in _TRANSIENT_ERRNOS


def _transient_java_error(throwable: Any) -> bool:
    """Whether a Java Throwable's cause chain holds a transient I/O error or a cancelled
    job, and no permanent error."""
    transient = False
    seen = 0
    while throwable is not None and seen < _MAX_CAUSES:
        seen += 1
        classes: set[str] = set()
        cls = throwable.getClass()
        while cls is not None:
            classes.add(str(cls.getName()))
            cls = cls.getSuperclass()
        if classes & _PERMANENT_JAVA:
            return False
        message = str(throwable.getMessage() or "")
        if _IO_EXCEPTION in classes:
            if any(text in message for text in _PERMANENT_MESSAGES):
                return False
            transient = True
        if "org.apache.spark.SparkThrowable" in _interfaces(throwable) and (
            str(throwable.getErrorClass() or "") == _CANCELLED
        ):
            transient = True
        throwable = throwable.getCause()
    return transient


def _interfaces(throwable: Any) -> set[str]:
    names: set[str] = set()
    cls = throwable.getClass()
    while cls is not None:
        names.update(str(i.getName()) for i in cls.getInterfaces())
        cls = cls.getSuperclass()
    return names
