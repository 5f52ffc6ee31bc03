"""The publish journal: the renames that make one commit round's files visible, all or none.

A round writes its files to a temporary directory, then a journal listing every
temp → final rename, durably and atomically. From then on the round is committed: whoever
finds the journal (the task itself, or any task of the connector in ``open``) rolls it
forward. Rolling forward is idempotent, so two tasks may do it at once: a rename whose
source is gone was done already; then the journal and the temporary directory go.
"""

from __future__ import annotations

import json
import logging
import posixpath
from dataclasses import dataclass

from .layout import Layout
from .store import Store

log = logging.getLogger(__name__)

_VERSION = 1


@dataclass(frozen=True)
class Journal:
    """One commit round: where its journal file is, its renames and its temp directory."""

    path: str
    renames: tuple[tuple[str, str], ...]
    temp_dir: str

    def to_bytes(self) -> bytes:
        body = {"version": _VERSION, "renames": [list(r) for r in self.renames]}
        body["temp_dir"] = self.temp_dir
        return json.dumps(body, indent=None, separators=(",", ":")).encode()

    @staticmethod
    def from_bytes(path: str, data: bytes) -> Journal:
        body = json.loads(data)
        if body.get("version") != _VERSION:
            raise ValueError(f"journal {path} has unknown version {body.get('version')!r}")
        renames = tuple((str(s), str(t)) for s, t in body["renames"])
        return Journal(path, renames, str(body["temp_dir"]))


def write(store: Store, journal: Journal) -> None:
    """Write the journal durably; once this returns the round is committed."""
    store.write_atomically(journal.path, journal.to_bytes())


def roll_forward(store: Store, journal: Journal) -> None:
    """Do the journal's renames that are not done yet, make them durable, then delete the
    journal and the round's temporary directory."""
    targets = []
    for source, target in journal.renames:
        targets.append(posixpath.dirname(target))
        if store.exists(target):
            if store.exists(source):  # published already by another copy of this round
                store.delete(source)
            continue
        if not store.rename(source, target) and not store.exists(target):
            log.warning(
                "Journal %s: neither %s nor %s exists; the file was deleted after it was published",
                journal.path,
                source,
                target,
            )
    store.sync_dirs(targets)
    store.delete(journal.path)
    store.delete(journal.temp_dir)


def find(store: Store, layout: Layout) -> list[Journal]:
    """The journals of every task of the connector: a partition this task opens may have
    been another task's (a rebalance, or fewer tasks now)."""
    found = []
    for task_dir, is_dir in store.list_dir(layout.connector_root):
        if not is_dir or not task_dir.startswith("task-"):
            continue
        for name, is_journal_dir in store.list_dir(f"{layout.connector_root}/{task_dir}"):
            if is_journal_dir or not (name.startswith("journal-") and name.endswith(".json")):
                continue
            path = f"{layout.connector_root}/{task_dir}/{name}"
            try:
                found.append(Journal.from_bytes(path, store.read(path)))
            except FileNotFoundError:
                continue  # rolled forward by its task meanwhile
    return found
