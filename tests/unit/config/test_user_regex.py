"""Users' regexes: RE2 where it answers as Python's re does, else a child process with a limit."""

from __future__ import annotations

import random
import re
import time
import warnings

import pytest

from connect_lite.config import user_regex
from connect_lite.config.user_regex import (
    RegexTimeoutError,
    UserRegex,
    compile_check,
    full_match,
)


def used_re2(pattern: str, text: str) -> bool:
    return UserRegex(pattern)._linear(text) is not None


def test_a_pattern_that_backtracks_badly_is_matched_by_re2() -> None:
    """The review's case: topics.regex=(a+)+b against a 28-character DLQ name took 9.5 s."""
    dlq = "a" * 28
    assert used_re2("(a+)+b", dlq)
    began = time.monotonic()
    assert not full_match("(a+)+b", "a" * 5000)
    assert not full_match("(a+)+b", dlq)
    assert full_match("(a+)+b", dlq + "b")
    assert time.monotonic() - began < 2


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        ("^(?!_).*", "_confluent", False),  # a lookahead: RE2 has none
        ("^(?!_).*", "orders", True),
        (r"(a)\1", "aa", True),  # a backreference
        ("a++b", "aab", True),  # possessive
        ("a{,3}", "aaa", True),  # re: a repetition; RE2: text
        ("a{,3}", "a{,3}", False),
        ("[[:alpha:]]+", "abc", False),  # re: a set of '[', ':', 'a', 'l', 'p', 'h'
        ("[[:alpha:]]+", "a]]", True),
        ("(?i)\u0130", "i", True),  # RE2 does not fold İ to i
        (r"\s", "\x0b", True),  # re's \s takes \v; RE2's does not
        (r"\s", "\x1c", True),
        (r"\B", "", False),  # re's \B never matches an empty text
        (r"a$\n", "a\n", True),  # re's $ matches before a final newline
        (r"\w+", "données", True),  # re's \w is Unicode
        (r"\d", "\u0663", True),
        ("a{1001}", "a" * 1001, True),  # a count RE2 refuses
    ],
)
def test_where_re2_would_differ_the_child_answers_as_re(
    pattern: str, text: str, expected: bool
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # re on nested sets
        assert not used_re2(pattern, text)
        assert full_match(pattern, text) is expected
        assert (re.fullmatch(pattern, text) is not None) is expected


def test_a_pattern_past_its_limit_raises_with_a_message_for_the_user() -> None:
    regex = UserRegex("(a+)+(?!x)b", timeout_ms=200)  # a lookahead sends it to the child
    began = time.monotonic()
    with pytest.raises(RegexTimeoutError) as raised:
        regex.full_match("a" * 40)  # hours with re
    assert time.monotonic() - began < 2 + user_regex.START_ALLOWANCE_S
    assert str(raised.value) == (
        "The regex '(a+)+(?!x)b' took longer than 200 ms to match; simplify it (a pattern "
        "without lookarounds or backreferences is matched in linear time)"
    )


def test_a_long_pattern_is_quoted_shortened() -> None:
    message = UserRegex("(?!x)" + "a" * 500).timeout_message()
    assert "'(?!x)" + "a" * 75 + "...'" in message


def test_texts_re2_cannot_take_share_one_child() -> None:
    regex = UserRegex("^(?!_)[a-z_.]*")
    texts = ["orders", "_schemas", "payments", ""]
    assert regex.full_matches(texts) == [True, False, True, True]
    assert UserRegex(r"\w+").full_matches(["ab", "", "a b", "é"]) == [True, False, False, True]


def test_a_match_past_re2s_budget_goes_to_the_child(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(user_regex, "RE2_BUDGET", 10)
    assert not used_re2("[a-z]+", "abcdefghijkl")
    assert full_match("[a-z]+", "abcdefghijkl")


def test_invalid_patterns_are_refused_as_re_refuses_them() -> None:
    assert compile_check("topic-[0-9]+") is None
    assert compile_check("(") == "missing ), unterminated subpattern at position 0"
    assert compile_check("(" * 5000 + ")" * 5000) == "too many nested groups"
    assert compile_check("a{4294967296}") == "the repetition number is too large"
    assert compile_check(r"\p{L}") is not None  # RE2 knows it; re does not
    with pytest.raises(re.error):
        UserRegex("(")


# Generated patterns: wherever RE2 answers, it answers as re does.

ATOMS = [
    "a", "b", "ab", ".", "[ab]", "[^a]", "[a-c]", "[-a]", "[]a]", "[\\]a]", r"\d", r"\w",
    r"\s", r"\D", r"\W", r"\S", r"[\w-]", r"[^\s]", r"\.", r"\-", " ", "_", "1", "A",
    "(?i:a)", "(?i)", "(?s)", "(?m)", "(?-i:A)", "[[a]", "{", "x{}", "a{ 2}", "\\x41",
]  # fmt: skip
ANCHORS = ["^", "$", r"\A", r"\b", r"\B"]
QUANTIFIERS = ["*", "+", "?", "*?", "+?", "??", "{2}", "{1,3}", "{2,}", "{0}", "{0,1}?"]
TEXT_CHARS = "aabAB1_ -.\t"


def _pattern(rng: random.Random, depth: int = 0) -> str:
    parts: list[str] = []
    for _ in range(rng.randint(1, 4)):
        roll = rng.random()
        if roll < 0.15 and depth < 2:
            part = rng.choice(["(", "(?:", "(?P<g>" if "(?P<g>" not in parts else "("])
            part += "|".join(_pattern(rng, depth + 1) for _ in range(rng.randint(1, 2))) + ")"
        elif roll < 0.25:
            part = rng.choice(ANCHORS)
        else:
            part = rng.choice(ATOMS)
        if part not in ANCHORS and not part.startswith("(?") and rng.random() < 0.35:
            part += rng.choice(QUANTIFIERS)
        parts.append(part)
    return "|".join(parts) if rng.random() < 0.1 else "".join(parts)


def test_generated_patterns_match_as_re_does() -> None:
    rng = random.Random(37)
    compared = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        for _ in range(4000):
            pattern = _pattern(rng)
            try:
                python = re.compile(pattern)
            except re.error:
                continue
            regex = UserRegex(pattern)
            for _ in range(6):
                text = "".join(rng.choice(TEXT_CHARS) for _ in range(rng.randint(0, 6)))
                answer = regex._linear(text)
                if answer is not None:
                    compared += 1
                    expected = python.fullmatch(text) is not None
                    assert answer is expected, (pattern, text)
    assert compared > 10_000  # most go to RE2: the test tests something
