"""The built-in config providers, under Kafka's class names: file, directory and environment.

Each reads only what its ``allowed.paths`` (file, directory) or ``allowlist.pattern``
(environment) permits, and its errors name paths and keys, never a value."""

from __future__ import annotations

import os
import re

import connect_lite
from connect_lite.api.config_provider import ConfigData, ConfigProvider
from connect_lite.api.errors import ConfigError
from connect_lite.config.properties import load_properties
from connect_lite.config.user_regex import RegexTimeoutError, UserRegex

_KAFKA_PACKAGE = "org.apache.kafka.common.config.provider."
ALLOWED_PATHS = "allowed.paths"
ALLOWLIST_PATTERN = "allowlist.pattern"


class _AllowedPaths:
    """Kafka's ``allowed.paths``: absolute paths a provider may read under (all when unset).

    Paths are compared after symlinks are resolved, whole component by component, so
    ``/etc/secrets-other`` is not under ``/etc/secrets`` and a link cannot lead out."""

    def __init__(self, setting: str | None) -> None:
        self.roots: list[str] | None = None
        if setting is None or not setting.strip():
            return
        roots = [part.strip() for part in setting.split(",") if part.strip()]
        for root in roots:
            if not os.path.isabs(root):
                raise ConfigError(f"Path {root} in {ALLOWED_PATHS} is not absolute")
        self.roots = [os.path.realpath(root) for root in roots]

    def check(self, path: str) -> str:
        """The path to read; ConfigError when it is outside every allowed root. Without
        roots any path goes, relative ones too, as in Kafka."""
        if self.roots is None:
            return path
        real = os.path.realpath(path)
        if not os.path.isabs(path) or not any(_is_under(real, root) for root in self.roots):
            raise ConfigError(f"Path {path} is not allowed by {ALLOWED_PATHS}")
        return real


def _is_under(path: str, root: str) -> bool:
    return os.path.commonpath([path, root]) == root


def _pick(data: dict[str, str], keys: set[str] | None, where: str) -> dict[str, str]:
    if keys is None:
        return data
    missing = sorted(keys - data.keys())
    if missing:
        raise ConfigError(f"No key {', '.join(missing)} in {where}")
    return {key: data[key] for key in keys}


class _PathProvider(ConfigProvider):
    """A provider that reads files, only under its ``allowed.paths``."""

    def __init__(self) -> None:
        self._allowed = _AllowedPaths(None)

    def version(self) -> str:
        return connect_lite.__version__

    def configure(self, config: dict[str, str]) -> None:
        self._allowed = _AllowedPaths(config.get(ALLOWED_PATHS))


class FileConfigProvider(_PathProvider):
    """``${file:/path/to/file.properties:key}``: a key of a Java properties file."""

    __connect_class_name__ = _KAFKA_PACKAGE + "FileConfigProvider"

    def get(self, path: str, keys: set[str] | None = None) -> ConfigData:
        if not path:
            raise ConfigError("The file provider needs a path: ${file:/path/file.properties:key}")
        real = self._allowed.check(path)
        try:
            data = load_properties(real)
        except OSError as exc:
            raise ConfigError(
                f"Could not read properties from file {path}: {exc.strerror}"
            ) from None
        return ConfigData(_pick(data, keys, f"file {path}"))


class DirectoryConfigProvider(_PathProvider):
    """``${dir:/path/to/dir:name}``: the content of file ``name`` in a directory, as
    Kubernetes mounts secrets. Only regular files directly in the directory count."""

    __connect_class_name__ = _KAFKA_PACKAGE + "DirectoryConfigProvider"

    def get(self, path: str, keys: set[str] | None = None) -> ConfigData:
        if not path:
            raise ConfigError("The directory provider needs a path: ${dir:/path/dir:file}")
        real = self._allowed.check(path)
        try:
            names = keys if keys is not None else set(os.listdir(real))
        except OSError as exc:
            raise ConfigError(f"Could not list directory {path}: {exc.strerror}") from None
        data: dict[str, str] = {}
        for name in sorted(names):
            if os.sep in name or name in (".", ".."):
                raise ConfigError(f"No file {name} in directory {path}")
            file = os.path.join(real, name)
            if os.path.islink(file):  # a link may lead out of allowed.paths: check its target
                try:
                    file = self._allowed.check(os.path.realpath(file))
                except ConfigError:
                    raise ConfigError(
                        f"File {name} in directory {path} links outside {ALLOWED_PATHS}"
                    ) from None
            if not os.path.isfile(file):
                if keys is None:
                    continue
                raise ConfigError(f"No file {name} in directory {path}")
            try:
                with open(file, encoding="utf-8") as handle:
                    data[name] = handle.read()
            except (OSError, UnicodeDecodeError) as exc:
                raise ConfigError(
                    f"Could not read file {name} in directory {path}: {type(exc).__name__}"
                ) from None
        return ConfigData(data)


class EnvVarConfigProvider(ConfigProvider):
    """``${env:NAME}``: an environment variable whose name matches ``allowlist.pattern``."""

    __connect_class_name__ = _KAFKA_PACKAGE + "EnvVarConfigProvider"

    def __init__(self) -> None:
        self._allowed: UserRegex | None = None

    def version(self) -> str:
        return connect_lite.__version__

    def configure(self, config: dict[str, str]) -> None:
        pattern = config.get(ALLOWLIST_PATTERN)
        try:
            self._allowed = UserRegex(pattern) if pattern is not None else None
        except re.error as exc:
            raise ConfigError(f"Invalid {ALLOWLIST_PATTERN} {pattern}: {exc}") from None

    def get(self, path: str, keys: set[str] | None = None) -> ConfigData:
        if path:
            raise ConfigError(
                f"Path is not supported for EnvVarConfigProvider, invalid value '{path}'"
            )
        names = list(os.environ)
        permitted = self._permitted(names + sorted(keys or ()))
        allowed = {name: os.environ[name] for name in names if permitted[name]}
        if keys is not None:
            refused = sorted(k for k in keys if not permitted[k])
            if refused:
                raise ConfigError(
                    f"Environment variable {', '.join(refused)} is not allowed by "
                    f"{ALLOWLIST_PATTERN}"
                )
        return ConfigData(_pick(allowed, keys, "the environment"))

    def _permitted(self, names: list[str]) -> dict[str, bool]:
        """Whether ``allowlist.pattern`` permits each name, matched in one go (a pattern RE2
        cannot take runs in a child process, with a time limit)."""
        if self._allowed is None:
            return dict.fromkeys(names, True)
        try:
            return dict(zip(names, self._allowed.full_matches(names), strict=True))
        except RegexTimeoutError:
            raise ConfigError(f"{ALLOWLIST_PATTERN}: {self._allowed.timeout_message()}") from None


__all__ = ["DirectoryConfigProvider", "EnvVarConfigProvider", "FileConfigProvider"]
