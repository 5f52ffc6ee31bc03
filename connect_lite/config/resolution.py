"""Config provider references (KIP-297): ``${provider:path:key}`` and ``${provider:key}``.

Configs are stored and returned with their references; the values are resolved only when a
connector or task starts (and, in memory, when a config is validated). What a resolution
turned into text is remembered so it can be put back: task configs a connector generates are
stored with the references again, and the ``Redactor`` hides the values in logs and traces.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from connect_lite.api.config_provider import ConfigData, ConfigProvider
from connect_lite.api.errors import ConfigError

log = logging.getLogger(__name__)

PROVIDERS = "config.providers"
HIDDEN = "[hidden]"
REDACT_MIN_LENGTH = 4
"""Shorter values are left in free text (logs, traces, a value copied into another key):
they cannot be told from ordinary words. A key whose whole value was resolved gets its
reference back whatever the length."""
UNKNOWN_PROVIDERS_SHOWN = 3
"""Names in the warning about a key's references to providers that are not configured."""


def is_provider_key(key: str) -> bool:
    """``config.providers`` and its ``config.providers.<name>.*`` keys: never resolved, and
    ignored in connector configs (only the worker configures providers)."""
    return key == PROVIDERS or key.startswith(PROVIDERS + ".")


@dataclass(frozen=True)
class Reference:
    text: str
    provider: str
    path: str
    key: str


def references(value: str) -> list[Reference]:
    """Every reference in a value, configured provider or not."""
    return [ref for _, _, ref in _scan(value)]


def replace_references(value: str, replace: Callable[[Reference], str]) -> str:
    """``value`` with each reference replaced by what ``replace`` returns for it."""
    parts: list[str] = []
    done = 0
    for start, end, ref in _scan(value):
        parts += (value[done:start], replace(ref))
        done = end
    return "".join(parts) + value[done:] if parts else value


def _scan(value: str) -> Iterator[tuple[int, int, Reference]]:
    """The references in ``value``, left to right, with their start and end: what Kafka's
    ConfigTransformer pattern ``\\$\\{([^}]*?):(([^}]*?):)?([^}]*?)\\}`` finds, in linear time
    (that pattern backtracks in about n^4 on text such as ``${:${:${:...``).

    A reference opens with ``${`` and closes at the first ``}`` after it; the text between
    must hold a ``:``. The provider runs to the first ``:``, the path to a second one if there
    is one, and the key is the rest, colons included. An opening without both is no reference,
    and the search goes on from the character after its ``$``. The first ``}`` and ``:`` at or
    after a position are kept and only looked for again once passed, so each character is
    read a bounded number of times."""
    end = len(value)
    start = value.find("${")
    close = colon = -1
    while start >= 0:
        body = start + 2
        if close < body:
            close = value.find("}", body)
            if close < 0:
                return  # no later opening can close either
        if colon < body:
            colon = value.find(":", body)
            if colon < 0:
                colon = end  # none left: never looked for again
        if colon > close:
            start = value.find("${", start + 1)
            continue
        second = value.find(":", colon + 1, close)
        path, key = (
            ("", value[colon + 1 : close])
            if second < 0
            else (value[colon + 1 : second], value[second + 1 : close])
        )
        yield start, close + 1, Reference(value[start : close + 1], value[body:colon], path, key)
        start = value.find("${", close + 1)


class Concealer:
    """Replaces known values by their stand-ins in one pass, longest first, so a stand-in
    is never itself rewritten."""

    def __init__(self, stand_ins: Mapping[str, str] | None = None, min_length: int = 1) -> None:
        self._min_length = min_length
        self._stand_ins: dict[str, str] = {}
        self._pattern: re.Pattern[str] | None = None
        self._lock = threading.Lock()
        self.add(stand_ins or {})

    def add(self, stand_ins: Mapping[str, str]) -> None:
        known = self._stand_ins
        fresh = {
            value: stand_in
            for value, stand_in in stand_ins.items()
            if len(value) >= self._min_length and value != stand_in and value not in known
        }
        if not fresh:
            return
        with self._lock:
            for value, stand_in in fresh.items():
                self._stand_ins.setdefault(value, stand_in)
            ordered = sorted(self._stand_ins, key=len, reverse=True)
            self._pattern = re.compile("|".join(re.escape(value) for value in ordered))

    def __bool__(self) -> bool:
        return self._pattern is not None

    def exact(self, text: str) -> str:
        """The stand-in of ``text`` when it is, whole, a known value; else ``text``. For names
        kept as state (a topic, a source partition's values): concealing parts of them could
        merge two names into one."""
        return self._stand_ins.get(text, text)

    def conceal(self, text: str) -> str:
        pattern = self._pattern
        if pattern is None or not text:
            return text
        stand_ins = self._stand_ins
        return pattern.sub(lambda m: stand_ins[m.group(0)], text)


class Redactor(Concealer):
    """The worker's secrets: resolved values stand in as their references, passwords as
    ``[hidden]``. Log lines, status traces and validate answers pass through it."""

    def __init__(self) -> None:
        super().__init__(min_length=REDACT_MIN_LENGTH)

    def add_passwords(self, values: Iterable[str | None]) -> None:
        self.add({value: HIDDEN for value in values if value})


@dataclass(frozen=True)
class Resolved:
    """A config with its references replaced; ``conceal`` puts them back."""

    values: dict[str, str]
    concealer: Concealer = field(default_factory=Concealer)
    """Resolved values (of 4 characters or more) to their references, for free text."""
    ttl_ms: int | None = None
    errors: dict[str, str] = field(default_factory=dict)
    """Only from ``resolve_leniently``: the keys that could not be resolved, and why."""
    written: dict[str, str] = field(default_factory=dict)
    """The config as written, references and all."""
    unknown: dict[str, list[str]] = field(default_factory=dict)
    """The keys whose references name providers that ``config.providers`` does not list (their
    text is kept as written, as in Kafka), to those names in order: ``log_unknown_providers``
    says so, once where the caller chooses (a connector's start), not at every resolution."""

    def conceal(self, config: Mapping[str, str]) -> dict[str, str]:
        """``config`` (derived from ``values``, as a connector's task configs are) with the
        references back: a key still holding its resolved value gets its written value, as
        Kafka's reverse transform does; a resolved value copied into other text gets its
        reference in place."""
        shown: dict[str, str] = {}
        for key, value in config.items():
            written = self.written.get(key)
            if written is not None and value == self.values.get(key) != written:
                shown[key] = written
            else:
                shown[key] = self.concealer.conceal(value)
        return shown


def log_unknown_providers(resolved: Resolved, subject: str = "Config") -> None:
    """One WARN line per key of ``resolved`` whose references name providers that
    ``config.providers`` does not list, however many references it holds. ``subject`` starts
    the line (``Config``, in a connector's logging context; ``Worker config``)."""
    for key, names in resolved.unknown.items():
        shown = ", ".join(f"'{name}'" for name in names[:UNKNOWN_PROVIDERS_SHOWN])
        more = len(names) - UNKNOWN_PROVIDERS_SHOWN
        log.warning(
            "%s %s refers to config provider%s %s%s, which config.providers does not name; "
            "its text is used as written",
            subject,
            key,
            "s" if len(names) > 1 else "",
            shown,
            f" and {more} more" if more > 0 else "",
        )


class ConfigResolver:
    """The worker's configured providers, by name, and the resolution of references."""

    def __init__(
        self,
        providers: Mapping[str, ConfigProvider] | None = None,
        redactor: Redactor | None = None,
    ) -> None:
        self.providers = dict(providers or {})
        self.redactor = redactor if redactor is not None else Redactor()

    def resolve(self, config: Mapping[str, str]) -> Resolved:
        """Resolve every reference to a configured provider; ConfigError at the first that
        cannot be, naming the key and the provider (never a value)."""
        resolved = self.resolve_leniently(config)
        if resolved.errors:
            raise ConfigError(
                "\n".join(resolved.errors.values()),
                {key: [message] for key, message in resolved.errors.items()},
            )
        return resolved

    def resolve_leniently(self, config: Mapping[str, str | None]) -> Resolved:
        """Resolve what can be; a key that cannot keeps its text and is listed in ``errors``."""
        wanted: dict[tuple[str, str], set[str]] = {}
        unknown: dict[str, list[str]] = {}
        for key, value in config.items():
            for ref in self._known(key, value, unknown):
                wanted.setdefault((ref.provider, ref.path), set()).add(ref.key)
        fetched: dict[tuple[str, str, str], str | ConfigError] = {}
        ttls: list[int] = []
        for (provider, path), keys in wanted.items():
            ttls += self._fetch(provider, path, keys, fetched)
        values: dict[str, str] = {}
        stand_ins: dict[str, str] = {}
        errors: dict[str, str] = {}
        for key, value in config.items():
            if value is None:
                continue
            text, failure = self._substitute(key, value, fetched, stand_ins)
            if failure is not None:
                errors[key] = failure
                values[key] = value
            else:
                values[key] = text
        self.redactor.add(stand_ins)
        written = {key: value for key, value in config.items() if value is not None}
        concealer = Concealer(stand_ins, min_length=REDACT_MIN_LENGTH)
        ttl = min(ttls) if ttls else None
        return Resolved(values, concealer, ttl, errors, written, unknown)

    def close(self) -> None:
        for name, provider in self.providers.items():
            try:
                provider.close()
            except Exception:
                log.warning("Config provider %s failed to close", name, exc_info=True)

    def _known(self, key: str, value: str | None, unknown: dict[str, list[str]]) -> list[Reference]:
        """The references of a configured provider in ``value``; the names of the others go
        to ``unknown[key]``."""
        if value is None or "${" not in value:
            return []
        refs = references(value)
        names = list(dict.fromkeys(r.provider for r in refs if r.provider not in self.providers))
        if names:
            unknown[key] = names
        return [ref for ref in refs if ref.provider in self.providers]

    def _fetch(
        self,
        provider: str,
        path: str,
        keys: set[str],
        into: dict[tuple[str, str, str], str | ConfigError],
    ) -> list[int]:
        """Ask the provider once per path; if that fails, key by key, to blame the right one."""
        try:
            found = [(keys, self._get(provider, path, keys))]
        except ConfigError:
            found = []
            for key in sorted(keys):
                try:
                    found.append(({key}, self._get(provider, path, {key})))
                except ConfigError as error:
                    into[(provider, path, key)] = error
        ttls = []
        for asked, data in found:
            for key in asked:
                value = data.data.get(key)
                into[(provider, path, key)] = (
                    value if value is not None else ConfigError(f"No value for key {key}")
                )
            if data.ttl_ms is not None:
                ttls.append(data.ttl_ms)
        return ttls

    def _get(self, provider: str, path: str, keys: set[str]) -> ConfigData:
        try:
            data = self.providers[provider].get(path, set(keys))
        except ConfigError:
            raise
        except Exception as exc:  # a third-party provider's own failure
            # Only its type: its text is not bound by the API's promise to name no value.
            log.debug("Config provider %s failed", provider, exc_info=True)
            raise ConfigError(f"the provider failed with {type(exc).__name__}") from exc
        if not isinstance(data, ConfigData):
            raise ConfigError(f"get() returned {type(data).__name__}, not ConfigData")
        return data

    def _substitute(
        self,
        key: str,
        value: str,
        fetched: Mapping[tuple[str, str, str], str | ConfigError],
        stand_ins: dict[str, str],
    ) -> tuple[str, str | None]:
        failure: list[str] = []

        def replace(ref: Reference) -> str:
            if ref.provider not in self.providers:
                return ref.text
            got = fetched.get((ref.provider, ref.path, ref.key))
            if isinstance(got, ConfigError) or got is None:
                failure.append(
                    f"Could not resolve {ref.text} in config {key} with config provider "
                    f"{ref.provider}: {got}"
                )
                return ref.text
            if got:
                stand_ins.setdefault(got, ref.text)
            return got

        text = replace_references(value, replace) if "${" in value else value
        return text, (failure[0] if failure else None)


__all__ = [
    "HIDDEN",
    "PROVIDERS",
    "Concealer",
    "ConfigResolver",
    "Redactor",
    "Reference",
    "Resolved",
    "is_provider_key",
    "log_unknown_providers",
    "references",
    "replace_references",
]
