"""Write the demo input file (data/demo/input.txt) that file-source.json reads, if it is missing.

Usage: python scripts/demo/make_input.py [N] [--output PATH] [--force]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUTPUT = REPO_ROOT / "data" / "demo" / "input.txt"
DEFAULT_LINES = 1000


def demo_lines(count: int) -> str:
    """``count`` numbered demo lines, each ending in a newline."""
    return "".join(f"connect-lite demo line {i} of {count}\n" for i in range(1, count + 1))


def make_input(output: Path, count: int, force: bool = False) -> bool:
    """Write the demo lines to ``output``; False (and no write) if it exists and not ``force``."""
    if output.exists() and not force:
        return False
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_name(output.name + ".tmp")
    tmp.write_text(demo_lines(count), encoding="utf-8")
    tmp.replace(output)  # the source connector never sees a half-written file
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lines", nargs="?", type=int, default=DEFAULT_LINES)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--force", action="store_true", help="overwrite an existing file")
    args = parser.parse_args(argv)
    if args.lines < 0:
        parser.error("the number of lines must not be negative")
    if make_input(args.output, args.lines, args.force):
        print(f"wrote {args.lines} lines to {args.output}")
    else:
        print(f"{args.output} exists; left as it is (use --force to rewrite it)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
