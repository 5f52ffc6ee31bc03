"""Users' regular expressions, matched so that no pattern can hold the worker process.

A pattern from a user (``topics.regex``, ``allowlist.pattern``...) is matched by RE2, in time
linear in the text, whenever RE2 gives the same answer as Python's ``re``, whose semantics
the worker has always used. Otherwise (lookarounds, backreferences, possessive quantifiers,
a program too large for the text) it is matched by ``re`` in a short-lived child process
stopped after ``TIMEOUT_MS``: a thread could not stop it, as ``re`` holds the GIL.

Matches are whole-text matches, as Kafka's ``Pattern.matcher(text).matches()``. Checking
that a pattern compiles stays with ``re``: its parser is linear and written in Python, so
it gives the GIL up as it goes.

This module is the one home of the ``re2`` dependency (google-re2).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from collections.abc import Sequence
from typing import Any

import re2

from connect_lite.api.errors import ConnectError, TimeoutError_

TIMEOUT_MS = 500
"""How long a pattern RE2 cannot take may run in its child process (a topic name takes
microseconds; only a pattern that backtracks badly comes near)."""
START_ALLOWANCE_S = 2.0
"""More time for the child process to start, on a loaded machine, before it is killed."""
MAX_CHILDREN = 4
"""Child processes at once; more requests wait for one to end."""
RE2_BUDGET = 10_000_000
"""Most program size times text length left to RE2, which can take that many steps (1 to
15 ns each, measured): about 0.15 s at most. A longer match goes to the child and its limit."""
_SHOWN = 80
"""Characters of a pattern quoted in a message."""

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a pattern RE2 refuses is expected, not an error
_OPTIONS.never_capture = True

_CHILDREN = threading.BoundedSemaphore(MAX_CHILDREN)
_CHILD = r"""
import json, re, signal, sys
signal.signal(signal.SIGALRM, lambda *_: sys.exit(124))
signal.setitimer(signal.ITIMER_REAL, float(sys.argv[1]))
job = json.load(sys.stdin)
pattern = re.compile(job["pattern"])
json.dump([pattern.fullmatch(text) is not None for text in job["texts"]], sys.stdout)
"""
"""The child: ``re`` interrupts a match to run a signal handler, which ends the process."""
_EXPIRED = 124


class RegexTimeoutError(TimeoutError_):
    """A pattern took longer than its time limit to match."""


def compile_check(pattern: str) -> str | None:
    """Why ``pattern`` is not a valid regular expression, or None when it is."""
    try:
        re.compile(pattern)
    except re.error as error:
        return str(error)
    except RecursionError:
        return "too many nested groups"
    except OverflowError as error:  # a repetition count past the engine's limit
        return str(error)
    return None


def full_match(pattern: str, text: str, *, timeout_ms: int | None = None) -> bool:
    """Whether ``pattern`` matches the whole of ``text``; ``re.error`` for an invalid pattern,
    RegexTimeoutError when it cannot be matched within ``timeout_ms`` (default TIMEOUT_MS)."""
    return UserRegex(pattern, timeout_ms=timeout_ms).full_match(text)


class UserRegex:
    """One user's pattern, checked once, to match any number of texts."""

    def __init__(self, pattern: str, *, timeout_ms: int | None = None) -> None:
        problem = compile_check(pattern)
        if problem is not None:
            raise re.error(problem)
        self.pattern = pattern
        self.timeout_ms = TIMEOUT_MS if timeout_ms is None else timeout_ms
        self._re2 = _re2_twin(pattern)

    def full_match(self, text: str) -> bool:
        return self.full_matches([text])[0]

    def full_matches(self, texts: Sequence[str]) -> list[bool]:
        """Whether the pattern matches each whole text; the texts RE2 cannot take share one
        child process and its time limit. RegexTimeoutError past it."""
        found: list[bool | None] = [self._linear(text) for text in texts]
        rest = [text for text, known in zip(texts, found, strict=True) if known is None]
        answers = iter(self._in_child(rest) if rest else [])
        return [next(answers) if known is None else known for known in found]

    def timeout_message(self) -> str:
        """What a validation error says when the pattern timed out."""
        shown = self.pattern if len(self.pattern) <= _SHOWN else self.pattern[:_SHOWN] + "..."
        return (
            f"The regex '{shown}' took longer than {self.timeout_ms} ms to match; simplify it "
            "(a pattern without lookarounds or backreferences is matched in linear time)"
        )

    def _linear(self, text: str) -> bool | None:
        """RE2's answer, or None when RE2's could differ from ``re``'s or take too long."""
        regex = self._re2
        if regex is None or not _plain(text) or regex.programsize * len(text) > RE2_BUDGET:
            return None
        return regex.fullmatch(text) is not None

    def _in_child(self, texts: list[str]) -> list[bool]:
        limit = self.timeout_ms / 1000
        job = json.dumps({"pattern": self.pattern, "texts": texts})
        command = [sys.executable, "-I", "-S", "-c", _CHILD, str(limit)]
        with _CHILDREN:
            try:
                done = subprocess.run(
                    command,
                    input=job,
                    capture_output=True,
                    text=True,
                    timeout=limit + START_ALLOWANCE_S,
                    check=False,
                )
            except subprocess.TimeoutExpired:  # killed and reaped by run()
                raise RegexTimeoutError(self.timeout_message()) from None
        if done.returncode == _EXPIRED:
            raise RegexTimeoutError(self.timeout_message())
        if done.returncode != 0:
            raise ConnectError(
                f"Matching a regex in a child process failed (exit {done.returncode}): "
                + done.stderr.strip()[-500:]
            )
        answers = json.loads(done.stdout)
        return [bool(answer) for answer in answers]


def _re2_twin(pattern: str) -> Any:
    """``pattern`` compiled by RE2 when, on a plain text (see ``_plain``), it matches as
    Python's ``re`` does; None when RE2 refuses it or might read it differently.

    The pattern must be ASCII: RE2 folds case differently for a few letters (U+0130 and
    U+0131, the dotted capital and dotless small i).
    ``{,n}`` is a repetition in ``re`` but text in RE2, and ``[[:alpha:]]`` a POSIX class in
    RE2 but a set in ``re``: patterns holding either go to the child. Every other construct
    both accept means the same (tested against ``re`` on generated patterns)."""
    if not pattern.isascii() or "{," in pattern or "[:" in pattern:
        return None
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error:
        return None


def _plain(text: str) -> bool:
    """Printable ASCII, and not empty: where ``\\s``, ``\\w``, ``\\d``, ``$`` and ``\\B`` mean the
    same in RE2 and ``re`` (``re``'s ``\\s`` also takes ``\\v`` and ``\\x1c``-``\\x1f``, its
    ``$`` also matches before a final newline, and its ``\\B`` never matches an empty text)."""
    return text != "" and text.isascii() and text.isprintable()


__all__ = [
    "MAX_CHILDREN",
    "TIMEOUT_MS",
    "RegexTimeoutError",
    "UserRegex",
    "compile_check",
    "full_match",
]
