"""The version of this copy of the stamp plugin (a sibling: isolation rewrites its import)."""

VERSION = "2.0.0"
