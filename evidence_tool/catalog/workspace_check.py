"""``check`` over a whole workspace: read the catalog, check every valid unit.

Checks 1-3 run against every kind of catalog; against a live PostgreSQL each
formula is also type-checked (check 4), and with ``sample_values`` each enum
unit's values are compared with the stored ones (check 5, PostgreSQL or SQLite).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from evidence_tool.catalog.check import check_unit
from evidence_tool.catalog.model import Catalog
from evidence_tool.catalog.postgres import Described
from evidence_tool.catalog.settings import CatalogSettings, open_catalog
from evidence_tool.catalog.typecheck import Formula, TypeResult, finding, gave_up
from evidence_tool.catalog.values import Sampled, ValueSample, compare, sample_of
from evidence_tool.errors import Diagnostic, EvidenceWarning, UsageError
from evidence_tool.unit import FormulaPayload, Unit
from evidence_tool.workspace import validate_workspace
from evidence_tool.workspace.scan import CuratedFile, Progress

# Called with each checked file and the codes of its findings (catalog.review).
Visit = Callable[[CuratedFile, list[str]], None]


@dataclass
class CatalogCheck:
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
    checked: list[tuple[CuratedFile, list[Diagnostic]]] = field(default_factory=list)

    def summary(self) -> dict[str, object]:
        codes: dict[str, int] = {}
        for d in self.errors:
            codes[d.code] = codes.get(d.code, 0) + 1
        out: dict[str, object] = {
            "units_checked": self.units,
            "names_checked": self.names,
            "findings": codes,
            "catalog": self.catalog.summary(),
        }
        if self.catalog.kind == "postgres":
            out["formula_types"] = [t.to_json() for t in self.types]
            out["round_trips"] = self.round_trips
        if self.values_checked is not None:
            out["enums_sampled"] = self.values_checked
        return out


def check_workspace(
    root: str | os.PathLike[str],
    settings: CatalogSettings,
    progress: Progress | None = None,
    *,
    sample_values: bool = False,
    visit: Visit | None = None,
) -> CatalogCheck:
    """Validate the units, then check every valid one against the catalog."""
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
            if sample_values:
                _sample(result, live.sample)
            result.round_trips = live.round_trips
        return _finish(result, visit)
    catalog, catalog_findings = open_catalog(settings)
    result = _check_names(root, catalog, catalog_findings, progress)
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


def _sample(result: CatalogCheck, sample: Callable[[list[ValueSample]], list[Sampled]]) -> None:
    asked = [(u, t, p, sample_of(u, result.catalog)) for u, t, p in result.enums]
    wanted = [(u, t, p, s) for u, t, p, s in asked if s is not None]
    answers = sample([s for *_, s in wanted])
    for (unit, text, path, s), answer in zip(wanted, answers, strict=True):
        result.warnings.extend(compare(unit, text, path, s, answer))
    result.values_checked = len(wanted)


def _finish(result: CatalogCheck, visit: Visit | None) -> CatalogCheck:
    """Findings in report order; each file visited with every code it got (E188 too)."""
    result.errors.sort(key=Diagnostic.sort_key)
    if visit is not None:
        typed = {d.path: d.code for d in result.errors if d.code == "E188"}
        for f, findings in result.checked:
            codes = {d.code for d in findings} | ({typed[f.rel]} if f.rel in typed else set())
            visit(f, sorted(codes))
    return result
