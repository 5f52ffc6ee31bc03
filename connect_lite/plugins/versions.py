"""Plugin versions: PEP 440 ordering, Maven version ranges and choosing an installed version."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from packaging.version import InvalidVersion, Version

from connect_lite.api.errors import ConfigError
from connect_lite.plugins.types import PluginDesc

LATEST = "latest"


class InvalidVersionSpecError(ConfigError):
    """A version requirement that is not a valid Maven version specification."""


def version_key(version: str) -> tuple[int, Any]:
    """Sort key: PEP 440 order; a version that does not parse sorts before every one that does."""
    try:
        return (1, Version(version))
    except InvalidVersion:
        return (0, version)


def sorted_versions(versions: Iterable[str]) -> list[str]:
    """Distinct version strings, ascending."""
    return sorted(set(versions), key=version_key)


def compare(a: str, b: str) -> int:
    """-1, 0 or 1 as ``a`` sorts before, with or after ``b`` (so ``1.0 == 1.0.0``)."""
    ka, kb = version_key(a), version_key(b)
    return (ka > kb) - (ka < kb)


@dataclass(frozen=True)
class Restriction:
    """One set of a Maven range: bounds (None = unbounded) and their inclusivity."""

    lower: str | None
    lower_inclusive: bool
    upper: str | None
    upper_inclusive: bool

    def contains(self, version: str) -> bool:
        if self.lower is not None:
            c = compare(self.lower, version)
            if c > 0 or (c == 0 and not self.lower_inclusive):
                return False
        if self.upper is not None:
            c = compare(self.upper, version)
            if c < 0 or (c == 0 and not self.upper_inclusive):
                return False
        return True

    def __str__(self) -> str:
        if self.lower is not None and self.lower == self.upper:
            return f"[{self.lower}]"
        return (
            ("[" if self.lower_inclusive else "(")
            + (self.lower or "")
            + ","
            + (self.upper or "")
            + ("]" if self.upper_inclusive else ")")
        )


@dataclass(frozen=True)
class VersionRange:
    """A hard version requirement: the union of one or more restrictions."""

    restrictions: tuple[Restriction, ...]

    def contains(self, version: str) -> bool:
        return any(r.contains(version) for r in self.restrictions)

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.restrictions)


def _parse_restriction(spec: str) -> Restriction:
    lower_inclusive, upper_inclusive = spec.startswith("["), spec.endswith("]")
    body = spec[1:-1].strip()
    if "," not in body:
        if not (lower_inclusive and upper_inclusive):
            raise InvalidVersionSpecError(f"Single version must be surrounded by []: {spec}")
        return Restriction(body, True, body, True)
    low_text, high_text = (part.strip() for part in body.split(",", 1))
    lower, upper = low_text or None, high_text or None
    if lower is not None and upper is not None:
        c = compare(upper, lower)
        if c < 0 or (c == 0 and not (lower_inclusive and upper_inclusive)):
            raise InvalidVersionSpecError(f"Range defies version ordering: {spec}")
    return Restriction(lower, lower_inclusive, upper, upper_inclusive)


def _closing_bracket(text: str) -> int:
    ends = [i for i in (text.find(")"), text.find("]")) if i >= 0]
    return min(ends) if ends else -1


def parse_maven_spec(spec: str) -> tuple[tuple[Restriction, ...], str | None]:
    """Maven's ``VersionRange.createFromVersionSpec``: (bracketed sets, bare version or None)."""
    restrictions: list[Restriction] = []
    rest = spec
    upper: str | None = None
    while rest.startswith(("[", "(")):
        end = _closing_bracket(rest)
        if end < 0:
            raise InvalidVersionSpecError(f"Unbounded range: {spec}")
        restriction = _parse_restriction(rest[: end + 1])
        if upper is not None and (
            restriction.lower is None or compare(restriction.lower, upper) < 0
        ):
            raise InvalidVersionSpecError(f"Ranges overlap: {spec}")
        restrictions.append(restriction)
        upper = restriction.upper
        rest = rest[end + 1 :].strip()
        if rest.startswith(","):
            rest = rest[1:].strip()
    if rest and restrictions:
        raise InvalidVersionSpecError(
            f"Only fully-qualified sets allowed in multiple set scenario: {spec}"
        )
    return tuple(restrictions), rest or None


def parse_requirement(requirement: str | None) -> VersionRange | None:
    """The KIP-891 reading of a version requirement; None means "the latest".

    Unset, empty or ``latest``: no requirement. A bracketed range or union of ranges is used
    as given; a bare version ``v`` is a hard pin, read as ``[v]``. Invalid specifications
    raise InvalidVersionSpecError with Maven's message.
    """
    if requirement is None or requirement.strip() in ("", LATEST):
        return None
    spec = requirement.strip()
    restrictions, bare = parse_maven_spec(spec)
    if bare is not None:
        restrictions, _ = parse_maven_spec(f"[{spec}]")
    return VersionRange(restrictions)


def select_version(
    descs: Sequence[PluginDesc], requirement: str | None, prefer_location: str | None = None
) -> PluginDesc:
    """The installed copy that best satisfies a version requirement.

    The highest matching version wins, except that a matching copy in ``prefer_location``
    (the location of the connector a converter, transform or predicate is loaded for) is
    preferred over copies elsewhere, so bundles stay together. ``descs`` holds the copies of
    one class. No match raises ConfigError listing the installed versions, ascending.
    """
    if not descs:
        raise ValueError("select_version needs at least one installed copy")
    wanted = parse_requirement(requirement)
    ordered = sorted(descs, key=lambda d: version_key(d.version))
    matches = [d for d in ordered if wanted is None or wanted.contains(d.version)]
    bundled = [d for d in matches if prefer_location and d.location == prefer_location]
    if bundled or matches:
        return (bundled or matches)[-1]
    available = ", ".join(sorted_versions(d.version for d in descs))
    raise ConfigError(
        f"Plugin {descs[0].class_name} not found that matches the version range {wanted}, "
        f"available versions: [{available}]"
    )


__all__ = [
    "LATEST",
    "InvalidVersionSpecError",
    "Restriction",
    "VersionRange",
    "compare",
    "parse_maven_spec",
    "parse_requirement",
    "select_version",
    "sorted_versions",
    "version_key",
]
