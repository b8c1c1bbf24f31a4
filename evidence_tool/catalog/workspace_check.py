"""``check`` over a whole workspace: read the catalog, check every valid unit.

Checks 1-3 run against every kind of catalog; against a live PostgreSQL each
formula is also type-checked (check 4), and with ``sample_values`` each enum
unit's values are compared with the stored ones (check 5, PostgreSQL or SQLite).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field

from evidence_tool.catalog.check import Formula, TypeResult, check_unit, finding, gave_up
from evidence_tool.catalog.example_sql import REFUSED, ExampleSql
from evidence_tool.catalog.fences import SqlBlock, sql_blocks
from evidence_tool.catalog.model import Catalog
from evidence_tool.catalog.postgres import Described, LiveCatalog
from evidence_tool.catalog.results import Ran
from evidence_tool.catalog.settings import CatalogSettings, open_catalog
from evidence_tool.catalog.values import Sampled, ValueSample, compare, sample_of
from evidence_tool.errors import Diagnostic, EvidenceWarning, UsageError
from evidence_tool.jsonvalue import View
from evidence_tool.unit import ExamplePayload, FormulaPayload, Unit
from evidence_tool.workspace import validate_workspace
from evidence_tool.workspace.curated import CuratedFile
from evidence_tool.workspace.scan import Progress

# Called with each checked file and the codes of its findings (catalog.review).
Visit = Callable[[CuratedFile, list[str]], None]


@dataclass
class CatalogCheck(View):
    """What ``check`` found; its JSON is the command's --json result (the drift beside it),
    each optional key written only when the check did what it counts."""

    _keys = (
        "units_checked=units",
        "names_checked=names",
        "findings",
        "examples_checked",
        "catalog=catalog_summary",
        "example_results?",
        "formula_types?",
        "round_trips?",  # exchanges with a live PostgreSQL
        "enums_sampled?=values_checked",
    )
    catalog: Catalog
    units: int = 0
    names: int = 0  # names resolved: a clean run over nothing would say 0
    errors: list[Diagnostic] = field(default_factory=list)
    warnings: list[EvidenceWarning] = field(default_factory=list)
    types: list[TypeResult] = field(default_factory=list)  # check 4, PostgreSQL only
    values_checked: int | None = None  # enum units compared (check 5), None if not asked
    round_trips: int | None = None  # exchanges with a live PostgreSQL
    formulas: list[Formula] = field(default_factory=list)
    enums: list[tuple[Unit, str, str]] = field(default_factory=list)
    # Example SQL blocks: (unit, path, block, what the name check found) for the server.
    queries: list[tuple[Unit, str, SqlBlock, ExampleSql]] = field(default_factory=list)
    sqlite_examples: list[tuple[Unit, str, SqlBlock]] = field(default_factory=list)
    examples_checked: int = 0  # SQL blocks of example units checked
    executed: list[Ran] = field(default_factory=list)  # check --execute: each query run
    checked: list[tuple[CuratedFile, list[Diagnostic]]] = field(default_factory=list)

    @property
    def findings(self) -> dict[str, int]:
        return codes_of(self.errors)

    @property
    def catalog_summary(self) -> dict[str, object]:
        return self.catalog.summary()

    @property
    def example_results(self) -> tuple[Ran, ...]:  # check --execute
        return tuple(self.executed)

    @property
    def formula_types(self) -> list[TypeResult] | None:  # PostgreSQL's check 4, even when empty
        return list(self.types) if self.catalog.kind == "postgres" else None


def codes_of(findings: list[Diagnostic]) -> dict[str, int]:
    """How many findings of each code, in the order the codes first appear."""
    return dict(Counter(d.code for d in findings))


def check_workspace(
    root: str | os.PathLike[str],
    settings: CatalogSettings,
    progress: Progress | None = None,
    *,
    sample_values: bool = False,
    visit: Visit | None = None,
    execute: bool = False,
) -> CatalogCheck:
    """Validate the units, then check every valid one against the catalog; with
    ``execute`` (PostgreSQL, SQLite) each example that checked clean is also run,
    read-only, and its bounded result compared with the last run's (results.py)."""
    if execute and settings.kind == "ddl":
        raise UsageError(
            "--execute runs each example's query on the warehouse, and DDL files hold no "
            "rows: check against --catalog postgres or --catalog sqlite, or run without "
            "--execute"
        )
    if sample_values and settings.kind == "ddl":
        raise UsageError(
            "--sample-values compares enum values with the values the warehouse stores, and "
            "DDL files store none: check against --catalog postgres or --catalog sqlite, or "
            "run without --sample-values"
        )
    if settings.kind == "postgres":
        from evidence_tool.catalog.postgres import open_live

        with open_live(settings.dsn_env, settings.search_path) as live:
            result = _check_names(root, live.catalog(), [], progress)
            _type_check(result, live.describe)
            _prepare_examples(result, live)
            if sample_values:
                _sample(result, live.sample)
            if execute:
                _run_live(result, live)
            result.round_trips = live.round_trips
        if execute:
            _record(root, result)
        return _finish(result, visit)
    catalog, catalog_findings = open_catalog(settings)
    result = _check_names(root, catalog, catalog_findings, progress)
    if settings.kind == "sqlite" and result.sqlite_examples:
        _sqlite_examples(result, list(settings.paths), execute)
    if execute:
        _record(root, result)
    if sample_values:
        from evidence_tool.catalog.sqlite_reader import sample_sqlite

        _sample(result, lambda s: sample_sqlite(list(settings.paths), s))
    return _finish(result, visit)


def _check_names(
    root: str | os.PathLike[str],
    catalog: Catalog,
    catalog_findings: list[Diagnostic],
    progress: Progress | None,
) -> CatalogCheck:
    """Checks 1-3 on every valid unit; formulas and enums kept for checks 4 and 5."""
    scanned = validate_workspace(root, progress)
    result = CatalogCheck(catalog, errors=list(scanned.errors) + catalog_findings)
    result.warnings.extend(scanned.warnings)
    bad = {d.path for d in scanned.errors}
    for f in scanned.files:
        unit = f.unit
        if unit is None or f.rel in bad:
            continue
        result.units += 1
        text = f.data.decode("utf-8")
        checked = check_unit(catalog, unit, text, f.rel)
        result.names += checked.names
        result.errors.extend(checked.findings)
        result.checked.append((f, checked.findings))
        if isinstance(unit.payload, ExamplePayload):
            if catalog.kind == "sqlite":
                blocks = sql_blocks(text)
                result.sqlite_examples.extend((unit, f.rel, b) for b in blocks)
            result.examples_checked += len(checked.queries)
            result.queries.extend((unit, f.rel, b, q) for b, q in checked.queries)
        if checked.findings:
            continue  # a name that does not resolve: a type or a sample would only repeat it
        if isinstance(unit.payload, FormulaPayload):
            result.formulas.append(Formula(unit, text, f.rel, checked.tables))
        elif unit.kind == "enum":
            result.enums.append((unit, text, f.rel))
    return result


def _type_check(result: CatalogCheck, describe: Callable[[list[str]], list[Described]]) -> None:
    described = describe([f.statement() for f in result.formulas])
    for f, d in zip(result.formulas, described, strict=True):
        result.types.append(TypeResult(f.unit.id, f.path, d.type))
        if d.error is not None:
            result.errors.append(finding(f, d.error, d.position))
        elif d.gave_up is not None:
            result.warnings.append(gave_up(f, d.gave_up))


def _prepare_examples(result: CatalogCheck, live: LiveCatalog) -> None:
    """PostgreSQL: the examples whose names resolved are refused if they call a volatile
    function of the warehouse's own (one query for all), else prepared, never executed,
    in pipelines; a refusal is E188 at the place PostgreSQL points at."""
    ready = [q for q in result.queries if q[3].statement is not None]
    called = sorted({name for *_, q in ready for name, _ in q.functions if name})
    volatile = live.volatile(called) if called else set()
    prepare: list[tuple[Unit, str, SqlBlock, ExampleSql]] = []
    for unit, path, block, q in ready:
        bad = next(((n, at) for n, at in q.functions if n in volatile), None)
        if bad is None:
            prepare.append((unit, path, block, q))
            continue
        why = (
            f"the example's SQL calls {bad[0]}(), which PostgreSQL's catalog marks volatile: "
            "it may change the database; an example is a read-only query"
        )
        result.errors.append(Diagnostic(REFUSED, why, path, *block.position(bad[1]), unit.id))
    described = live.prepare([q.statement or "" for *_, q in prepare])
    for (unit, path, block, _), d in zip(prepare, described, strict=True):
        if d.error is not None:
            at = block.position(d.position - 1 if d.position is not None else 0)
            why = f"the example's SQL does not type-check in PostgreSQL: {d.error}"
            result.errors.append(Diagnostic("E188", why, path, *at, unit.id))
        elif d.gave_up is not None:
            why = f"the example's SQL was not prepared: PostgreSQL stopped it at {d.gave_up}"
            result.warnings.append(
                EvidenceWarning(f"{unit.id}: {why}", path, block.line, code="W188")
            )


def _sqlite_examples(result: CatalogCheck, paths: list[str], execute: bool = False) -> None:
    """SQLite: each example's SQL prepared by the warehouse's own engine (EXPLAIN on a
    read-only connection, never executed); with ``execute``, each clean one then run."""
    from evidence_tool.catalog.example_sqlite import SqliteExampleChecker, SqliteExamples
    from evidence_tool.catalog.results import Ran

    out = SqliteExamples()
    with closing(SqliteExampleChecker(paths, result.catalog)) as checker:
        for unit, path, block in result.sqlite_examples:
            if checker.check(block, path, unit.id, out) and execute:
                ran = Ran(unit.id, path, block.line, block.sql, checker.run(block.sql))
                result.executed.append(ran)
    result.examples_checked += len(result.sqlite_examples)
    result.names += out.names
    result.errors.extend(out.findings)
    result.warnings.extend(out.warnings)
    bad = {d.path for d in out.findings}
    result.checked = [
        (f, [*found, *(d for d in out.findings if d.path == f.rel)]) if f.rel in bad else (f, found)
        for f, found in result.checked
    ]


def _run_live(result: CatalogCheck, live: LiveCatalog) -> None:
    """PostgreSQL: each example that prepared cleanly, run in the read-only transaction."""
    from evidence_tool.catalog.results import Ran

    bad = {(d.path, d.line) for d in result.errors if d.code in ("E184", "E188")}
    ready = [
        (unit, path, block, q.statement)
        for unit, path, block, q in result.queries
        if q.statement is not None and not _refused_at(bad, path, block)
    ]
    outcomes = live.run([_bare(sql) for *_, sql in ready])
    for (unit, path, block, sql), got in zip(ready, outcomes, strict=True):
        result.executed.append(Ran(unit.id, path, block.line, sql, got))


def _refused_at(bad: set[tuple[str | None, int | None]], path: str, block: SqlBlock) -> bool:
    last = block.line + block.sql.count("\n")
    return any(p == path and line is not None and block.line <= line <= last for p, line in bad)


def _bare(sql: str) -> str:
    """The query without its closing semicolon and what follows it (it goes inside a
    sub-select), split by PostgreSQL's own scanner: a ``;`` or a comment marker inside
    a string, a quoted name or a dollar quote is text, and block comments nest."""
    from pglast import parser

    statements = parser.split(sql, with_parser=True)
    return statements[0] if len(statements) == 1 else sql


def _record(root: str | os.PathLike[str], result: CatalogCheck) -> None:
    from evidence_tool.archive.local import LocalEvidenceArchive
    from evidence_tool.catalog.results import compare_and_record

    archive = LocalEvidenceArchive(root)
    active = archive.active_snapshot() if archive.layout.state.exists() else None
    revision = active.revision if active is not None else None
    result.warnings.extend(compare_and_record(archive.layout, revision, result.executed))


def _sample(result: CatalogCheck, sample: Callable[[list[ValueSample]], list[Sampled]]) -> None:
    asked = [(u, t, p, sample_of(u, result.catalog)) for u, t, p in result.enums]
    wanted = [(u, t, p, s) for u, t, p, s in asked if s is not None]
    answers = sample([s for *_, s in wanted])
    for (unit, text, path, s), answer in zip(wanted, answers, strict=True):
        result.warnings.extend(compare(unit, text, path, s, answer))
    result.values_checked = len(wanted)


def _finish(result: CatalogCheck, visit: Visit | None) -> CatalogCheck:
    """Findings in report order; each file visited with every code it got (those of the
    server's checks too: E188, and E184 for a volatile call)."""
    result.errors.sort(key=Diagnostic.sort_key)
    if visit is not None:
        later: dict[str | None, set[str]] = {}
        for d in result.errors:
            later.setdefault(d.path, set()).add(d.code)
        for f, findings in result.checked:
            codes = {d.code for d in findings} | later.get(f.rel, set())
            visit(f, sorted(codes))
    return result
