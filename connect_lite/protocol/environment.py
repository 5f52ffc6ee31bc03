"""Where a child Python process imports connect_lite from: the data-plane process, and Spark's
Python workers in local mode, import the same code as the worker that starts them."""

from __future__ import annotations

import os


def package_home() -> str:
    """The directory connect_lite is imported from: a checkout's root, or site-packages."""
    import connect_lite

    return os.path.dirname(os.path.dirname(os.path.abspath(connect_lite.__file__)))


def python_path(*parts: str | None) -> str:
    """A PYTHONPATH of ``parts`` (each a path or a PYTHONPATH) in order, without repeats or
    empty entries."""
    entries = [p for part in parts if part for p in part.split(os.pathsep)]
    return os.pathsep.join(dict.fromkeys(p for p in entries if p))


__all__ = ["package_home", "python_path"]
