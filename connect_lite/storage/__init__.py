"""Backing stores: one interface per kind of state, a SQLite and a memory implementation."""

from connect_lite.storage.base import (
    ConfigStore,
    OffsetStore,
    StatusStore,
    Stores,
    TopicStore,
    TopicUse,
)

__all__ = ["ConfigStore", "OffsetStore", "StatusStore", "Stores", "TopicStore", "TopicUse"]
