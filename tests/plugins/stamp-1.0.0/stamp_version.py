"""The version of this copy of the stamp plugin (a sibling: isolation rewrites its import)."""

VERSION = "1.0.0"
