"""Writing the sqlite index's rows: a whole new file, or one revision's changes in place."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path

from evidence_tool import __version__
from evidence_tool.activation import vec
from evidence_tool.activation.analysis import analyse
from evidence_tool.activation.dense import (
    delete_vector,
)
from evidence_tool.activation.records import IndexRecord, _strs, index_records
from evidence_tool.activation.sqlite_schema import _SCHEMA, FORMAT, index_meta
from evidence_tool.embedding.text import flatten as _flatten
from evidence_tool.jsonvalue import JsonObject


def _tables_of(record: IndexRecord) -> set[str]:
    """Tables a unit is about: applies_to tables and columns, mapping/formula/enum payload."""
    applies, payload = record.applies_to, record.payload
    tables = set(_strs(applies.get("tables"))) | set(_strs(payload.get("tables")))
    columns = _strs(applies.get("columns")) + _strs(payload.get("columns"))
    column = payload.get("column")
    if isinstance(column, str):
        columns.append(column)
    tables |= {c.rsplit(".", 1)[0] for c in columns if c.count(".") >= 2}
    return {t.lower() for t in tables}


def _fts_text(text: str, language: str, analyzer: str) -> str:
    return analyse(text, language) if analyzer == "stem" else text


# json.dumps(..., ensure_ascii=False, sort_keys=True) builds this encoder at every call.
_STORED = json.JSONEncoder(ensure_ascii=False, sort_keys=True)


_BATCH = 512  # rows per executemany: fewer calls, a bounded list (50,000 units fit in memory)


def _insert(
    con: sqlite3.Connection, records: Iterable[IndexRecord], analyzer: str = "stem"
) -> None:
    """Every row of ``records``' units, a batch of units per statement.  Rowids are given
    (the file's largest + 1, 2, ...: what SQLite gives rows inserted one by one), so fts
    and units share them."""
    batch: list[IndexRecord] = []
    rowid = int(con.execute("SELECT coalesce(max(rowid), 0) FROM units").fetchone()[0])
    for r in records:
        batch.append(r)
        if len(batch) == _BATCH:
            _insert_batch(con, batch, rowid, analyzer)
            rowid += len(batch)
            batch = []
    _insert_batch(con, batch, rowid, analyzer)


def _insert_batch(
    con: sqlite3.Connection, batch: list[IndexRecord], rowid: int, analyzer: str
) -> None:
    units, purposes, tables, fts = [], [], [], []
    for n, r in enumerate(batch, rowid + 1):
        lang = r.language
        units.append(
            (
                n,
                r.id,
                r.kind,
                lang,
                r.title,
                r.provenance_kind,
                r.content_hash,
                _STORED.encode(r.stored()),
            )
        )
        purposes += [(r.id, p) for p in r.purposes]
        tables += [(r.id, t) for t in sorted(_tables_of(r))]
        fts.append(
            (
                n,
                r.id,
                _fts_text(r.title, lang, analyzer),
                _fts_text("\n".join(_flatten(r.payload)), lang, analyzer),
                _fts_text(" ".join(_flatten(r.applies_to)), lang, analyzer),
            )
        )
    con.executemany(
        "INSERT INTO units(rowid, id, kind, language, title, provenance_kind, content_hash, "
        "record) VALUES (?,?,?,?,?,?,?,?)",
        units,
    )
    con.executemany("INSERT INTO unit_purposes VALUES (?,?)", purposes)
    con.executemany("INSERT INTO unit_tables VALUES (?,?)", tables)
    con.executemany("INSERT INTO fts(rowid, id, title, body, applies_to) VALUES (?,?,?,?,?)", fts)


def _delete(con: sqlite3.Connection, unit_id: str) -> None:
    row = con.execute("SELECT rowid FROM units WHERE id = ?", (unit_id,)).fetchone()
    if row is None:
        return
    con.execute("DELETE FROM fts WHERE rowid = ?", (row[0],))
    con.execute("DELETE FROM units WHERE rowid = ?", (row[0],))
    con.execute("DELETE FROM unit_purposes WHERE id = ?", (unit_id,))
    con.execute("DELETE FROM unit_tables WHERE id = ?", (unit_id,))
    delete_vector(con, unit_id)


def _stamp(con: sqlite3.Connection, revision: str, analyzer: str = "stem") -> int:
    n = int(con.execute("SELECT count(*) FROM units").fetchone()[0])
    con.executemany(
        "INSERT OR REPLACE INTO meta VALUES (?,?)",
        # The tool version too: records made by another version are never carried over.
        [
            ("revision", revision),
            ("format", FORMAT),
            ("tool", __version__),
            ("units", str(n)),
            ("analyzer", analyzer),
        ],
    )
    return n


def build_index(
    path: Path, revision: str, records: Iterable[IndexRecord | JsonObject], analyzer: str = "stem"
) -> int:
    """Write a complete index for ``revision`` at ``path`` (a new file)."""
    return _write(path, revision, records, lambda con: con.executescript(_SCHEMA), analyzer)


def update_in_place(
    path: Path,
    revision: str,
    drop: set[str],
    records: Iterable[IndexRecord | JsonObject],
    finish: Callable[[sqlite3.Connection], object],
) -> int:
    """Turn the published index at ``path`` into ``revision``'s in one transaction: the
    rows of the units ``drop`` names are deleted (``_delete``), ``records`` inserted
    (``_insert``), ``finish`` brings the rest along (vectors).

    SQLite's rollback journal makes it all or nothing: readers see the previous revision
    until the commit, and a process killed halfway leaves a hot journal, which the next
    activation rolls back (``SqliteBackend._recover``) before it updates again.
    """
    # The driver that loads sqlite-vec only for an index that holds vec_units: probing for
    # it imports numpy, most of what one edit's activation cost over a no-op (issue 20).
    connect = vec.connect if vec.META_KEY in (index_meta(path) or {}) else sqlite3.connect
    with contextlib.closing(connect(path)) as con:
        con.isolation_level = None
        con.execute("PRAGMA journal_mode=DELETE")
        con.execute("PRAGMA synchronous=FULL")  # the journal, then the file, reach the disk
        con.execute("BEGIN IMMEDIATE")
        try:
            for unit_id in sorted(drop):
                _delete(con, unit_id)
            _insert(con, index_records(records))
            finish(con)
            n = _stamp(con, revision)
            con.execute("COMMIT")
        except BaseException:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise
        return n


def _write(
    path: Path,
    revision: str,
    records: Iterable[IndexRecord | JsonObject],
    start: Callable[[sqlite3.Connection], object],
    analyzer: str = "stem",
) -> int:
    # vec_units, if wanted, come after (_embed, vec.connect)
    with contextlib.closing(sqlite3.connect(path)) as con:
        # No rollback journal: the file is unpublished until complete, and a killed
        # build must leave nothing but its one temp file (which the next build removes).
        con.execute("PRAGMA journal_mode=OFF")
        con.execute("PRAGMA synchronous=OFF")  # publish() fsyncs the finished file
        start(con)
        _insert(con, index_records(records), analyzer)
        n = _stamp(con, revision, analyzer)
        con.commit()
        return n
