"""The sqlite index's file: its name and neighbours, format, schema and meta rows."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

INDEX_NAME = "index.sqlite"


# Beside the index: the revision it holds and the file's (size, mtime, ctime, inode) when
# that was last proven, so a no-op consolidate need not read every row (see holds()).
STAMP_NAME = "index.sqlite.stamp"


# The index `init` builds for its baseline, adopted by the activation of that revision.
PREPARED_NAME = "index.sqlite.prepared"


RACY_NS = 1_000_000_000  # a stamp taken this soon after the file changed is not trusted


# Format 2: an fts row shares its unit's rowid and the side tables are indexed by id, so
# one unit's rows can be replaced without scanning; records hold no revision (the meta
# row does), so unchanged rows stay valid from one revision to the next.
# Format 3: the fts columns hold analysed text (stems, no stop words), so an index of
# format 2 (exact tokens) would be misread by a stemmed query: it is rebuilt, never read.
FORMAT = "3"


_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE units(id TEXT PRIMARY KEY, kind TEXT NOT NULL, language TEXT NOT NULL,
                   title TEXT NOT NULL, provenance_kind TEXT NOT NULL,
                   content_hash TEXT NOT NULL, record TEXT NOT NULL);
CREATE TABLE unit_purposes(id TEXT NOT NULL, purpose TEXT NOT NULL);
CREATE INDEX unit_purposes_id ON unit_purposes(id);
CREATE TABLE unit_tables(id TEXT NOT NULL, tbl TEXT NOT NULL);
CREATE INDEX unit_tables_id ON unit_tables(id);
CREATE VIRTUAL TABLE fts USING fts5(id UNINDEXED, title, body, applies_to,
                                    tokenize = 'unicode61 remove_diacritics 2');
"""


@contextlib.contextmanager
def open_readonly(
    path: Path, connect: Callable[..., sqlite3.Connection] = sqlite3.connect
) -> Iterator[sqlite3.Connection]:
    """A read-only connection; the path is URI-quoted, so '#', '?' or '%' in it are names."""
    con = connect(f"file:{quote(str(path))}?mode=ro", uri=True)
    try:
        yield con
    finally:
        con.close()


def _pairs(path: Path, sql: str) -> dict[str, str] | None:
    """Two-column rows of the index as a dict; None if absent or unreadable."""
    if not path.is_file():
        return None
    try:
        with open_readonly(path) as con:
            return dict(con.execute(sql).fetchall())
    except sqlite3.Error:
        return None


def index_meta(path: Path) -> dict[str, str] | None:
    """The index's meta rows (revision, format, tool, units)."""
    return _pairs(path, "SELECT key, value FROM meta")


def index_revision(path: Path) -> str | None:
    """The revision the index at ``path`` was built for; None if absent or unreadable."""
    return (index_meta(path) or {}).get("revision")


def index_entries(path: Path) -> dict[str, str] | None:
    """Unit id -> content hash held by the index; None if absent or unreadable."""
    return _pairs(path, "SELECT id, content_hash FROM units")


def rows_by_id(con: sqlite3.Connection, select: str, ids: list[str]) -> Iterator[Any]:
    """The rows of ``select`` whose ``id`` is one of ``ids``, asked in chunks under
    SQLite's bound-variable limit."""
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        yield from con.execute(f"{select} WHERE id IN ({','.join('?' * len(chunk))})", chunk)
