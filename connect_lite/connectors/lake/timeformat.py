"""Joda-Time ``path.format`` patterns (Confluent's TimeBasedPartitioner) as the Java
DateTimeFormatter patterns Spark's ``date_format`` takes."""

from __future__ import annotations

_LETTERS = {
    "G": "G",  # era
    "Y": "y",  # Joda year-of-era; Java's Y is the week-based year
    "y": "y",  # year (the same as year-of-era for years after 1 BC)
    "M": "M",  # month of year
    "D": "D",  # day of year
    "d": "d",  # day of month
    "E": "E",  # day of week, text
    "a": "a",  # halfday of day
    "K": "K",  # hour of halfday (0-11)
    "h": "h",  # clockhour of halfday (1-12)
    "H": "H",  # hour of day (0-23)
    "k": "k",  # clockhour of day (1-24)
    "m": "m",  # minute of hour
    "s": "s",  # second of minute
    "S": "S",  # fraction of second
}
_UNSUPPORTED = {
    "C": "century of era has no Spark pattern letter",
    "x": "week-based years are not supported by Spark's date_format",
    "w": "week-based fields are not supported by Spark's date_format",
    "e": "day of week as a number is not supported by Spark's date_format",
    "z": "time zone names are not supported: directories are formatted in `timezone`",
    "Z": "time zone offsets are not supported: directories are formatted in `timezone`",
}


def joda_to_java(pattern: str) -> str:
    """The Java DateTimeFormatter pattern that formats as the Joda pattern does.

    Literal text (quoted, or any non-letter) is emitted quoted, since Java reserves some
    characters Joda treats as text (``[``, ``]``, ``{``, ``}``, ``#``). Raises ValueError
    naming the first letter without an equivalent."""
    out: list[str] = []
    literal: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "'":
            text, i = _quoted(pattern, i)
            literal.append(text)
            continue
        if not ("a" <= c <= "z" or "A" <= c <= "Z"):
            literal.append(c)
            i += 1
            continue
        j = i
        while j < n and pattern[j] == c:
            j += 1
        if c in _UNSUPPORTED:
            raise ValueError(f"pattern letter '{c}' at {i}: {_UNSUPPORTED[c]}")
        if c not in _LETTERS:
            raise ValueError(f"unknown pattern letter '{c}' at {i}")
        if literal:
            out.append(_quote("".join(literal)))
            literal = []
        out.append(_LETTERS[c] * (j - i))
        i = j
    if literal:
        out.append(_quote("".join(literal)))
    return "".join(out)


def _quoted(pattern: str, start: int) -> tuple[str, int]:
    """The text of the quoted section at ``start`` and the index after it (``''`` is a
    quote, inside a section or on its own)."""
    if pattern.startswith("''", start):
        return "'", start + 2
    text: list[str] = []
    i = start + 1
    while i < len(pattern):
        if pattern[i] == "'":
            if pattern.startswith("''", i):
                text.append("'")
                i += 2
                continue
            return "".join(text), i + 1
        text.append(pattern[i])
        i += 1
    raise ValueError(f"unterminated quote at {start}")


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
