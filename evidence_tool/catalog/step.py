"""The catalog as an opt-in step of validate, verify --strict and consolidate.

It runs when the installation descriptor has an ``evidence.catalog`` section.  Its
findings (E180-E183, E185, E188, and drift E191) are reported as warnings that keep their code,
and never block, unless the section says ``block: true``: then the check's findings
are errors (validate and verify exit 1, consolidate refuses before writing anything).
Drift review items never block: consolidating with the step records the catalog it
was checked against, which is how an operator accepts a change (catalog.md).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from evidence_tool.archive.local import CatalogRecord, LocalEvidenceArchive
from evidence_tool.catalog.drift import DRIFT_CODE, compare
from evidence_tool.catalog.review import CatalogRun, recorded_fingerprint, run_catalog, write_record
from evidence_tool.catalog.settings import CatalogSettings, catalog_settings
from evidence_tool.catalog.workspace_check import codes_of
from evidence_tool.errors import (
    Diagnostic,
    EvidenceError,
    EvidenceWarning,
    InvalidFilesError,
    with_warnings_refused,
)
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.record import UNSET, AnyObject, Record, UnsetType
from evidence_tool.workspace.descriptor import Installation
from evidence_tool.workspace.scan import Progress

BLOCKED_CODE = "E192"


def is_catalog_code(code: str) -> bool:
    """The catalog's codes: E180-E192 (the check's findings, the catalog's own, drift)."""
    return code.startswith("E18")


@dataclass
class StepOutcome:
    settings: CatalogSettings
    run: CatalogRun | None  # None: the catalog could not be read (and block is off)
    errors: list[Diagnostic] = field(default_factory=list)  # blocking findings
    warnings: list[EvidenceWarning] = field(default_factory=list)  # reported findings

    def record(self) -> CatalogRecord | None:
        """What the snapshot records: the fingerprint the units were checked against, and
        the units checked (consolidation refuses if it would record others)."""
        if self.run is None:
            return None
        fp = self.run.fingerprint
        checked = {uid: str(u.content_hash) for uid, u in self.run.units.items()}
        return CatalogRecord(fp.record(), fp.data, checked)

    def summary(self) -> JsonObject:
        """The step's part of a command's --json result (``summary_line`` words it)."""
        kind, block, run = self.settings.kind, self.settings.block, self.run
        if run is None:
            return StepSummary(kind, block, False).to_json()
        codes, digest = codes_of(self.findings()), run.fingerprint.digest
        drift = run.drift.to_json() if run.drift else None
        summary = StepSummary(kind, block, True, run.check.units, codes, digest, drift, run.note)
        return summary.to_json()

    def findings(self) -> list[Diagnostic]:
        return [*self.errors, *(_back(w) for w in self.warnings if w.code)]


def _back(w: EvidenceWarning) -> Diagnostic:
    return Diagnostic(str(w.code), w.message, w.path, w.line, w.column)


def _warning(d: Diagnostic) -> EvidenceWarning:
    return EvidenceWarning(d.message, d.path, d.line, d.code, d.column if d.line else None)


def catalog_step(
    root: str | os.PathLike[str], installation: Installation, progress: Progress | None = None
) -> StepOutcome | None:
    """Run the step if the installation configures it (None otherwise).  Nothing is
    written here: ``finish`` records the run once the command did its work."""
    if not installation.has_section("catalog"):
        return None
    settings = catalog_settings(installation)
    try:
        run = run_catalog(root, settings, progress, record=False)
    except EvidenceError as exc:
        if settings.block or not is_catalog_code(exc.code):
            raise
        # The catalog cannot be read: the step reports it, and the command goes on.
        return StepOutcome(settings, None, warnings=[_warning(d) for d in exc.diagnostics])
    found = [d for d in run.check.errors if is_catalog_code(d.code)]
    drift = run.drift.diagnostics() if run.drift else []
    if settings.block:
        return StepOutcome(settings, run, found, [_warning(d) for d in drift])
    return StepOutcome(settings, run, [], [_warning(d) for d in [*found, *drift]])


def finish(outcome: StepOutcome, archive: LocalEvidenceArchive) -> None:
    """Record the run for status and the page.  After a consolidation that activated the
    checked catalog, nothing has drifted from it any more."""
    run = outcome.run
    if run is None:
        return
    base, recorded = recorded_fingerprint(archive)
    if base != run.base and recorded is not None and recorded.digest == run.fingerprint.digest:
        run.base, run.note = base, None
        run.drift = compare(recorded, run.fingerprint)
    write_record(archive, run)
    outcome.warnings += run.warnings


def refuse_blocked(outcome: StepOutcome) -> None:
    """``block: true`` with findings: consolidation refuses before any write."""
    if outcome.errors:
        message = (
            f"the catalog step found {len(outcome.errors)} problem(s) and the installation's "
            "evidence.catalog says block: true, so nothing was consolidated"
        )
        raise InvalidFilesError([Diagnostic(BLOCKED_CODE, message), *outcome.errors], message)


def merged(
    outcome: StepOutcome,
    errors: list[Diagnostic],
    warnings: list[EvidenceWarning],
    warnings_as_errors: bool = False,
) -> tuple[list[Diagnostic], list[EvidenceWarning]]:
    """A command's findings with the step's added (its warnings refused as E190 too
    under --warnings-as-errors)."""
    mine_e, mine_w = list(outcome.errors), list(outcome.warnings)
    if warnings_as_errors:
        mine_e, mine_w = with_warnings_refused(mine_e, mine_w)
    return sorted([*errors, *mine_e], key=Diagnostic.sort_key), [*warnings, *mine_w]


class StepSummary(Record, frozen=True):
    """``StepOutcome.summary``: a catalog that could not be read says only that."""

    kind: str
    block: bool
    checked: bool
    units_checked: int | UnsetType = UNSET
    findings: dict[str, int] | UnsetType = UNSET
    fingerprint: str | UnsetType = UNSET
    drift: AnyObject | UnsetType | None = UNSET
    note: str | UnsetType | None = UNSET


def summary_line(summary: JsonObject) -> str:
    """The step's summary (``StepOutcome.summary``, read back from a --json result) as one
    line for people."""
    s = StepSummary.from_json(summary)
    if not s.checked:
        return f"catalog step ({s.kind}): the catalog could not be read (see the warnings)"
    counts = s.findings or {}
    found = sum(n for code, n in counts.items() if code != DRIFT_CODE)
    by_unit = s.drift.get("review_items") if s.drift else None
    items = sum(len(v) for v in by_unit.values()) if isinstance(by_unit, dict) else 0
    tail = f", {items} drift review item(s)" if s.drift else f"; {s.note}" if s.note else ""
    return f"catalog step ({s.kind}): {s.units_checked} unit(s) checked, {found} finding(s){tail}"
