"""The ``${provider:path:key}`` scanner: Kafka's ConfigTransformer pattern, in linear time."""

from __future__ import annotations

import itertools
import random
import re
import time

import pytest

from connect_lite.api import ConfigData, ConfigProvider
from connect_lite.config.resolution import (
    ConfigResolver,
    Reference,
    references,
    replace_references,
)

KAFKA_PATTERN = re.compile(r"\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}")
"""ConfigTransformer.DEFAULT_PATTERN as Kafka spells it (groups 1, 3 and 4): the oracle."""


def kafka_references(value: str) -> list[Reference]:
    return [
        Reference(m.group(0), m.group(1), m.group(3) or "", m.group(4))
        for m in KAFKA_PATTERN.finditer(value)
    ]


def shown(ref: Reference) -> str:
    return f"<{ref.provider}|{ref.path}|{ref.key}>"


def kafka_replaced(value: str) -> str:
    return KAFKA_PATTERN.sub(lambda m: shown(kafka_references(m.group(0))[0]), value)


EDGE_CASES = [
    "",
    "plain",
    "${a:b:c:d}",  # a path, and a key holding a colon
    "${a:b:c}",
    "${a:b}",
    "${a}",  # no colon: not a reference
    "${:k}",
    "${:}",
    "${::}",
    "${a::k}",
    "${}",
    "${a:b",  # unterminated
    "${a:b${c:d}",  # an opening inside: the provider holds it
    "${${a:b}}",
    "$${a:b}",
    "${a}${b:c}",
    "${a}:x}",
    "x${a:b}y${c:d:e}z",
    "${a:b}}",
    "{${a:b}",
    "$ {a:b}",
    "${a\nb:c\nd}",
    "${:" * 300 + "}",
    "${" * 50 + "}",
    "${a" * 50 + ":}",
    "}" * 5 + "${a:b}" + "{" * 5,
]


@pytest.mark.parametrize("value", EDGE_CASES, ids=lambda v: repr(v[:24]))
def test_edge_cases_match_kafkas_pattern(value: str) -> None:
    assert references(value) == kafka_references(value)
    assert replace_references(value, shown) == kafka_replaced(value)


def test_the_forms_kafka_documents() -> None:
    assert references("${a:b:c:d}") == [Reference("${a:b:c:d}", "a", "b", "c:d")]
    assert references("${a}") == []
    assert references("${:k}") == [Reference("${:k}", "", "", "k")]
    assert references("${a:b${c:d}") == [Reference("${a:b${c:d}", "a", "b${c", "d")]
    assert references("${:" * 300) == []  # the reported value: 24 s with the pattern


def test_every_short_text_matches_kafkas_pattern() -> None:
    """Every text of up to 8 characters over the characters that matter."""
    for length in range(9):
        for chars in itertools.product("${}:a", repeat=length):
            value = "".join(chars)
            assert references(value) == kafka_references(value), value
            assert replace_references(value, shown) == kafka_replaced(value), value


def test_random_longer_texts_match_kafkas_pattern() -> None:
    rng = random.Random(37)
    pieces = ["${", "}", ":", "$", "{", "a", "bc", "/x/y", " ", "${p:", "${p:q:"]
    for _ in range(3000):
        value = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 40)))
        assert references(value) == kafka_references(value), value
        assert replace_references(value, shown) == kafka_replaced(value), value


ADVERSARIAL = {
    "openings and colons": "${:" * 100_000,
    "openings, one close": "${" * 150_000 + "}",
    "openings and colons, one close": "${:" * 100_000 + "}",
    "openings without colons": "${a" * 100_000 + "}",
    "colons, then a close": "${" + ":" * 300_000 + "}",
    "references without end": "${a:b}" * 50_000 + "${:" * 50_000,
}


@pytest.mark.parametrize("value", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_adversarial_texts_take_linear_time(value: str) -> None:
    """300 KB each: the old pattern took 24 s on 900 bytes, and grows as n^4. The bound is
    generous, so a loaded machine does not fail it; quadratic time would exceed it."""
    began = time.monotonic()
    references(value)
    replace_references(value, shown)
    assert time.monotonic() - began < 5


class _Fixed(ConfigProvider):
    def configure(self, config: dict[str, str]) -> None:
        pass

    def get(self, path: str, keys: set[str] | None = None) -> ConfigData:
        return ConfigData({key: f"{path}/{key}" for key in keys or ()})


def test_the_resolver_substitutes_past_an_adversarial_prefix() -> None:
    resolver = ConfigResolver({"p": _Fixed()})
    prefix = "${" * 20_000 + "}"  # openings that close without a colon: no reference
    began = time.monotonic()
    resolved = resolver.resolve({"x": prefix + "${p:dir:k}", "y": "${a:b:c:d} ${p:k}"})
    assert time.monotonic() - began < 5
    assert resolved.values == {"x": prefix + "dir/k", "y": "${a:b:c:d} /k"}
