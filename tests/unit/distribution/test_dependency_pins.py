"""pyproject.toml declares ranges; constraints.txt pins each dependency to a version inside them."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[3]


def _declared() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    listed = project["dependencies"] + extras["dev"] + extras["postgres"] + extras["mysql"]
    return [Requirement(text) for text in listed]


def _pins() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        text = line.split("#", 1)[0].strip()
        if text:
            name, version = text.split("==")
            assert canonicalize_name(name) not in pins, f"{name} pinned twice"
            pins[canonicalize_name(name)] = version
    return pins


def test_every_dependency_is_a_range_with_a_pin_inside_it() -> None:
    pins = _pins()
    for requirement in _declared():
        assert not any(spec.operator == "==" for spec in requirement.specifier), requirement
        pin = pins.get(canonicalize_name(requirement.name))
        assert pin is not None, f"{requirement.name} has no pin in constraints.txt"
        assert requirement.specifier.contains(pin), (
            f"{requirement.name}=={pin} outside {requirement}"
        )


def test_the_pins_cover_every_declared_dependency_and_what_they_pull_in() -> None:
    """Indirect dependencies are pinned too, so a clean CI machine installs what passed."""
    declared = {canonicalize_name(r.name) for r in _declared()}
    pins = set(_pins())
    assert declared <= pins
    assert {"numpy", "werkzeug", "jinja2", "py4j", "tzlocal"} <= pins - declared


def test_setup_installs_with_the_constraints_and_reinstalls_when_they_change() -> None:
    setup = (REPO / "scripts" / "setup.sh").read_text()
    assert "pip install --quiet -c constraints.txt -e '.[dev,postgres,mysql,http,mqtt]'" in setup
    assert "cat pyproject.toml constraints.txt | sha256sum" in setup
