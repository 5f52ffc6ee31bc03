"""A package in the versioned test plugin, to exercise package and relative imports."""

from .tools import describe

__all__ = ["describe"]
