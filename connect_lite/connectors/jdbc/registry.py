"""The dialects by name: ``dialect.name`` (or the one inferred from the URL) to a Dialect.

A module of its own, importing each dialect's module, so that none of those imports another
to list them (mysql.py builds on dialects.py)."""

from __future__ import annotations

from connect_lite.api import ConnectError

from .dialects import Dialect, PostgreSqlDialect, SqliteDialect
from .mysql import MySqlDialect

_DIALECTS: dict[str, type[Dialect]] = {
    d.name: d for d in (PostgreSqlDialect, SqliteDialect, MySqlDialect)
}


def dialect(name: str, quote: bool) -> Dialect:
    found = _DIALECTS.get(name)
    if found is None:
        raise ConnectError(f"connect-lite has no {name or 'dialect for this URL'}")
    return found(quote)
