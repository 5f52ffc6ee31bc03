"""Remove the demo's state, so that the next run starts it as on first use (scripts/run.sh --fresh).

The embedded broker keeps its topics in memory, while the state file keeps the connectors and
their offsets: a demo started again resumes after records that are gone. This removes, inside
the checkout's data/ directory only, the state file data/connect-lite.db (with its -wal, -shm
and -journal files) and what the demo's sinks wrote: data/demo/output.txt and data/demo/lake/.
The input file data/demo/input.txt stays. Nothing is removed while a worker owns the state
file.

Usage: python scripts/demo/start_fresh.py
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from connect_lite.config.local_paths import STATE_COMPANIONS
from connect_lite.storage.base import StateFileInUseError
from connect_lite.storage.sqlite.lock import LOCK_SUFFIX, StateFileLock

DATA = Path(__file__).resolve().parents[2] / "data"
STATE_FILE = "connect-lite.db"
"""state.storage.file of standalone.properties, inside DATA."""
STATE_FILES = tuple(suffix for suffix in STATE_COMPANIONS if suffix != LOCK_SUFFIX)
"""The state file and SQLite's companions; not the owner lock, held while removing."""
DEMO_OUTPUTS = ("demo/output.txt", "demo/lake")
"""What the demo's sinks write (scripts/demo/file-sink.json, lake-sink.json), inside DATA."""


def start_fresh(data: Path = DATA) -> list[Path]:
    """Remove the demo's state file and outputs under ``data``; the paths removed. Raises
    StateFileInUseError, having removed nothing, while a worker owns the state file. A link
    is removed as a link: nothing outside ``data`` is touched."""
    state = data / STATE_FILE
    removed: list[Path] = []
    if not data.is_dir():
        return removed
    lock = StateFileLock.acquire(str(state))  # held while removing: no worker starts meanwhile
    try:
        state_files = [data / (STATE_FILE + suffix) for suffix in STATE_FILES]
        for path in [*state_files, *map(data.joinpath, DEMO_OUTPUTS)]:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif path.is_symlink() or path.exists():
                path.unlink()
            else:
                continue
            removed.append(path)
    finally:
        lock.release()
    return removed


def main() -> int:
    try:
        removed = start_fresh()
    except StateFileInUseError as error:
        print(
            f"Not starting afresh: {error.path} is in use by a running worker (pid {error.pid}). "
            "Stop it first (Ctrl-C in its terminal).",
            file=sys.stderr,
        )
        return 1
    shown = ", ".join(str(path.relative_to(DATA.parent)) for path in removed)
    print(f"Starting the demo afresh: removed {shown}" if removed else "Starting the demo afresh")
    return 0


if __name__ == "__main__":
    sys.exit(main())
