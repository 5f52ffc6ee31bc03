"""Helpers of the versioned test plugin; VERSION is what every class of this copy reports."""

VERSION = "3.0.0"


def tag(value: object) -> str:
    """The value tagged with this copy's version."""
    return f"{VERSION}:{value}"


def untag(text: str) -> str:
    """The inverse of tag(); fails on text tagged by another version."""
    prefix = f"{VERSION}:"
    if not text.startswith(prefix):
        raise ValueError(f"not tagged by version {VERSION}: {text!r}")
    return text[len(prefix) :]
