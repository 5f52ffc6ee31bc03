"""java_time: SimpleDateFormat patterns formatted and parsed in UTC."""

from __future__ import annotations

import datetime as dt

import pytest

from connect_lite.transforms.java_time import JavaDateFormat, PatternError, UnsupportedPatternError

# 2017-01-03T06:30:01.864Z, a Tuesday
MILLIS = 1483425001864


def millis(*args: int) -> int:
    moment = dt.datetime(*args, tzinfo=dt.UTC)  # type: ignore[misc]  # year, month, day...
    return int(moment.timestamp() * 1000)


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("yyyyMMdd", "20170103"),
        ("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", "2017-01-03T06:30:01.864Z"),
        ("yy/M/d", "17/1/3"),
        ("y", "2017"),
        ("yyyyy", "02017"),
        ("MMM MMMM LLL", "Jan January Jan"),
        ("EEE EEEE u", "Tue Tuesday 2"),
        ("h:mm a K k H", "6:30 AM 6 6 6"),
        ("S SSSS", "864 0864"),
        ("D F G", "3 1 AD"),
        ("z zzzz Z X XX XXX", "UTC Coordinated Universal Time +0000 Z Z Z"),
        ("'o''clock' ''", "o'clock '"),
        ("HH-mm_ss!", "06-30_01!"),
    ],
)
def test_format(pattern: str, expected: str) -> None:
    assert JavaDateFormat(pattern).format(MILLIS) == expected


def test_format_hours_around_midnight_and_noon() -> None:
    fmt = JavaDateFormat("h a k K")
    assert fmt.format(millis(2020, 1, 1, 0, 0)) == "12 AM 24 0"
    assert fmt.format(millis(2020, 1, 1, 12, 0)) == "12 PM 12 0"
    assert JavaDateFormat("yyyy-MM-dd").format(-1) == "1969-12-31"


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        ("yyyyMMdd", "20170103", millis(2017, 1, 3)),
        ("yyyy-MM-dd HH:mm:ss.SSS", "2017-01-03 06:30:01.864", MILLIS),
        ("yyyy MM dd HH mm ss SSS z", "1970 01 02 00 00 01 234 UTC", 86_401_234),
        ("yyyy-MM-dd'T'HH:mm:ssXXX", "2017-01-03T08:30:01+02:00", millis(2017, 1, 3, 6, 30, 1)),
        ("yyyy-MM-dd'T'HH:mm:ssZ", "2017-01-03T01:30:01-0500", millis(2017, 1, 3, 6, 30, 1)),
        ("yyyy-MM-dd'T'HH:mm:ssX", "2017-01-03T06:30:01Z", millis(2017, 1, 3, 6, 30, 1)),
        ("d MMM yyyy", "3 january 2017", millis(2017, 1, 3)),
        ("EEE, d MMMM yyyy h:mm a", "Tue, 3 January 2017 6:30 PM", millis(2017, 1, 3, 18, 30)),
        ("yyyy-MM-dd", "2017-13-01", millis(2018, 1, 1)),  # lenient, as Java
        ("yyyy-MM-dd", "2017-01-03 and more", millis(2017, 1, 3)),  # a prefix match is enough
        ("HH:mm", "06:30", millis(1970, 1, 1, 6, 30)),
        ("yyyyD", "2017032", millis(2017, 2, 1)),
    ],
)
def test_parse(pattern: str, text: str, expected: int) -> None:
    assert JavaDateFormat(pattern).parse(text) == expected


def test_parse_two_digit_year_uses_the_default_century() -> None:
    this_year = dt.datetime.now(dt.UTC).year
    parsed = JavaDateFormat("yy-MM-dd").parse(f"{(this_year + 1) % 100:02d}-01-01")
    assert parsed == millis(this_year + 1, 1, 1)


@pytest.mark.parametrize("text", ["2017/01/03", "", "x2017-01-03", "2017-Foo-03"])
def test_parse_failures(text: str) -> None:
    with pytest.raises(ValueError, match=r"Unparseable date|Unknown month"):
        JavaDateFormat("yyyy-MM-dd" if "Foo" not in text else "yyyy-MMM-dd").parse(text)


def test_round_trip() -> None:
    fmt = JavaDateFormat("yyyy-MM-dd'T'HH:mm:ss.SSSZ")
    assert fmt.parse(fmt.format(MILLIS)) == MILLIS
    assert fmt.to_pattern() == "yyyy-MM-dd'T'HH:mm:ss.SSSZ"


@pytest.mark.parametrize(
    ("pattern", "error", "message"),
    [
        ("bad-format", PatternError, "Illegal pattern character 'b'"),
        ("yyyy'", PatternError, "Unterminated quote"),
        ("XXXX", PatternError, "invalid ISO 8601 format: length=4"),
        ("YYYY", UnsupportedPatternError, "'Y' is not supported"),
        ("ww", UnsupportedPatternError, "'w' is not supported"),
    ],
)
def test_bad_patterns(pattern: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        JavaDateFormat(pattern)
