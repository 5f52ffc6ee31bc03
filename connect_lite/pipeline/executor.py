"""A batch job's components in Spark's Python workers: built lazily, cached per process; GC.

This module runs inside Spark's Python workers (it is imported there by reference, so its
module globals live once per worker process). Components are built from the batch job's
zero-argument factories on first use and cached per process, keyed by the job id; a new
batch job instance with the same id (a restarted task) replaces the old entry and closes the
old transforms. A factory that raises becomes a :class:`BuildError` carrying a
:class:`RecordError` (plugin_calls.py guards the calls on records); nothing plugin-made
ever fails the Spark job itself.
"""

from __future__ import annotations

import gc
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Generic, TypeVar

from connect_lite.pipeline.record_errors import (
    HEADER_CONVERTER,
    KEY_CONVERTER,
    PREDICATE,
    TRANSFORMATION,
    VALUE_CONVERTER,
    RecordError,
    capture,
)
from connect_lite.pipeline.shipping import use_shipped
from connect_lite.protocol.job_spec import Chain, JobSpec

MAX_CACHED_STAGES = 64
C = TypeVar("C")


class BuildError(Exception):
    """A component factory raised; carries the structured error."""

    def __init__(self, error: RecordError) -> None:
        super().__init__(error.describe())
        self.error = error


class _Lazy(Generic[C]):
    """A component built from its factory on first access; a failure is remembered."""

    __slots__ = ("_error", "_factory", "_instance", "_stage")

    def __init__(self, factory: Callable[[], C], stage: str) -> None:
        self._factory = factory
        self._stage = stage
        self._instance: C | None = None
        self._error: RecordError | None = None

    def get(self) -> C:
        if self._instance is not None:
            return self._instance
        if self._error is None:
            try:
                self._instance = self._factory()
                return self._instance
            except Exception as e:
                self._error = capture(e, None, self._stage, _factory_name(self._factory))
        raise BuildError(self._error)

    def close(self) -> None:
        if self._instance is not None and hasattr(self._instance, "close"):
            with suppress(Exception):
                self._instance.close()


def _factory_name(factory: object) -> str:
    func = getattr(factory, "func", factory)  # functools.partial
    args = getattr(factory, "args", ())
    for arg in args:  # a PluginRef-like first argument names the plugin best
        if hasattr(arg, "qualname") and hasattr(arg, "module"):
            return f"{arg.module}.{arg.qualname}"
    return f"{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', repr(func))}"


class Components:
    """The built components of one batch job in one worker process."""

    def __init__(self, spec: JobSpec) -> None:
        self.spec = spec  # plugin_calls.retry_of reads its retry settings
        self.key = _Lazy(spec.key_converter, KEY_CONVERTER)
        self.value = _Lazy(spec.value_converter, VALUE_CONVERTER)
        self.header = _Lazy(spec.header_converter, HEADER_CONVERTER)
        self._transforms = [
            (
                _Lazy(t.factory, TRANSFORMATION),
                None if t.predicate is None else _Lazy(t.predicate, PREDICATE),
                t.negate,
            )
            for t in spec.transforms
        ]

    @property
    def has_transforms(self) -> bool:
        return bool(self._transforms)

    def transforms(self) -> Chain:
        """(transform, predicate or None, negate) instances, built now if needed."""
        return [
            (t.get(), None if p is None else p.get(), negate) for t, p, negate in self._transforms
        ]

    def close(self) -> None:
        for t, p, _ in self._transforms:
            t.close()
            if p is not None:
                p.close()


_cache: OrderedDict[str, tuple[str, Components]] = OrderedDict()
_cache_lock = threading.Lock()


def components(spec: JobSpec, token: str) -> Components:
    """The cached components of ``spec`` in this process, built lazily once per batch job."""
    with _cache_lock:
        entry = _cache.get(spec.job_id)
        if entry is not None and entry[0] == token:
            _cache.move_to_end(spec.job_id)
            return entry[1]
        if entry is not None:
            entry[1].close()
        use_shipped(spec.shipped)  # plugin locations load from the copies shipped here
        built = Components(spec)
        _cache[spec.job_id] = (token, built)
        while len(_cache) > MAX_CACHED_STAGES:
            _cache.popitem(last=False)[1][1].close()
        return built


_pause_lock = threading.Lock()
_pause_depth = 0
_was_enabled = True


@contextmanager
def gc_paused() -> Iterator[None]:
    """Suspend the cyclic GC while a batch allocates many objects (re-entrant, thread-safe).

    Bulk pickling and record building allocate millions of objects, which triggers
    full collections again and again; pausing roughly halves the cost of that work.
    """
    global _pause_depth, _was_enabled
    with _pause_lock:
        _pause_depth += 1
        if _pause_depth == 1:
            _was_enabled = gc.isenabled()
            gc.disable()
    try:
        yield
    finally:
        with _pause_lock:
            _pause_depth -= 1
            if _pause_depth == 0 and _was_enabled:
                gc.enable()
