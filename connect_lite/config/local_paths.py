"""The bound on local files a connector may read or write: ``connector.allowed.paths``.

A REST user who can create connectors could otherwise read any file the worker can (a
FileStream source on it) and write any (a FileStream sink with a line of their choosing, in a
``.pth`` file or ``authorized_keys``: code execution as the worker's user). Kafka took
FileStream off the default plugin path for that reason; connect-lite keeps it built in, and
bounds it here.

Every value of a key declared with ``local_path`` (``connect_lite.api.LocalPath``) must name a
path inside one of the allowed directories once links and ``..`` are resolved, and must not be
one of the worker's own files: the state file and its companions, ``plugin.path`` and the
Python installation, even when they lie inside an allowed directory.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from connect_lite.api.config import ConfigDef, LocalPath

ALLOWED_PATHS = "connector.allowed.paths"
_PACKAGE_HOME = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLIENT_FILE_KEYS = frozenset(
    {
        "ssl.key.location",
        "ssl.certificate.location",
        "ssl.ca.location",
        "ssl.crl.location",
        "ssl.keystore.location",
        "ssl.truststore.location",
        "sasl.oauthbearer.assertion.file",
        "sasl.oauthbearer.assertion.private.key.file",
        "sasl.oauthbearer.assertion.jwt.template.file",
    }
)
"""Kafka client keys (librdkafka's and Java's) that name a key, certificate or trust file: in a
connector's ``*.override.*`` keys they are bounded like any other local path."""
CLIENT_OVERRIDE_PREFIXES = ("producer.override.", "consumer.override.", "admin.override.")
STATE_COMPANIONS = ("", "-wal", "-shm", "-journal", ".lock")
"""SQLite's companion files of the state file, and the owner lock beside it."""


def real(path: str, base: str | None = None) -> str:
    """``path`` with ``~``, links and ``..`` resolved (relative to ``base`` or the working
    directory); a path that does not exist yet is resolved as far as it exists."""
    expanded = os.path.expanduser(path)
    if base is not None and not os.path.isabs(expanded):
        expanded = os.path.join(base, expanded)
    return os.path.realpath(expanded)


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _python_installation() -> list[str]:
    """Where the running Python and its packages live: a file written there runs as code."""
    places = {sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix}
    for name in ("stdlib", "platstdlib", "purelib", "platlib", "scripts", "data"):
        place = sysconfig.get_paths().get(name)
        if place and name != "data":
            places.add(place)
    places.update(p for p in sys.path if p and os.path.isdir(p) and "site-packages" in p)
    places.add(_PACKAGE_HOME)  # connect_lite's own code: in a checkout it is not under sys.prefix
    return sorted(places)


@dataclass(frozen=True)
class LocalPaths:
    """The allowed directories and the worker's own files, all resolved."""

    allowed: tuple[str, ...]
    forbidden_files: tuple[str, ...] = ()
    forbidden_dirs: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        allowed: Iterable[str],
        state_file: str,
        plugin_path: Iterable[str] = (),
        extra_forbidden: Iterable[str] = (),
    ) -> LocalPaths:
        state = real(state_file)
        dirs = [real(p) for p in plugin_path if p.strip()] + [real(p) for p in extra_forbidden]
        return cls(
            allowed=tuple(dict.fromkeys(real(p) for p in allowed if p.strip())),
            forbidden_files=tuple(state + suffix for suffix in STATE_COMPANIONS),
            forbidden_dirs=tuple(
                dict.fromkeys([*dirs, *(real(p) for p in _python_installation())])
            ),
        )

    @classmethod
    def default_allowed(cls, state_file: str) -> list[str]:
        """The directory of the state file: the demo's files sit beside it."""
        return [os.path.dirname(real(state_file))]

    def problem(self, path: str) -> str | None:
        """Why ``path`` may not be used by a connector, or None when it may."""
        resolved = real(path)
        if resolved in self.forbidden_files:
            return f"{path} is the worker's state file (or one of its companions)"
        for place in self.forbidden_dirs:
            if _inside(resolved, place) or _inside(place, resolved):
                return f"{path} is part of the worker's plugins or Python installation"
        if not any(_inside(resolved, place) for place in self.allowed):
            shown = ", ".join(self.allowed) or "none"
            return (
                f"{path} is outside the directories the worker allows connectors to use "
                f"({ALLOWED_PATHS}={shown})"
            )
        return None

    def check(self, config_def: ConfigDef, props: Mapping[str, Any]) -> dict[str, str]:
        """The problems of every local path the config names, by key (one per key): the keys
        ``config_def`` declares as local paths, and client overrides naming key or trust files.
        """
        kinds = {k.name: k.local_path for k in config_def.keys.values() if k.local_path}
        kinds.update({key: LocalPath.PATH for key in props if client_file_key(key)})
        problems: dict[str, str] = {}
        for name, kind in kinds.items():
            if props.get(name) is None:
                continue
            for path in kind.paths(props[name]):
                problem = self.problem(path)
                if problem is not None:
                    problems[name] = f"Invalid value {path} for configuration {name}: {problem}"
                    break
        return problems


def client_file_key(key: str) -> bool:
    """Whether a connector config key is a client override naming a local file."""
    for prefix in CLIENT_OVERRIDE_PREFIXES:
        if key.startswith(prefix):
            return key[len(prefix) :].strip().lower() in CLIENT_FILE_KEYS
    return False


__all__ = [
    "ALLOWED_PATHS",
    "CLIENT_FILE_KEYS",
    "LocalPaths",
    "client_file_key",
    "real",
]
