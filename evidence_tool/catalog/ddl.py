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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evidence_tool.catalog.model import Catalog, Column, Relation
from evidence_tool.catalog.views import view_columns
from evidence_tool.errors import AvailabilityError, Diagnostic

MAX_DDL_BYTES = 64 * 1024 * 1024
MAX_FINDINGS_PER_FILE = 20  # a garbage file says so a few times, not a million

_TYPE_NAMES = {
    "int8": "bigint",
    "int4": "integer",
    "int2": "smallint",
    "float8": "double precision",
    "float4": "real",
    "bool": "boolean",
    "bpchar": "character",
    "varchar": "character varying",
    "timestamptz": "timestamp with time zone",
    "timestamp": "timestamp without time zone",
    "timetz": "time with time zone",
    "time": "time without time zone",
}


def type_name(node: dict[str, Any]) -> str:
    """A pglast TypeName as PostgreSQL's format_type prints it (int4 -> integer)."""
    names = [n.get("String", {}).get("sval", "") for n in node.get("names", [])]
    if len(names) == 2 and names[0] == "pg_catalog":
        names = names[1:]
    text = ".".join(_TYPE_NAMES.get(n, n) for n in names) if len(names) == 1 else ".".join(names)
    if len(names) == 1:
        text = _TYPE_NAMES.get(names[0], names[0])
    mods = [m["A_Const"]["ival"].get("ival", 0) for m in node.get("typmods", []) if _is_int(m)]
    if mods and not text.startswith(("timestamp", "time ")):
        text += "(" + ",".join(str(m) for m in mods) + ")"
    return text + "[]" * len(node.get("arrayBounds", []))


def _is_int(mod: dict[str, Any]) -> bool:
    return "ival" in mod.get("A_Const", {})


@dataclass
class _State:
    search_path: tuple[str, ...]
    relations: dict[tuple[str, str], Relation] = field(default_factory=dict)
    findings: list[Diagnostic] = field(default_factory=list)

    def find(self, rv: dict[str, Any]) -> Relation | None:
        schema = rv.get("schemaname")
        if schema:
            return self.relations.get((schema, rv["relname"]))
        for s in self.search_path:
            if (s, rv["relname"]) in self.relations:
                return self.relations[(s, rv["relname"])]
        return None

    def key(self, rv: dict[str, Any]) -> tuple[str, str]:
        return (rv.get("schemaname") or self.search_path[0], rv["relname"])


def read_ddl(
    paths: list[str], search_path: tuple[str, ...] = ("public",)
) -> tuple[Catalog, list[Diagnostic]]:
    """The catalog the DDL files describe, and every statement it could not use."""
    files = _sql_files(paths)
    state = _State(search_path)
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


def _load_text(path: Path, state: _State) -> str | None:
    try:
        size = os.stat(path).st_size
        if size > MAX_DDL_BYTES:
            state.findings.append(
                Diagnostic(
                    "E185",
                    f"the DDL file has {size} bytes, more than the "
                    f"{MAX_DDL_BYTES} a catalog file may hold; split it",
                    str(path),
                )
            )
            return None
        data = path.read_bytes()
    except OSError as exc:
        raise AvailabilityError(
            f"the DDL file {path} cannot be read: {exc.strerror}", code="E186", path=str(path)
        ) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        state.findings.append(
            Diagnostic("E185", "the DDL file is not UTF-8 text", str(path), line, 1)
        )
        return None


def _read_file(path: Path, state: _State) -> None:

    text = _load_text(path, state)
    if text is None:
        return
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        state.findings.append(
            Diagnostic("E185", "the DDL file contains a NUL byte", str(path), line, 1)
        )
        return
    try:
        pieces = _statements(text)
    except Exception as exc:  # the scanner refuses the file (an unterminated quote, ...)
        state.findings.append(
            Diagnostic(
                "E185",
                f"the DDL file cannot be split into statements: {_reason(exc)}",
                str(path),
                *_where(text, exc, 0),
            )
        )
        return
    before = len(state.findings)
    for start, sql in pieces:
        if len(state.findings) - before >= MAX_FINDINGS_PER_FILE:
            state.findings.append(
                Diagnostic(
                    "E185",
                    f"more than {MAX_FINDINGS_PER_FILE} statements of this file were not "
                    "understood; the rest of it is skipped",
                    str(path),
                )
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


def _read_statement(path: Path, text: str, start: int, sql: str, state: _State) -> None:
    from pglast import parser

    line = text.count("\n", 0, start) + 1 + _leading_lines(sql)
    try:
        tree = json.loads(parser.parse_sql_json(sql))
    except Exception as exc:  # ParseError, or pglast's plain errors on odd input
        where = _where(text, exc, start)
        state.findings.append(
            Diagnostic(
                "E185", f"PostgreSQL cannot parse this statement: {_reason(exc)}", str(path), *where
            )
        )
        return
    for stmt in tree.get("stmts", []):
        node = stmt.get("stmt", {})
        problem = _apply(node, state)
        if problem:
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


def _apply(node: dict[str, Any], state: _State) -> str | None:
    """Apply one statement to the relations; a reason when it cannot be applied."""
    if "CreateStmt" in node:
        return _create_table(node["CreateStmt"], state)
    if "ViewStmt" in node:
        v = node["ViewStmt"]
        return _define_view(v["view"], v.get("aliases", []), v["query"], v.get("replace"), state)
    if "CreateTableAsStmt" in node:
        c = node["CreateTableAsStmt"]
        into = c["into"]
        kind = "view" if c.get("objtype") == "OBJECT_MATVIEW" else "table"
        return _define_view(into["rel"], into.get("colNames", []), c["query"], False, state, kind)
    if "AlterTableStmt" in node:
        return _alter(node["AlterTableStmt"], state)
    if "RenameStmt" in node:
        return _rename(node["RenameStmt"], state)
    if "DropStmt" in node:
        return _drop(node["DropStmt"], state)
    return None


def _create_table(c: dict[str, Any], state: _State) -> str | None:
    rv = c["relation"]
    key = state.key(rv)
    if key in state.relations:
        if c.get("if_not_exists"):
            return None
        return f"relation {key[0]}.{key[1]} is created twice; the later definition is kept"
    columns: list[Column] = []
    for parent in c.get("inhRelations", []):
        found = state.find(parent["RangeVar"])
        if found is None:
            return f"CREATE TABLE {key[0]}.{key[1]} inherits from {parent['RangeVar']['relname']}, which is not defined before it"
        columns.extend(found.columns)
    for elt in c.get("tableElts", []):
        if "ColumnDef" in elt:
            d = elt["ColumnDef"]
            columns.append(Column(d["colname"], type_name(d["typeName"])))
        elif "TableLikeClause" in elt:
            found = state.find(elt["TableLikeClause"]["relation"])
            if found is None:
                return f"CREATE TABLE {key[0]}.{key[1]} (LIKE ...) names a relation not defined before it"
            columns.extend(found.columns)
    state.relations[key] = Relation(key[0], key[1], "table", tuple(columns))
    return None


def _define_view(
    rv: dict[str, Any],
    aliases: list[Any],
    query: dict[str, Any],
    replace: Any,
    state: _State,
    kind: str = "view",
) -> str | None:
    key = state.key(rv)
    if key in state.relations and not replace:
        return f"relation {key[0]}.{key[1]} is created twice; the later definition is kept"
    columns, problem = view_columns(query, state.find)
    names = [a["String"]["sval"] for a in aliases]
    if names:
        if len(names) > len(columns):
            return f"{kind} {key[0]}.{key[1]} names {len(names)} columns but its query has {len(columns)}"
        columns = [Column(n, c.type) for n, c in zip(names, columns, strict=False)] + columns[
            len(names) :
        ]
    state.relations[key] = Relation(key[0], key[1], kind, tuple(columns))
    return problem


def _alter(a: dict[str, Any], state: _State) -> str | None:
    rv = a["relation"]
    rel = state.find(rv)
    if rel is None:
        return None if a.get("missing_ok") else _unknown(rv, "ALTER TABLE")
    columns = list(rel.columns)
    for cmd in (c["AlterTableCmd"] for c in a.get("cmds", []) if "AlterTableCmd" in c):
        sub = cmd.get("subtype")
        names = [c.name for c in columns]
        if sub == "AT_AddColumn":
            d = cmd["def"]["ColumnDef"]
            if d["colname"] in names:
                if cmd.get("missing_ok"):
                    continue
                return f"ALTER TABLE adds column {d['colname']}, which {rel.qualified} already has"
            columns.append(Column(d["colname"], type_name(d["typeName"])))
        elif sub == "AT_DropColumn":
            if cmd["name"] not in names:
                if cmd.get("missing_ok"):
                    continue
                return (
                    f"ALTER TABLE drops column {cmd['name']}, which {rel.qualified} does not have"
                )
            columns = [c for c in columns if c.name != cmd["name"]]
        elif sub == "AT_AlterColumnType":
            if cmd["name"] not in names:
                return f"ALTER TABLE changes the type of column {cmd['name']}, which {rel.qualified} does not have"
            new = type_name(cmd["def"]["ColumnDef"]["typeName"])
            columns = [Column(c.name, new) if c.name == cmd["name"] else c for c in columns]
    _replace(state, rel, Relation(rel.schema, rel.name, rel.kind, tuple(columns)))
    return None


def _rename(r: dict[str, Any], state: _State) -> str | None:
    rv = r.get("relation")
    kind = r.get("renameType")
    if rv is None or kind not in ("OBJECT_TABLE", "OBJECT_VIEW", "OBJECT_COLUMN", "OBJECT_MATVIEW"):
        return None
    rel = state.find(rv)
    if rel is None:
        return None if r.get("missing_ok") else _unknown(rv, "ALTER ... RENAME")
    if kind == "OBJECT_COLUMN":
        if rel.column(r["subname"]) is None:
            return f"RENAME COLUMN {r['subname']}: {rel.qualified} has no such column"
        cols = tuple(
            Column(r["newname"], c.type) if c.name == r["subname"] else c for c in rel.columns
        )
        _replace(state, rel, Relation(rel.schema, rel.name, rel.kind, cols))
    else:
        del state.relations[(rel.schema, rel.name)]
        state.relations[(rel.schema, r["newname"])] = Relation(
            rel.schema, r["newname"], rel.kind, rel.columns
        )
    return None


def _drop(d: dict[str, Any], state: _State) -> str | None:
    if d.get("removeType") not in ("OBJECT_TABLE", "OBJECT_VIEW", "OBJECT_MATVIEW"):
        return None
    for obj in d.get("objects", []):
        names = [n["String"]["sval"] for n in obj.get("List", {}).get("items", [])]
        rv = {"schemaname": names[-2] if len(names) > 1 else None, "relname": names[-1]}
        rel = state.find(rv)
        if rel is None:
            if not d.get("missing_ok"):
                return _unknown(rv, "DROP")
            continue
        del state.relations[(rel.schema, rel.name)]
    return None


def _replace(state: _State, old: Relation, new: Relation) -> None:
    state.relations[(old.schema, old.name)] = new


def _unknown(rv: dict[str, Any], what: str) -> str:
    name = f"{rv['schemaname']}.{rv['relname']}" if rv.get("schemaname") else rv["relname"]
    return f"{what} names {name}, which no earlier statement defines"
