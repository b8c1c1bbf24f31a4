"""Catalog from DDL files, read with PostgreSQL's own parser (pglast); no database needed.

Statements apply in file order: CREATE TABLE / VIEW / TABLE AS, ALTER TABLE
(ADD, DROP, ALTER TYPE of a column), RENAME of a relation or a column, DROP.
Statements that do not change the relations (CREATE SCHEMA, INSERT, GRANT,
COMMENT, indexes, ...) are skipped.  A statement that does not parse, or that
names a relation not defined before it, is an E185 finding at its file:line,
and the rest of the file is still read.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from evidence_tool.catalog.model import Catalog
from evidence_tool.catalog.pgtree import Node, type_name
from evidence_tool.catalog.statements import DdlState, apply_statement
from evidence_tool.errors import AvailabilityError, Diagnostic

MAX_DDL_BYTES = 64 * 1024 * 1024
MAX_FINDINGS_PER_FILE = 20  # a garbage file says so a few times, not a million


def read_ddl(
    paths: list[str], search_path: tuple[str, ...] = ("public",)
) -> tuple[Catalog, list[Diagnostic]]:
    """The catalog the DDL files describe, and every statement it could not use."""
    files = _sql_files(paths)
    state = DdlState(search_path)
    for path in files:
        _read_file(path, state)
    catalog = Catalog(
        "ddl", tuple(state.relations.values()), search_path, sources=tuple(str(p) for p in files)
    )
    return catalog, state.findings


def _sql_files(paths: list[str]) -> list[Path]:
    if not paths:
        raise AvailabilityError(
            "no DDL file to read: pass --ddl PATH (a file or a folder of *.sql) or set "
            "evidence.catalog.paths in the installation descriptor",
            code="E186",
        )
    out: list[Path] = []
    for given in paths:
        p = Path(given)
        if p.is_dir():
            found = sorted(q for q in p.glob("*.sql") if q.is_file())
            if not found:
                raise AvailabilityError(
                    f"the folder {p} holds no *.sql file", code="E186", path=str(p)
                )
            out.extend(found)
        elif p.is_file():
            out.append(p)
        else:
            raise AvailabilityError(f"the DDL file {p} does not exist", code="E186", path=str(p))
    return out


def _load_text(path: Path, state: DdlState) -> str | None:
    try:
        size = os.stat(path).st_size
        if size > MAX_DDL_BYTES:
            limit = f"more than the {MAX_DDL_BYTES} a catalog file may hold"
            _refuse(state, path, f"has {size} bytes, {limit}; split it")
            return None
        data = path.read_bytes()
    except OSError as exc:
        raise AvailabilityError(
            f"the DDL file {path} cannot be read: {exc.strerror}", code="E186", path=str(path)
        ) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        _refuse(state, path, "is not UTF-8 text", data.count(b"\n", 0, exc.start) + 1)
        return None


def _refuse(state: DdlState, path: Path, why: str, line: int | None = None) -> None:
    """E185 about the whole file (at ``line``, column 1, when there is one)."""
    state.findings.append(
        Diagnostic("E185", f"the DDL file {why}", str(path), line, 1 if line else None)
    )


def _read_file(path: Path, state: DdlState) -> None:
    text = _load_text(path, state)
    if text is None:
        return
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        return _refuse(state, path, "contains a NUL byte", line)
    try:
        pieces = _statements(text)
    except Exception as exc:  # the scanner refuses the file (an unterminated quote, ...)
        why = f"the DDL file cannot be split into statements: {_reason(exc)}"
        state.findings.append(Diagnostic("E185", why, str(path), *_where(text, exc, 0)))
        return
    before = len(state.findings)
    for start, sql in pieces:
        if len(state.findings) - before >= MAX_FINDINGS_PER_FILE:
            why = f"more than {MAX_FINDINGS_PER_FILE} statements of this file were not understood"
            state.findings.append(
                Diagnostic("E185", f"{why}; the rest of it is skipped", str(path))
            )
            return
        _read_statement(path, text, start, sql, state)


_COMMENTS = ("SQL_COMMENT", "C_COMMENT")


def _statements(text: str) -> list[tuple[int, str]]:
    """(character offset, text) of each statement.  The whole file is parsed at once
    when it can be (so a function body's ';' never splits it); else it is cut at the
    scanner's top-level ';' so that one bad statement does not hide the others."""
    from pglast import parser

    try:  # the parser's own split: character slices, comments left out
        return [(sl.start, text[sl]) for sl in parser.split(text, only_slices=True)]
    except Exception:
        pass  # a statement does not parse: cut at the scanner's ';' instead
    pieces: list[tuple[int, str]] = []
    start: int | None = None
    for tok in parser.scan(text):
        if tok.name in _COMMENTS:
            continue
        if start is None:
            start = tok.start
        if tok.name == "ASCII_59":
            if tok.start > start:
                pieces.append((start, text[start : tok.start]))
            start = None
    if start is not None:
        pieces.append((start, text[start:]))
    return pieces


def _read_statement(path: Path, text: str, start: int, sql: str, state: DdlState) -> None:
    from pglast import parser

    try:
        tree = json.loads(parser.parse_sql_json(sql))
    except Exception as exc:  # ParseError, or pglast's plain errors on odd input
        why = f"PostgreSQL cannot parse this statement: {_reason(exc)}"
        state.findings.append(Diagnostic("E185", why, str(path), *_where(text, exc, start)))
        return
    for stmt in tree.get("stmts", []):
        node = stmt.get("stmt", {})
        problem = apply_statement(Node(node), state)
        if problem:
            # Counted only for a finding (at most MAX_FINDINGS_PER_FILE a file): counting
            # for every statement made a large file quadratic.
            line = text.count("\n", 0, start) + 1 + _leading_lines(sql)
            state.findings.append(Diagnostic("E185", problem, str(path), line, 1))


def _leading_lines(sql: str) -> int:
    """Lines of blank text and comments before the statement's first token."""
    stripped = sql.lstrip()
    return sql.count("\n", 0, len(sql) - len(stripped)) if stripped else 0


def _reason(exc: Exception) -> str:
    return str(exc.args[0]) if exc.args else type(exc).__name__


def _where(text: str, exc: Exception, start: int) -> tuple[int, int]:
    at = exc.args[1] if len(exc.args) > 1 and isinstance(exc.args[1], int) else 0
    offset = min(start + at, len(text))
    return text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)


__all__ = ["read_ddl", "type_name"]
