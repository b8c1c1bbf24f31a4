"""The --json bytes of the catalog check's summary (``check``) and of the catalog step's
(validate, verify --strict, consolidate), pinned as the hand-built dicts printed them
before they became ``_keys`` views (issue 32).  One-way: results, never read back."""

from __future__ import annotations

import json

import pytest

from evidence_tool.catalog.check import TypeResult
from evidence_tool.catalog.drift import Change, ChangeKind, Drift
from evidence_tool.catalog.fingerprint import Fingerprint
from evidence_tool.catalog.model import Catalog, Column, Relation
from evidence_tool.catalog.results import Outcome, Ran
from evidence_tool.catalog.review import CatalogRun
from evidence_tool.catalog.settings import CatalogSettings
from evidence_tool.catalog.step import StepOutcome
from evidence_tool.catalog.workspace_check import CatalogCheck
from evidence_tool.errors import Diagnostic, EvidenceWarning

REL = Relation("public", "t", "table", (Column("a", "integer"),))
DDL = Catalog("ddl", (REL,), sources=("schema.sql",))
PG = Catalog("postgres", (REL,), ("public", "x"), sources=("host h, database d",))
FOUND = [Diagnostic("E181", "m", "a.md", 3, 4), Diagnostic("E180", "n"), Diagnostic("E181", "o")]
RAN = Ran("evidence:a", "a.md", 3, "select 1", Outcome(1, "f" * 8))
FP = Fingerprint.of(DDL)
DRIFT = Drift(FP, FP, [Change(ChangeKind.RELATION_ADDED, "public.u")], [], {"evidence:a": [0]})


def _run(check: CatalogCheck, drift: Drift | None, note: str | None) -> CatalogRun:
    return CatalogRun(check, FP, "r" * 8, drift, note, {})


CHECKS = {
    "ddl-clean": (
        CatalogCheck(DDL, units=2, names=5, examples_checked=1),
        '{"units_checked": 2, "names_checked": 5, "findings": {}, "examples_checked": 1, "catalog": {"kind": "ddl", "sources": ["schema.sql"], "search_path": ["public"], "relations": 1, "fingerprint": {"public.t": "FP"}}}',
    ),
    "ddl-findings-executed-sampled": (
        CatalogCheck(DDL, units=3, errors=list(FOUND), executed=[RAN], values_checked=0),
        '{"units_checked": 3, "names_checked": 0, "findings": {"E181": 2, "E180": 1}, "examples_checked": 0, "catalog": {"kind": "ddl", "sources": ["schema.sql"], "search_path": ["public"], "relations": 1, "fingerprint": {"public.t": "FP"}}, "example_results": [{"unit_id": "evidence:a", "path": "a.md", "line": 3, "rows": 1, "fingerprint": "ffffffff", "error": null}], "enums_sampled": 0}',
    ),
    "postgres-no-formulas": (
        CatalogCheck(PG, units=1, round_trips=2),
        '{"units_checked": 1, "names_checked": 0, "findings": {}, "examples_checked": 0, "catalog": {"kind": "postgres", "sources": ["host h, database d"], "search_path": ["public", "x"], "relations": 1, "fingerprint": {"public.t": "FP"}}, "formula_types": [], "round_trips": 2}',
    ),
    "postgres-typed": (
        CatalogCheck(
            PG,
            types=[
                TypeResult("evidence:f", "f.md", "numeric"),
                TypeResult("evidence:g", "g.md", None),
            ],
            round_trips=4,
            values_checked=3,
        ),
        '{"units_checked": 0, "names_checked": 0, "findings": {}, "examples_checked": 0, "catalog": {"kind": "postgres", "sources": ["host h, database d"], "search_path": ["public", "x"], "relations": 1, "fingerprint": {"public.t": "FP"}}, "formula_types": [{"unit_id": "evidence:f", "path": "f.md", "type": "numeric"}, {"unit_id": "evidence:g", "path": "g.md", "type": null}], "round_trips": 4, "enums_sampled": 3}',
    ),
}
SETTINGS = CatalogSettings("ddl", ("schema.sql",))
STEPS = {
    "unread": (
        StepOutcome(CatalogSettings("postgres", block=True), None),
        '{"kind": "postgres", "block": true, "checked": false}',
    ),
    "checked-note": (
        StepOutcome(SETTINGS, _run(CatalogCheck(DDL, units=2), None, "no snapshot yet")),
        '{"kind": "ddl", "block": false, "checked": true, "units_checked": 2, "findings": {}, "fingerprint": "DIGEST", "drift": null, "note": "no snapshot yet"}',
    ),
    "checked-drift-findings": (
        StepOutcome(
            SETTINGS,
            _run(CatalogCheck(DDL, units=4), DRIFT, None),
            [Diagnostic("E181", "x")],
            [
                EvidenceWarning("w", code="E191"),
                EvidenceWarning("plain"),
                EvidenceWarning("v", code="E181"),
            ],
        ),
        '{"kind": "ddl", "block": false, "checked": true, "units_checked": 4, "findings": {"E181": 2, "E191": 1}, "fingerprint": "DIGEST", "drift": {"recorded": "DIGEST", "current": "DIGEST", "settings": [], "changes": [{"change": "relation_added", "relation": "public.u", "units": ["evidence:a"]}], "review_items": {}}, "note": null}',
    ),
}


def _golden(text: str) -> str:
    return text.replace('"FP"', json.dumps(REL.fingerprint)).replace("DIGEST", FP.digest)


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_the_check_summary_writes_its_golden_json(name: str) -> None:
    check, golden = CHECKS[name]
    assert json.dumps(check.to_json()) == _golden(golden)


@pytest.mark.parametrize("name", sorted(STEPS))
def test_the_step_summary_writes_its_golden_json(name: str) -> None:
    step, golden = STEPS[name]
    assert json.dumps(step.summary()) == _golden(golden)


def test_the_sweeps_run_every_case() -> None:
    assert (len(CHECKS), len(STEPS)) == (4, 3)
