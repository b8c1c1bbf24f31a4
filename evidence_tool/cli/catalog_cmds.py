"""``tht workspace evidence check`` and ``catalog diff``: units against the warehouse
catalog (SPEC.md 13), and what changed in it since the active snapshot."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from evidence_tool.cli.options import flag
from evidence_tool.cli.output import Report
from evidence_tool.cli.workspace_cmds import register, workspace_evidence
from evidence_tool.errors import Diagnostic

if TYPE_CHECKING:
    from evidence_tool.catalog.drift import Drift
    from evidence_tool.catalog.review import CatalogRun
    from evidence_tool.session import Session


def catalog_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--catalog / --ddl / --sqlite: which warehouse catalog to read."""
    fn = click.option(
        "--sqlite",
        multiple=True,
        help="An SQLite database, read-only; SCHEMA=PATH names its schema (default main). "
        "Repeatable.",
    )(fn)
    fn = click.option(
        "--ddl",
        multiple=True,
        help="A DDL file or a folder of *.sql, read in order (repeatable).",
    )(fn)
    return click.option(
        "--catalog",
        "kind",
        type=click.Choice(["postgres", "ddl", "sqlite"]),
        help="Where the warehouse's tables come from (default: the installation's "
        "evidence.catalog.kind). postgres reads the DSN from THT_CATALOG_DSN (or the "
        "variable evidence.catalog.dsn_env names).",
    )(fn)


def _drift_errors(run: CatalogRun) -> list[Diagnostic]:
    """The drift review items (E191) as findings on their units."""
    return run.drift.diagnostics() if run.drift else []


def check_body(
    s: Session,
    kind: str | None,
    ddl: tuple[str, ...],
    sqlite: tuple[str, ...],
    sample_values: bool,
    execute: bool,
) -> Report:
    """Check every unit's tables and columns against the warehouse catalog.

    applies_to tables and columns, the Tables/Columns/Column fields, every
    column reference of a formula's SQL and every name of an example's SQL must
    exist (with a 'did you mean'); an example's SQL must be one read-only query.
    Against PostgreSQL each formula and example is also prepared (never executed);
    --execute runs the examples read-only and warns when a result changed.
    Drift since the active snapshot's catalog raises review items (E191).
    Exit 0 when clean, 1 with findings, 6 when the catalog cannot be read.
    """
    done = s.catalog_run(kind, ddl, sqlite, sample_values=sample_values, execute=execute)
    checked, cat = done.check, done.check.catalog
    drift = _drift_errors(done)
    drift_json = done.drift.to_json() if done.drift else None
    result = {**checked.to_json(), "drift": drift_json}
    text = [
        f"{checked.units} unit(s) checked against {len(cat.relations)} relation(s) "
        f"({cat.kind}), {len(checked.errors)} finding(s)",
        *(f"{t.path}: formula type {t.type}" for t in checked.types if t.type),
    ]
    if checked.executed:
        text.append(f"{len(checked.executed)} example query(ies) run (--execute)")
    if drift:
        text.append(f"{len(drift)} drift review item(s): see 'catalog diff'")
    return Report(
        result=result,
        errors=sorted([*checked.errors, *drift], key=Diagnostic.sort_key),
        warnings=[*checked.warnings, *done.warnings],
        text=text,
    )


register(
    "check",
    check_body,
    catalog_options,
    flag(
        "--sample-values",
        help="Compare each enum unit's values with the values its column stores "
        "(postgres and sqlite catalogs).",
    ),
    flag(
        "--execute",
        help="Also run each example's query read-only and warn when its result changed "
        "since the last --execute (postgres and sqlite catalogs).",
    ),
    formats=True,
)


@workspace_evidence.group("catalog")
def catalog_group() -> None:
    """The warehouse catalog the units were checked against."""


def diff_body(
    s: Session, kind: str | None, ddl: tuple[str, ...], sqlite: tuple[str, ...]
) -> Report:
    """What changed in the warehouse since the active snapshot's catalog.

    Relations and columns added or dropped and type changes, each with the units
    whose names it touches; a dropped relation or column a unit names, and a type
    change under a formula, is a review item on the unit (E191), shown by status
    and the review page until the unit is fixed or the change is gone.
    Exit 0 when no change touches a unit, 1 with review items, 2 when the active
    snapshot records no catalog, 6 when the catalog cannot be read.
    """
    from evidence_tool.errors import NotReadyError

    done = s.catalog_run(kind, ddl, sqlite)
    if done.drift is None:
        raise NotReadyError(done.note or "nothing to compare the catalog with")
    return Report(
        result=done.drift.to_json(),
        errors=_drift_errors(done),
        warnings=done.warnings,
        text=diff_lines(done.drift),
    )


register("catalog diff", diff_body, catalog_options, group=catalog_group, formats=True)


def diff_lines(drift: Drift) -> list[str]:
    """One line per change, with the units it touches."""
    lines = [
        f"catalog {drift.recorded.digest[:12]} (active snapshot) -> "
        f"{drift.current.digest[:12]} (now)"
    ]
    lines += [f"  {s}" for s in drift.settings]
    for i, c in enumerate(drift.changes):
        units = sorted(u for u, idx in drift.touched.items() if i in idx)
        touched = f"; touches {', '.join(units)}" if units else ""
        lines.append(f"  {c.describe()}{touched}")
    if not drift.changes and not drift.settings:
        lines.append("  no change")
    return lines
