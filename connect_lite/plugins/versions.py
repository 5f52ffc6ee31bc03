"""Plugin versions: PEP 440 ordering and choosing one installed version for a requirement."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from packaging.version import InvalidVersion, Version

from connect_lite.api.errors import ConfigError
from connect_lite.plugins.types import PluginDesc

LATEST = "latest"


def version_key(version: str) -> tuple[int, Any]:
    """Sort key: PEP 440 order; a version that does not parse sorts before every one that does."""
    try:
        return (1, Version(version))
    except InvalidVersion:
        return (0, version)


def sorted_versions(versions: Iterable[str]) -> list[str]:
    """Distinct version strings, ascending."""
    return sorted(set(versions), key=version_key)


def _same_version(installed: str, wanted: str) -> bool:
    a, b = version_key(installed), version_key(wanted)
    return a[0] == b[0] and a[1] == b[1]


def _exact_requirement(requirement: str) -> str:
    """The version of a bare ``1.2.0`` or single-version ``[1.2.0]`` requirement."""
    spec = requirement.strip()
    if spec.startswith("[") and spec.endswith("]") and "," not in spec:
        return spec[1:-1].strip()
    if any(c in spec for c in "[](),"):
        raise ConfigError(f"Invalid version specification: {requirement}")
    return spec


def select_version(descs: Sequence[PluginDesc], requirement: str | None) -> PluginDesc:
    """The installed copy that best satisfies a version requirement.

    ``None`` or ``"latest"`` picks the highest version; a bare version (or ``[v]``) must match
    exactly, compared as PEP 440 versions where they parse (so ``1.0`` matches ``1.0.0``).
    Maven ranges are not supported yet and are rejected as an invalid specification.
    ``descs`` holds the copies of one class, all of one plugin type.
    """
    if not descs:
        raise ValueError("select_version needs at least one installed copy")
    ordered = sorted(descs, key=lambda d: version_key(d.version))
    if requirement is None or requirement.strip() == LATEST:
        return ordered[-1]
    wanted = _exact_requirement(requirement)
    matches = [d for d in ordered if _same_version(d.version, wanted)]
    if matches:
        return matches[-1]
    available = ", ".join(sorted_versions(d.version for d in descs))
    raise ConfigError(
        f"Plugin {descs[0].class_name} not found that matches the version range [{wanted}], "
        f"available versions: [{available}]"
    )


__all__ = ["LATEST", "select_version", "sorted_versions", "version_key"]
