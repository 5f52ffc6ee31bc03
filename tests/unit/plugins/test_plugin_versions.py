"""KIP-891 version requirements: Maven range syntax, PEP 440 order, selection and its errors."""

from __future__ import annotations

import pytest

from connect_lite.api import ConfigError
from connect_lite.plugins.types import PluginDesc, PluginRef, PluginType
from connect_lite.plugins.versions import (
    InvalidVersionSpecError,
    parse_requirement,
    select_version,
    sorted_versions,
)

# The installed versions of Kafka's own selection tests (connect-rest.md section 5.1).
KAFKA_INSTALLED = ["1.0.0", "1.1.0", "1.1.2", "2.0.0", "2.0.2", "3.0.0", "4.0.0"]


def _descs(versions: list[str], location: str = "/plugins/x") -> list[PluginDesc]:
    return [
        PluginDesc(
            "acme.Thing",
            PluginType.CONVERTER,
            v,
            PluginRef(f"{location}-{v}", "acme", "Thing"),
            object,
        )
        for v in versions
    ]


def _pick(versions: list[str], requirement: str | None) -> str:
    return select_version(_descs(versions), requirement).version


@pytest.mark.parametrize(
    ("requirement", "expected"),
    [
        (None, "4.0.0"),
        ("latest", "4.0.0"),
        (" latest ", "4.0.0"),
        ("", "4.0.0"),
        ("1.0.0", "1.0.0"),  # a bare version is a hard pin, not Maven's soft recommendation
        ("[2.0.2]", "2.0.2"),
        ("[1.1.0,3.0.1]", "3.0.0"),
        ("(,2.0.0)", "1.1.2"),
        ("(,1.0.0]", "1.0.0"),
        ("[2.0.0,)", "4.0.0"),
        ("(,2.0.0],[2.0.3, 2.0.4)", "2.0.0"),
        ("(2.0.0,3.0.0)", "2.0.2"),
        ("(,1.1.0),[4.1.1,)", "1.0.0"),
        ("[1.1.0,1.1.3)", "1.1.2"),
        ("[1.1.0,1.1.2]", "1.1.2"),  # closed upper bound includes it
        ("[1.1.0,1.1.2)", "1.1.0"),  # open upper bound excludes it
        ("(1.1.0,2.0.0]", "2.0.0"),
        ("  [ 1.1.0 , 2.0.0 ) ", "1.1.2"),  # whitespace around bounds is trimmed
        ("2.0", "2.0.0"),  # PEP 440: 2.0 == 2.0.0
    ],
)
def test_selection_matches_kafkas_examples(requirement: str | None, expected: str) -> None:
    assert _pick(KAFKA_INSTALLED, requirement) == expected


@pytest.mark.parametrize(
    ("requirement", "shown"),
    [
        ("0.9.0", "[0.9.0]"),
        ("[4.0.1,)", "[4.0.1,)"),
        ("(4.0.0,)", "(4.0.0,)"),
        ("[4.0.1]", "[4.0.1]"),
        ("(2.0.0, 2.0.1)", "(2.0.0,2.0.1)"),
        ("(,1.0.0)", "(,1.0.0)"),
        ("(1.1.0, 1.1.2)", "(1.1.0,1.1.2)"),
        ("(,0.1],[5.0,)", "(,0.1],[5.0,)"),
    ],
)
def test_no_match_lists_installed_versions_ascending(requirement: str, shown: str) -> None:
    with pytest.raises(ConfigError) as error:
        select_version(_descs(list(reversed(KAFKA_INSTALLED))), requirement)
    assert not isinstance(error.value, InvalidVersionSpecError)
    assert str(error.value) == (
        f"Plugin acme.Thing not found that matches the version range {shown}, available "
        "versions: [1.0.0, 1.1.0, 1.1.2, 2.0.0, 2.0.2, 3.0.0, 4.0.0]"
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("[1.0", "Unbounded range: [1.0"),
        ("(1.0,2.0", "Unbounded range: (1.0,2.0"),
        ("[1.0],[2.0", "Unbounded range: [1.0],[2.0"),
        ("(1.0)", "Single version must be surrounded by []: (1.0)"),
        ("[1.0)", "Single version must be surrounded by []: [1.0)"),
        ("[2.0,1.0]", "Range defies version ordering: [2.0,1.0]"),
        ("(1.0,1.0]", "Range defies version ordering: (1.0,1.0]"),
        ("[1.0,1.0)", "Range defies version ordering: [1.0,1.0)"),
        ("[1.0,3.0],[2.0,4.0]", "Ranges overlap: [1.0,3.0],[2.0,4.0]"),
        ("[1.0,3.0],(,4.0]", "Ranges overlap: [1.0,3.0],(,4.0]"),
        (
            "[1.0,2.0],3.0",
            "Only fully-qualified sets allowed in multiple set scenario: [1.0,2.0],3.0",
        ),
        # a bare version is read as [v], so Maven's errors name the bracketed text
        ("1.0)", "Single version must be surrounded by []: [1.0)"),
        ("1.0]", "Only fully-qualified sets allowed in multiple set scenario: [1.0]]"),
    ],
)
def test_invalid_specifications_give_mavens_messages(spec: str, message: str) -> None:
    with pytest.raises(InvalidVersionSpecError) as error:
        parse_requirement(spec)
    assert str(error.value) == message
    with pytest.raises(InvalidVersionSpecError):
        select_version(_descs(["1.0"]), spec)


def test_parsed_ranges_render_as_kafka_shows_them() -> None:
    assert str(parse_requirement("1.0")) == "[1.0]"
    assert str(parse_requirement("[1.0 , 2.0)")) == "[1.0,2.0)"
    assert str(parse_requirement("(,1.0],[1.2,)")) == "(,1.0],[1.2,)"
    assert str(parse_requirement("[1.0,1.0]")) == "[1.0]"
    assert parse_requirement("latest") is None
    assert parse_requirement(None) is None


def test_a_bare_version_with_a_comma_is_a_range_as_in_kafka() -> None:
    # Kafka wraps a bare spec in [] and parses again, so "1.0,2.0" becomes [1.0,2.0].
    assert _pick(["1.0", "1.5", "3.0"], "1.0,2.0") == "1.5"


def test_unparseable_versions_sort_lowest_and_can_be_pinned() -> None:
    installed = ["2.0", "garbage", "1.0"]
    assert sorted_versions(installed) == ["garbage", "1.0", "2.0"]
    assert _pick(installed, None) == "2.0"
    assert _pick(installed, "garbage") == "garbage"
    assert _pick(installed, "(,1.0]") == "1.0"
    assert _pick(["garbage", "other"], None) == "other"  # lexical among the unparseable


def test_pep440_pre_releases_order_before_the_release() -> None:
    installed = ["1.0.0", "1.0.0rc1", "1.0.0a1", "1.0.0.post1", "1.0.0.dev1", "1.1.0b2"]
    assert sorted_versions(installed) == [
        "1.0.0.dev1",
        "1.0.0a1",
        "1.0.0rc1",
        "1.0.0",
        "1.0.0.post1",
        "1.1.0b2",
    ]
    assert _pick(installed, None) == "1.1.0b2"
    assert _pick(installed, "[1.0.0a1,1.0.0)") == "1.0.0rc1"  # pre-releases are in a range
    assert _pick(installed, "(,1.0.0]") == "1.0.0"
    assert _pick(installed, "1.0.0rc1") == "1.0.0rc1"
    assert _pick(installed, "[1.0.0rc1,1.1.0)") == "1.1.0b2"  # 1.1.0b2 < 1.1.0


def test_a_copy_in_the_preferred_location_wins_if_it_matches() -> None:
    descs = _descs(["1.0.0", "2.0.0", "3.0.0"], "/p/acme")
    bundled = "/p/acme-2.0.0"
    assert select_version(descs, None, bundled).version == "2.0.0"
    assert select_version(descs, "[1.0.0,)", bundled).version == "2.0.0"
    assert select_version(descs, "3.0.0", bundled).version == "3.0.0"  # pinned elsewhere
    assert select_version(descs, "(2.0.0,)", bundled).version == "3.0.0"
    assert select_version(descs, None, "/elsewhere").version == "3.0.0"
    with pytest.raises(ConfigError, match=r"range \[4.0.0\], available versions"):
        select_version(descs, "4.0.0", bundled)
