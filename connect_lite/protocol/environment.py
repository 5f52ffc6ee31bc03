"""Where a child Python process imports connect_lite from: the data-plane process, and Spark's
Python workers in local mode, import the same code as the worker that starts them."""

from __future__ import annotations

import os
from pathlib import Path


def package_home() -> str:
    """The directory connect_lite is imported from, links resolved: a checkout's root, or
    site-packages."""
    import connect_lite

    return str(Path(connect_lite.__file__).resolve().parent.parent)


def python_path(*parts: str | None) -> str:
    """A PYTHONPATH of ``parts`` (each a path or a PYTHONPATH) in order, without repeats or
    empty entries."""
    entries = [p for part in parts if part for p in part.split(os.pathsep)]
    return os.pathsep.join(dict.fromkeys(p for p in entries if p))


__all__ = ["package_home", "python_path"]
