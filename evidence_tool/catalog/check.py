"""Checks 1-3 of the catalog issue: every table and column a unit names exists.

1. ``applies_to.tables`` / ``applies_to.columns``;
2. the ``## Tables`` / ``## Columns`` / ``## Column`` fields of mapping, formula
   and enum units;
3. every column reference in a formula's SQL, resolved against the unit's own
   tables (applies_to tables, the tables of its applies_to columns and of its
   ``## Columns`` field): unknown -> E181, ambiguous -> E182, a table the unit
   does not name -> E183.

Check 4 (PostgreSQL only, run by workspace_check): each formula is prepared, never
executed, as ``SELECT <expr> FROM <its tables> WHERE false`` (the tables checks 1-3
resolved, schema-qualified); PostgreSQL's parse analysis then resolves every name,
operator and cast and says the result type (``numeric``, ``interval``, ...).  A refusal
is E188 with PostgreSQL's own message at the place of the formula's SQL it points at.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from evidence_tool.catalog.example_sql import ExampleSql, Resolver
from evidence_tool.catalog.fences import Position, SqlBlock, UnitPositions, locate, sql_blocks
from evidence_tool.catalog.model import Catalog, Relation, did_you_mean, quote_ident, split_name
from evidence_tool.catalog.pgtree import under
from evidence_tool.errors import Diagnostic, EvidenceWarning
from evidence_tool.record import Record
from evidence_tool.unit import (
    FIELDS,
    EnumPayload,
    ExamplePayload,
    FormulaPayload,
    MappingPayload,
    Unit,
)

_PREFIX = "SELECT "


class Use(NamedTuple):
    """A name of the unit as the catalog resolved it: what drift looks for."""

    schema: str
    relation: str
    column: str | None  # None: the relation itself (or a whole-row reference)
    formula: bool  # named by the formula (its SQL or its Columns field)
    pos: Position  # where the name is written in the unit file


@dataclass
class _Finder:
    catalog: Catalog
    unit: Unit
    path: str
    where: UnitPositions
    uses: list[Use] | None = None
    formula: bool = False  # the names being resolved belong to the formula

    def used(self, rel: Relation, column: str | None, pos: Position) -> None:
        if self.uses is not None:
            self.uses.append(Use(rel.schema, rel.name, column, self.formula, pos))

    def finding(self, code: str, message: str, pos: Position) -> Diagnostic:
        return Diagnostic(code, message, self.path, pos[0], pos[1], self.unit.id)

    def table(
        self, text: str, what: str, pos: Position, column: str | None = None
    ) -> tuple[Relation | None, Diagnostic | None]:
        parts = split_name(text)
        if not parts or len(parts) > 2:
            return None, None  # the unit format already refuses a malformed name
        schema, name = (parts[0], parts[1]) if len(parts) == 2 else (None, parts[0])
        rel = self.catalog.relation(schema, name)
        if rel is not None:
            if column is None:
                self.used(rel, None, pos)
            return rel, None
        near = self.catalog.near_relations(schema, name)
        if column is not None:  # a relation that holds the column is the better guess
            col = (split_name(column) or [""])[-1]
            holders = self.catalog.having_column(schema, col)
            near = [f"{h}.{quote_ident(col)}" for h in holders if h in near] or near
        named = f"{column}, whose table {text} is" if column else f"{text}, which is"
        return None, self.finding(
            "E180",
            f"{what} names {named} not a table or view of the catalog" + did_you_mean(near),
            pos,
        )

    def column(
        self, text: str, what: str, pos: Position
    ) -> tuple[Relation | None, Diagnostic | None]:
        parts = split_name(text)
        if not parts or len(parts) < 2:
            return None, None
        table_text = ".".join(quote_ident(p) for p in parts[:-1])
        rel, problem = self.table(table_text, what, pos, column=text)
        if rel is None:
            return None, problem
        return rel, self.in_table(rel, parts[-1], f"{what} names {text}, but", pos)

    def in_table(self, rel: Relation, column: str, what: str, pos: Position) -> Diagnostic | None:
        """``rel``'s column of that name, recorded as used; else E181 (``what`` is the
        message up to the relation's name)."""
        found = rel.column(column, fold_case=self.catalog.fold_case)
        if found is not None:
            self.used(rel, found.name, pos)
            return None
        return self.finding(
            "E181",
            f"{what} {rel.qualified} has no column {quote_ident(column)}"
            + did_you_mean(rel.near_columns(column)),
            pos,
        )


@dataclass(frozen=True)
class UnitCheck:
    findings: list[Diagnostic]
    names: int  # table names, column names and formula references resolved
    tables: tuple[Relation, ...] = ()  # the unit's own tables, as the catalog holds them
    # An example's SQL blocks that are each one read-only query, for the server to prepare.
    queries: tuple[tuple[SqlBlock, ExampleSql], ...] = ()


def check_unit(
    catalog: Catalog, unit: Unit, text: str, path: str, uses: list[Use] | None = None
) -> UnitCheck:
    """Every catalog finding about one valid unit, pointing at the name as written;
    ``uses`` collects the relations and columns its names resolved to."""
    f = _Finder(catalog, unit, path, _located(text, unit.kind, unit.language), uses)
    out: list[Diagnostic] = []
    tables: dict[tuple[str, str], Relation] = {}
    names = 0

    def keep(found: tuple[Relation | None, Diagnostic | None]) -> None:
        nonlocal names
        names += 1
        rel, problem = found
        if problem is not None:
            out.append(problem)
        if rel is not None:
            tables.setdefault((rel.schema, rel.name), rel)

    applies = unit.metadata.applies_to
    for i, t in enumerate(applies.tables):
        keep(f.table(t, "applies_to.tables", f.where.applies("tables", i)))
    for i, c in enumerate(applies.columns):
        keep(f.column(c, "applies_to.columns", f.where.applies("columns", i)))
    payload = unit.payload
    heading = {spec.name: spec.heading(unit.language) for spec in FIELDS[unit.kind]}
    if isinstance(payload, MappingPayload):
        for t in payload.tables:
            keep(f.table(t, f"## {heading['tables']}", f.where.value("tables", t)))
    if isinstance(payload, MappingPayload | FormulaPayload):
        f.formula = isinstance(payload, FormulaPayload)
        for c in payload.columns:
            keep(f.column(c, f"## {heading['columns']}", f.where.value("columns", c)))
    if isinstance(payload, EnumPayload):
        col = payload.column
        keep(f.column(col, f"## {heading['column']}", f.where.value("column", col)))
    if isinstance(payload, FormulaPayload):
        refs, problems = _formula_refs(f, payload.sql, list(tables.values()))
        names += refs
        out.extend(problems)
    queries: list[tuple[SqlBlock, ExampleSql]] = []
    if isinstance(payload, ExamplePayload) and catalog.kind != "sqlite":
        # SQLite's own engine reads SQLite's dialect (example_sqlite, run by the workspace
        # check); DDL and PostgreSQL catalogs speak PostgreSQL's.
        f.formula = False
        for block in sql_blocks(text):
            done = Resolver(catalog, path, unit.id, block, f.used).check()
            names += done.names
            out.extend(done.findings)
            queries.append((block, done))
    return UnitCheck(out, names, tuple(tables.values()), tuple(queries))


@functools.lru_cache(maxsize=8)
def _located(text: str, kind: str, language: str) -> UnitPositions:
    """Positions, remembered for the few units just checked: drift checks each unit a
    second time, against the recorded catalog, right after the first (read-only use)."""
    return locate(text, kind, language)


def _column_refs(sql: str) -> Iterator[tuple[list[str], int]]:
    """(name parts, character offset in ``sql``) of every column reference."""
    from pglast import parser

    full = _PREFIX + sql
    try:
        tree = json.loads(parser.parse_sql_json(full))
    except parser.ParseError:  # a valid unit's SQL parses (E115); nothing to resolve otherwise
        return
    encoded = full.encode("utf-8")
    for ref in under(tree, "ColumnRef"):
        names = [x.get("String", {}).get("sval") for x in ref.get("fields", [])]
        if "fields" in ref and all(isinstance(n, str) for n in names):
            at = len(encoded[: ref.get("location", len(_PREFIX))].decode("utf-8", "ignore"))
            yield names, max(at - len(_PREFIX), 0)


def _formula_refs(f: _Finder, sql: str, tables: list[Relation]) -> tuple[int, list[Diagnostic]]:
    """Resolve every column reference of a formula; the findings of those that do not."""
    out: list[Diagnostic] = []
    refs = sorted(_column_refs(sql), key=lambda r: r[1])
    for names, offset in refs:
        pos = sql_position(f.where, sql, offset)
        what = f"the formula's column reference {'.'.join(quote_ident(n) for n in names)}"
        if len(names) == 1:
            problem = _resolve_bare(f, names[0], what, tables, pos)
        else:
            found = _qualifying_table(f, names, what, tables, pos)
            problem = (
                found
                if isinstance(found, Diagnostic)
                else f.in_table(found, names[-1], f"{what}:", pos)
            )
        if problem is not None:
            out.append(problem)
    return len(refs), out


def _resolve_bare(
    f: _Finder, column: str, what: str, tables: list[Relation], pos: Position
) -> Diagnostic | None:
    """An unqualified name: the one unit table having that column, else a whole-row
    reference to a table of that name, else why it resolves to nothing (or to several)."""
    fold = f.catalog.fold_case
    having = [(r, c) for r in tables if (c := r.column(column, fold_case=fold)) is not None]
    if len(having) == 1:
        f.used(having[0][0], having[0][1].name, pos)
        return None
    whole = [r for r in tables if f.catalog.same(r.name, column)]
    if not having and whole:
        f.used(whole[0], None, pos)
        return None  # a whole-row reference, count(admissions): PostgreSQL accepts it
    if len(having) > 1:
        return f.finding(
            "E182",
            f"{what} is ambiguous: {', '.join(r.qualified for r, _ in having)} all have a "
            f"column {quote_ident(column)}; qualify it with its table",
            pos,
        )
    if not tables:
        return f.finding(
            "E183",
            f"{what} cannot be resolved: the unit names no table (applies_to.tables) to find it in",
            pos,
        )
    near = sorted({n for r in tables for n in r.near_columns(column)})
    return f.finding(
        "E181",
        f"{what}: none of the unit's tables ({', '.join(r.qualified for r in tables)}) "
        f"has a column {quote_ident(column)}" + did_you_mean(near[:3]),
        pos,
    )


def _qualifying_table(
    f: _Finder, names: list[str], what: str, tables: list[Relation], pos: Position
) -> Relation | Diagnostic:
    """The one unit table a qualified reference names, or why there is not exactly one
    (not in the catalog E180, not a unit table E183, ambiguous E182)."""
    schema, table = names[-3] if len(names) >= 3 else None, names[-2]
    same = [
        r
        for r in tables
        if f.catalog.same(r.name, table) and (schema is None or f.catalog.same(r.schema, schema))
    ]
    if not same:
        qualified = ".".join(quote_ident(n) for n in names[:-1])
        rel = f.catalog.relation(schema, table)
        if rel is None:
            return f.finding(
                "E180",
                f"{what} names {qualified}, which is not a table or view of the catalog"
                + did_you_mean(f.catalog.near_relations(schema, table)),
                pos,
            )
        return f.finding(
            "E183",
            f"{what} names {qualified}, which is not among the unit's tables; add "
            f"{rel.qualified} to applies_to.tables",
            pos,
        )
    if len(same) > 1:
        return f.finding(
            "E182",
            f"{what} is ambiguous: {', '.join(r.qualified for r in same)} are all "
            f"named {quote_ident(table)}; qualify it with its schema",
            pos,
        )
    return same[0]


def sql_position(where: UnitPositions, sql: str, offset: int) -> Position:
    if where.sql_line is None:
        return where.headings.get("sql"), 1
    return SqlBlock(sql, where.sql_line, 0).position(offset)


@dataclass(frozen=True)
class Formula:
    unit: Unit
    text: str  # the unit file, for positions
    path: str
    tables: tuple[Relation, ...]

    @property
    def sql(self) -> str:
        assert isinstance(self.unit.payload, FormulaPayload)
        return self.unit.payload.sql

    def statement(self) -> str:
        """The formula as PostgreSQL sees it; a newline ends a trailing ``--`` comment."""
        source = ", ".join(r.qualified for r in self.tables)
        return _PREFIX + self.sql + "\n" + (f"FROM {source}\n" if source else "") + "WHERE false"


class TypeResult(Record, frozen=True):
    unit_id: str
    path: str
    type: str | None  # None when PostgreSQL refused the formula or gave up


def finding(f: Formula, error: str, position: int | None) -> Diagnostic:
    """E188 at the formula's character PostgreSQL pointed at (else at the SQL fence)."""
    where = locate(f.text, f.unit.kind, f.unit.language)
    offset = position - 1 - len(_PREFIX) if position is not None else -1
    if 0 <= offset <= len(f.sql):
        line, column = sql_position(where, f.sql, offset)
    else:  # in the FROM we added, or no position: the formula as a whole
        line, column = (where.sql_line or where.headings.get("sql"), 1)
    why = f"the formula does not type-check in PostgreSQL: {error}"
    return Diagnostic("E188", why, f.path, line, column, f.unit.id)


def gave_up(f: Formula, why: str) -> EvidenceWarning:
    line = locate(f.text, f.unit.kind, f.unit.language).sql_line
    message = f"{f.unit.id}: the formula was not type-checked: PostgreSQL stopped it at {why}"
    return EvidenceWarning(message, f.path, line, code="W188")
