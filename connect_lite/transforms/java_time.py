"""Java ``SimpleDateFormat`` patterns in UTC, for TimestampConverter and TimestampRouter.

Kafka's transforms take their date formats as ``java.text.SimpleDateFormat`` patterns and
run them in UTC. Python's ``strftime`` differs in almost every letter, so a pattern is
compiled here into tokens once and then formatted or parsed by hand. Instants are epoch
milliseconds, the resolution of ``java.util.Date``.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_LEGAL_LETTERS = frozenset("GyMdkHmsSEDFwWahKzZYuXL")
_UNSUPPORTED_LETTERS = frozenset("YwW")  # week-based fields: legal in Java, not handled here
_NUMERIC_LETTERS = frozenset("ydkHmsSDFuhK")
_MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_ZONE = r"(Z|[+-]\d{2}(?::?\d{2})?|(?:UTC|GMT|UT)(?:[+-]\d{1,2}(?::?\d{2})?)?)"


class PatternError(ValueError):
    """The pattern is not a valid SimpleDateFormat pattern (Java's IllegalArgumentException)."""


class UnsupportedPatternError(PatternError):
    """The pattern is valid in Java but uses a letter connect-lite does not implement."""


@dataclass(frozen=True)
class _Token:
    letter: str  # "" for literal text
    count: int = 0
    text: str = ""

    def is_numeric(self) -> bool:
        if self.letter in _NUMERIC_LETTERS:
            return True
        return self.letter in ("M", "L") and self.count < 3


def _tokenize(pattern: str) -> list[_Token]:
    tokens: list[_Token] = []
    literal: list[str] = []
    i, n = 0, len(pattern)

    def flush() -> None:
        if literal:
            tokens.append(_Token("", text="".join(literal)))
            literal.clear()

    while i < n:
        char = pattern[i]
        if char == "'":
            if pattern[i + 1 : i + 2] == "'":  # '' is a literal quote
                literal.append("'")
                i += 2
                continue
            end = i + 1
            while True:
                end = pattern.find("'", end)
                if end < 0:
                    raise PatternError("Unterminated quote")
                if pattern[end + 1 : end + 2] == "'":
                    end += 2
                    continue
                break
            literal.append(pattern[i + 1 : end].replace("''", "'"))
            i = end + 1
        elif char.isascii() and char.isalpha():
            if char not in _LEGAL_LETTERS:
                raise PatternError(f"Illegal pattern character '{char}'")
            if char in _UNSUPPORTED_LETTERS:
                raise UnsupportedPatternError(
                    f"Pattern letter '{char}' is not supported by connect-lite"
                )
            count = 1
            while i + count < n and pattern[i + count] == char:
                count += 1
            if char == "X" and count > 3:
                raise PatternError(f"invalid ISO 8601 format: length={count}")
            flush()
            tokens.append(_Token(char, count))
            i += count
        else:
            literal.append(char)
            i += 1
    flush()
    return tokens


class JavaDateFormat:
    """A compiled SimpleDateFormat pattern; formats and parses epoch milliseconds in UTC."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._tokens = _tokenize(pattern)
        self._regex, self._groups = self._parser()

    def to_pattern(self) -> str:
        return self.pattern

    # formatting

    def format(self, millis: int) -> str:
        """The instant rendered as Java does with this pattern and the UTC zone."""
        try:
            moment = EPOCH + dt.timedelta(milliseconds=millis)
        except OverflowError:
            raise ValueError(f"Timestamp {millis} is outside the supported range") from None
        return "".join(_format_token(token, moment) for token in self._tokens)

    # parsing

    def _parser(self) -> tuple[re.Pattern[str], list[_Token]]:
        parts: list[str] = []
        groups: list[_Token] = []
        for index, token in enumerate(self._tokens):
            if not token.letter:
                parts.append(re.escape(token.text))
                continue
            following = self._tokens[index + 1] if index + 1 < len(self._tokens) else None
            abutting = following is not None and following.letter and following.is_numeric()
            parts.append(_token_regex(token, bool(abutting)))
            groups.append(token)
        return re.compile("".join(parts)), groups

    def parse(self, text: str) -> int:
        """Epoch milliseconds of ``text``; like Java, trailing text after a match is ignored
        and out-of-range fields roll over (lenient parsing). Raises ValueError."""
        match = self._regex.match(text)
        if match is None:
            raise ValueError(f'Unparseable date: "{text}"')
        fields: dict[str, int] = {}
        pm: bool | None = None
        offset_minutes = 0
        for token, raw in zip(self._groups, match.groups(), strict=True):
            letter = token.letter
            if letter in ("M", "L") and token.count >= 3:
                fields["M"] = _month_number(raw)
            elif letter == "a":
                pm = raw.upper() == "PM"
            elif letter in ("z", "Z", "X"):
                offset_minutes = _zone_offset(raw)
            elif letter == "G":
                if raw.upper() != "AD":
                    raise ValueError("Years before the common era are not supported")
            elif letter == "E":
                continue
            else:
                fields[letter] = _numeric_value(token, raw)
        return _resolve(fields, pm, offset_minutes)


def _format_token(token: _Token, moment: dt.datetime) -> str:
    letter, count = token.letter, token.count
    if not letter:
        return token.text
    if letter in ("M", "L"):
        if count >= 4:
            return _MONTHS[moment.month - 1]
        if count == 3:
            return _MONTHS[moment.month - 1][:3]
        return str(moment.month).zfill(count)
    if letter == "y":
        return str(moment.year % 100).zfill(2) if count == 2 else str(moment.year).zfill(count)
    if letter == "E":
        name = _DAYS[moment.weekday()]
        return name if count >= 4 else name[:3]
    texts = {
        "G": "AD",
        "a": "AM" if moment.hour < 12 else "PM",
        "z": "Coordinated Universal Time" if count >= 4 else "UTC",
        "Z": "+0000",
        "X": "Z",
    }
    if letter in texts:
        return texts[letter]
    numbers = {
        "d": moment.day,
        "H": moment.hour,
        "k": moment.hour or 24,
        "K": moment.hour % 12,
        "h": moment.hour % 12 or 12,
        "m": moment.minute,
        "s": moment.second,
        "S": moment.microsecond // 1000,
        "D": moment.timetuple().tm_yday,
        "F": (moment.day - 1) // 7 + 1,
        "u": moment.isoweekday(),
    }
    return str(numbers[letter]).zfill(count)


def _token_regex(token: _Token, abutting: bool) -> str:
    if token.is_numeric():
        return rf"(\d{{{token.count}}})" if abutting else r"(\d+)"
    if token.letter in ("M", "L", "E"):
        return r"([A-Za-z]+)"
    if token.letter == "a":
        return r"([AaPp][Mm])"
    if token.letter == "G":
        return r"([A-Za-z]{2})"
    return _ZONE


def _month_number(name: str) -> int:
    lowered = name.lower()
    for index, month in enumerate(_MONTHS):
        if lowered in (month.lower(), month[:3].lower()):
            return index + 1
    raise ValueError(f"Unknown month name: {name}")


def _numeric_value(token: _Token, raw: str) -> int:
    value = int(raw)
    if token.letter == "y" and token.count <= 2 and len(raw) == 2:
        return _two_digit_year(value)
    return value


def _two_digit_year(value: int) -> int:
    """Java's default century: the year within 80 years before and 20 after today."""
    start = dt.datetime.now(dt.UTC).year - 80
    year = start // 100 * 100 + value
    return year + 100 if year < start else year


def _zone_offset(raw: str) -> int:
    """Minutes east of UTC for ``Z``, ``+hh``, ``+hhmm``, ``+hh:mm`` and ``GMT+h:mm``."""
    text = raw.upper()
    for prefix in ("UTC", "GMT", "UT"):
        if text.startswith(prefix):
            text = text[len(prefix) :]
            break
    if text in ("", "Z"):
        return 0
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    if len(digits) <= 2:
        hours, minutes = int(digits), 0
    else:
        hours, minutes = int(digits[:-2]), int(digits[-2:])
    return sign * (hours * 60 + minutes)


def _resolve(fields: dict[str, int], pm: bool | None, offset_minutes: int) -> int:
    """Combine parsed fields leniently (month 13 is next January), as Java's Calendar does."""
    year = fields.get("y", 1970)
    months = fields.get("M", 1) - 1
    year, month = year + months // 12, months % 12 + 1
    if year < 1:
        raise ValueError("Years before the common era are not supported")
    hour = fields.get("H", 0)
    if "k" in fields:
        hour = fields["k"] % 24
    for letter in ("h", "K"):
        if letter in fields:
            hour = fields[letter] % 12 + (12 if pm else 0)
    if "D" in fields and "d" not in fields and "M" not in fields:
        days = fields["D"] - 1
        month = 1
    else:
        days = fields.get("d", 1) - 1
    try:
        moment = dt.datetime(year, month, 1, tzinfo=dt.UTC) + dt.timedelta(
            days=days,
            hours=hour,
            minutes=fields.get("m", 0) - offset_minutes,
            seconds=fields.get("s", 0),
            milliseconds=fields.get("S", 0),
        )
    except (OverflowError, ValueError) as error:
        raise ValueError(str(error)) from None
    delta = moment - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


__all__ = ["JavaDateFormat", "PatternError", "UnsupportedPatternError"]
