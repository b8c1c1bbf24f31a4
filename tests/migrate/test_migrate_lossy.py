"""Every lossless-failure case: E160 naming the unit and the field, and an untouched tree."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from migrate_support import LEGACY, tree_hashes

# case -> (unit id, field, a phrase of the reason).  One fixture per case under
# fixtures/legacy/lossy/, each with a convertible unit next to the faulty one.
CASES: dict[str, tuple[str, str, str]] = {
    "title-multiline": ("evidence:admin:bed-occupancy-rate", "title", "one '# Title' line"),
    "text-field-heading": ("evidence:clinical:admission-date", "payload.rule", "'## Rule'"),
    "text-second-title": (
        "evidence:clinical:admissions-per-month",
        "payload.interpretation",
        "reads as a title",
    ),
    "text-unclosed-fence": ("evidence:clinical:icd9-code-format", "payload.input", "early"),
    "text-leading-blank-lines": (
        "evidence:clinical:length-of-stay",
        "payload.definition",
        "blank lines",
    ),
    "text-carriage-return": (
        "evidence:dwh:data-dictionary",
        "payload.description",
        "carriage return",
    ),
    "enum-duplicate-value": ("evidence:ed:triage-code", "payload.values[2].value", "twice"),
    "enum-meaning-value-heading": (
        "evidence:ed:triage-code",
        "payload.values",
        "2 entries instead of 1",
    ),
    "list-non-string-value": (
        "evidence:clinical:length-of-stay",
        "payload.synonyms[1]",
        "not a string",
    ),
    "list-duplicate-value": (
        "evidence:clinical:length-of-stay",
        "payload.synonyms[2]",
        "each value once",
    ),
    "payload-unknown-key": ("evidence:clinical:admission-date", "payload.notes", "no place"),
    "payload-missing-field": (
        "evidence:clinical:admissions-per-month",
        "payload.interpretation",
        "required",
    ),
    "formula-not-expression": (
        "evidence:clinical:giornate-di-degenza",
        "payload.sql",
        "one PostgreSQL expression",
    ),
    "enum-column-not-qualified": (
        "evidence:ed:triage-code",
        "payload.column",
        "schema.table.column",
    ),
    "reference-url-not-http": ("evidence:dwh:data-dictionary", "payload.url", "http(s) URL"),
    "mapping-without-tables-or-columns": (
        "evidence:clinical:reparto-di-dimissione",
        "payload.tables",
        "at least one table or column",
    ),
    "purpose-unknown": ("evidence:clinical:admission-date", "purposes[1]", "reporting"),
    "id-not-v4": ("evidence:Admission Date", "id", "required form"),
    "kind-unknown": ("evidence:clinical:admission-date", "kind", "metric"),
    "duplicate-id": ("evidence:clinical:ricoveri-validi", "id", "ids are unique"),
    "v2-unknown-key": ("evidence:clinical:admission-date", "owner", "no place"),
    "v2-content-hash-mismatch": (
        "evidence:clinical:admission-date",
        "content_hash",
        "does not match",
    ),
    "v3-metadata-not-base64": ("evidence:clinical:length-of-stay", "metadata", "base64"),
    "v3-excerpt-not-in-source": (
        "evidence:ed:triage-code",
        "provenance.excerpts[0]",
        "verbatim",
    ),
    "v3-source-changed": ("evidence:ed:triage-code", "provenance.source_hash", "no longer"),
    "v3-duplicate-review-item": (
        "evidence:clinical:length-of-stay",
        "review_items[1]",
        "would be lost",
    ),
    "manifest-version-mismatch": (
        "evidence:clinical:length-of-stay",
        "schema_version",
        "version 3",
    ),
    "manifest-missing-file": ("evidence:clinical:admission-date", "path", "does not exist"),
}


def test_every_lossy_fixture_has_a_case() -> None:
    assert sorted(p.name for p in (LEGACY / "lossy").iterdir()) == sorted(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_lossy_case_fails_with_e160_and_writes_nothing(
    case: str, legacy_repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    unit_id, field, phrase = CASES[case]
    root = legacy_repo(f"lossy/{case}")
    before = tree_hashes(root.parent)  # the whole repository, .git included
    res = cli(["evidence", "migrate", str(root), "--json"])
    assert res.exit_code == 1, res.stdout
    body = res.json
    assert body["ok"] is False
    assert {e["code"] for e in body["errors"]} == {"E160"}
    problems = body["result"]["problems"]
    assert [(p["unit_id"], p["field"]) for p in problems] == [(unit_id, field)]
    assert phrase in problems[0]["reason"]
    error = body["errors"][0]
    assert error["unit_id"] == unit_id and field in error["message"]
    assert error["path"] and error["path"].startswith("evidence/units/")
    assert tree_hashes(root.parent) == before


def test_all_problems_are_reported_in_one_run(
    legacy_repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = legacy_repo("lossy/list-duplicate-value")
    # A second faulty unit in the same workspace: both are named, still nothing is written.
    bad = LEGACY / "lossy/title-multiline/evidence/units/formula/bed-occupancy-rate.yaml"
    (root / "evidence/units/formula").mkdir(parents=True)
    (root / "evidence/units/formula/bed-occupancy-rate.yaml").write_bytes(bad.read_bytes())
    manifest = root / "evidence/manifest.yaml"
    manifest.write_text(
        manifest.read_text().replace(
            "sources:",
            "  - id: evidence:admin:bed-occupancy-rate\n"
            "    path: evidence/units/formula/bed-occupancy-rate.yaml\n"
            "    version: 1\nsources:",
        )
    )
    before = tree_hashes(root.parent)
    res = cli(["evidence", "migrate", str(root), "--json"])
    assert res.exit_code == 1
    fields = {(p["unit_id"], p["field"]) for p in res.json["result"]["problems"]}
    assert fields == {
        ("evidence:admin:bed-occupancy-rate", "title"),
        ("evidence:clinical:length-of-stay", "payload.synonyms[2]"),
    }
    assert tree_hashes(root.parent) == before


def test_text_output_names_unit_field_and_fix(
    legacy_repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = legacy_repo("lossy/enum-duplicate-value")
    res = cli(["evidence", "migrate", str(root)])
    assert res.exit_code == 1
    assert res.stdout == ""
    assert "E160 unit 'evidence:ed:triage-code', field 'payload.values[2].value'" in res.stderr
    assert "evidence/units/enum/triage-code.yaml:" in res.stderr
    assert "hint:" in res.stderr
