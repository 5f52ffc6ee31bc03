"""Uses a sibling top-level module from inside a package."""

import acme_helpers


def describe() -> str:
    return f"acme_pkg at {acme_helpers.VERSION}"
