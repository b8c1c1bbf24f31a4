"""Catalog from SQLite database files (BIRD-style benchmarks), opened read-only by URI.

Each file is one schema: ``main`` unless the path is given as ``SCHEMA=PATH``.
Names match case-insensitively, as in SQLite.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from urllib.parse import quote

from evidence_tool.catalog.model import Catalog, Column, Relation
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


def _read_one(schema: str, path: Path) -> list[Relation]:
    if not path.is_file():
        raise AvailabilityError(
            f"the SQLite database {path} does not exist", code="E186", path=str(path)
        )
    # mode=ro: never create, never write, even a journal; immutable is not claimed.
    try:
        con = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise _unreadable(path, exc) from None
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
