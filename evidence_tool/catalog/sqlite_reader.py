"""Catalog from SQLite database files (BIRD-style benchmarks), opened read-only by URI.

Each file is one schema: ``main`` unless the path is given as ``SCHEMA=PATH``.
Names match case-insensitively, as in SQLite.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from evidence_tool.catalog import values
from evidence_tool.catalog.model import Catalog, Column, Relation
from evidence_tool.catalog.values import SAMPLE_LIMIT, Sampled, ValueSample
from evidence_tool.errors import AvailabilityError

_SCHEMA_PREFIX = re.compile(r"^([A-Za-z_][A-Za-z0-9_$]*)=(.+)$", re.S)


def split_mapping(given: str) -> tuple[str, str]:
    """``clinical=/data/c.db`` -> ('clinical', '/data/c.db'); a bare path is schema ``main``."""
    m = _SCHEMA_PREFIX.match(given)
    if m and not Path(given).exists():
        return m.group(1).lower(), m.group(2)
    return "main", given


def read_sqlite(paths: list[str], search_path: tuple[str, ...] = ("main",)) -> Catalog:
    if not paths:
        raise AvailabilityError(
            "no SQLite database to read: pass --sqlite PATH (or SCHEMA=PATH) or set "
            "evidence.catalog.paths in the installation descriptor",
            code="E186",
        )
    relations: list[Relation] = []
    seen: dict[str, str] = {}
    for given in paths:
        schema, path = split_mapping(given)
        if schema in seen:
            raise AvailabilityError(
                f"two SQLite files map to schema {schema}: {seen[schema]} and {path}; "
                "give each file its own SCHEMA=PATH",
                code="E186",
                path=path,
            )
        seen[schema] = path
        relations.extend(_read_one(schema, Path(path)))
    path_order = tuple(search_path) + tuple(s for s in seen if s not in search_path)
    return Catalog("sqlite", tuple(relations), path_order, fold_case=True, sources=tuple(paths))


def _connect(path: Path) -> sqlite3.Connection:
    if not path.is_file():
        raise AvailabilityError(
            f"the SQLite database {path} does not exist", code="E186", path=str(path)
        )
    try:
        return sqlite3.connect(read_only_uri(path), uri=True)
    except sqlite3.Error as exc:
        raise _unreadable(path, exc) from None


def read_only_uri(path: str | Path) -> str:
    """mode=ro: never create, never write, even a journal; immutable is not claimed."""
    return f"file:{quote(str(Path(path).resolve()))}?mode=ro"


@contextmanager
def time_limit(con: sqlite3.Connection) -> Iterator[Callable[[], bool]]:
    """The statements run meanwhile stopped after ``SAMPLE_TIMEOUT_S`` (a progress handler);
    yields whether the limit has passed."""
    deadline = time.monotonic() + values.SAMPLE_TIMEOUT_S
    con.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
    try:
        yield lambda: time.monotonic() > deadline
    finally:
        con.set_progress_handler(None, 0)


def _read_one(schema: str, path: Path) -> list[Relation]:
    con = _connect(path)
    try:
        rows = con.execute(
            "SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') "
            "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
        ).fetchall()
        out = []
        for name, kind in rows:
            info = con.execute("SELECT name, type FROM pragma_table_info(?)", (name,)).fetchall()
            cols = tuple(Column(str(c), str(t or "").lower()) for c, t in info)
            out.append(Relation(schema, str(name), str(kind), cols))
        return out
    except sqlite3.Error as exc:
        raise _unreadable(path, exc) from None
    finally:
        con.close()


def _unreadable(path: Path, exc: Exception) -> AvailabilityError:
    return AvailabilityError(
        f"the SQLite database {path} cannot be read ({exc}); check it is an SQLite 3 file",
        code="E186",
        path=str(path),
    )


def sample_sqlite(paths: list[str], samples: list[ValueSample]) -> list[Sampled]:
    """Check 5 on SQLite: each column's most frequent values and its documented ones,
    one bounded query each, stopped by a progress handler after ``SAMPLE_TIMEOUT_S``."""
    files = dict(split_mapping(p) for p in paths)
    out: list[Sampled] = []
    cons: dict[str, sqlite3.Connection] = {}
    try:
        for s in samples:
            schema = s.relation.schema
            if schema not in cons:
                cons[schema] = _connect(Path(files[schema]))
            out.append(_sample_one(cons[schema], s))
    finally:
        for con in cons.values():
            con.close()
    return out


def _sample_one(con: sqlite3.Connection, s: ValueSample) -> Sampled:
    col = _quote(s.column)
    marks = ", ".join("?" for _ in s.documented) or "NULL"
    query = (
        f"SELECT v, n FROM (SELECT CAST({col} AS TEXT) AS v, count(*) AS n, "
        f"row_number() OVER (ORDER BY count(*) DESC, CAST({col} AS TEXT)) AS r "
        f"FROM {_quote(s.relation.name)} WHERE {col} IS NOT NULL GROUP BY 1) "
        f"WHERE r <= ? OR v IN ({marks})"
    )
    with time_limit(con) as passed:
        try:
            rows = con.execute(query, (SAMPLE_LIMIT, *s.documented)).fetchall()
        except sqlite3.OperationalError as exc:
            if passed():
                return Sampled(
                    None, f"the query ran past its {values.SAMPLE_TIMEOUT_S:.0f} s limit"
                )
            return Sampled(None, f"SQLite refused the query: {exc}")
    return Sampled({str(v): int(n) for v, n in rows if v is not None})


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
