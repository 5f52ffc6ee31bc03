"""Connectors' status details: what a connector says it holds in the system it connects to
(a replication slot's retained WAL), sampled in the background for the status and metrics.

A connector opts in by overriding ``Connector.status_details``. The sampler calls it on a
fresh, unstarted instance of the connector's class with the connector's resolved config, as
the offsets API calls ``alter_offsets``, in whatever state the connector is: a STOPPED or
PAUSED connector runs nothing that could report. It samples every ``interval_s`` and soon
after ``nudge`` (the herder nudges after a state change), on its own thread, so that a
system that does not answer slows no request; the status and metrics show the last sample."""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Mapping
from typing import Any

from connect_lite.api.connector import Connector
from connect_lite.plugins.registry import Plugins
from connect_lite.plugins.types import PluginType
from connect_lite.storage.base import ConfigStore

log = logging.getLogger(__name__)

Details = dict[str, int | float | str]

_CONNECTOR_TYPES = (PluginType.SOURCE, PluginType.SINK)
DEFAULT_INTERVAL_S = 30.0
"""How often the sampler asks each connector that reports details."""


class ConnectorDetails:
    """The last status details of each connector that reports some, refreshed in the
    background (``start``/``stop``); ``get`` and ``all`` read them without waiting."""

    def __init__(
        self,
        plugins: Plugins,
        configs: ConfigStore,
        resolve: Callable[[dict[str, str]], dict[str, str]],
        interval_s: float = DEFAULT_INTERVAL_S,
    ) -> None:
        self._plugins = plugins
        self._configs = configs
        self._resolve = resolve
        self.interval_s = interval_s
        self._details: dict[str, Details] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="connector-details", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def nudge(self) -> None:
        """Sample soon (a connector changed state, or was deleted)."""
        self._wake.set()

    def get(self, name: str) -> Details | None:
        with self._lock:
            return self._details.get(name)

    def all(self) -> dict[str, Details]:
        with self._lock:
            return dict(self._details)

    def _run(self) -> None:
        while not self._stopping.is_set():
            self.sample()
            self._wake.wait(self.interval_s)
            self._wake.clear()

    def sample(self) -> None:
        """Ask every connector that reports details, once; forget the deleted ones."""
        fresh: dict[str, Details] = {}
        for name in self._configs.connector_names():
            if self._stopping.is_set():
                return
            config = self._configs.get_connector_config(name)
            if config is None:
                continue
            details = self._ask(name, config)
            if details:
                fresh[name] = details
        with self._lock:
            self._details = fresh

    def _ask(self, name: str, config: dict[str, str]) -> Details | None:
        class_name = config.get("connector.class") or ""
        try:
            desc = self._plugins.find(
                class_name, _CONNECTOR_TYPES, config.get("connector.plugin.version")
            )
            if not reports_details(desc.cls):
                return None
            instance = self._plugins.new_instance(desc)
            found = instance.status_details({**self._resolve(config), "name": name})
        except Exception as error:  # the connector's system may be away: the next sample
            log.debug("[%s] No status details this time: %s", name, error)
            with self._lock:
                return self._details.get(name)
        return _checked(name, found)


def reports_details(cls: Any) -> bool:
    """Whether the connector class overrides ``Connector.status_details``."""
    hook = getattr(cls, "status_details", None)
    return hook is not None and hook is not Connector.status_details


def _checked(name: str, found: Mapping[str, Any] | None) -> Details | None:
    """Numbers and strings under string keys; anything else (a bool too) is left out (WARN)."""
    if not found:
        return None
    details: Details = {}
    for key, value in found.items():
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if isinstance(key, str) and (isinstance(value, str) or (number and math.isfinite(value))):
            details[key] = value
        else:
            log.warning("[%s] status_details gave %r: %r, which is left out", name, key, value)
    return details or None


def numeric_details(details: Mapping[str, Details]) -> dict[tuple[str, str], float]:
    """(connector, detail) -> value of every numeric detail, for the metrics."""
    return {
        (connector, key): float(value)
        for connector, found in details.items()
        for key, value in found.items()
        if isinstance(value, int | float)
    }
