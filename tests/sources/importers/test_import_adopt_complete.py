"""Issue 28 item 1: what an importer cannot make complete does not block the rest.

jaffle_shop's staging models carry ``accepted_values`` without any meaning; before, two such
tests blocked ``replace`` of every unit of the project (E140) and the only way through was
editing the dbt project. Now each is listed under ``not_imported`` with its reason, file,
line and what to write where, and the complete units are adoptable as they are.
"""

from __future__ import annotations

from pathlib import Path

from cli_runner import invoke, tht
from import_helpers import add, comparison, import_and_replace, refresh_one, replace
from shop_project import MART_IDS, write_shop

REL = "imports/shop"
STAGING = f"{REL}/models/staging/schema.yml"


def _line_of(ws: Path, rel: str, needle: str, nth: int = 1) -> int:
    lines = (ws / rel).read_text(encoding="utf-8").splitlines()
    hits = [i + 1 for i, line in enumerate(lines) if needle in line]
    return hits[nth - 1]


def test_values_without_meanings_are_not_imported_and_the_rest_is_adopted(
    workspace: Path,
) -> None:
    write_shop(workspace / REL)
    before = {p: p.read_bytes() for p in (workspace / REL).rglob("*") if p.is_file()}
    assert add(workspace, "dbt", REL, "--language", "en").exit_code == 0
    refreshed = refresh_one(workspace, "dbt", REL)
    assert refreshed.exit_code == 0, refreshed.stdout + refreshed.stderr
    comp = comparison(workspace, "dbt", REL)
    assert comp["review_items"] == []
    assert [p["id"] for p in comp["proposed"]] == MART_IDS
    incomplete = [n for n in comp["not_imported"] if n.get("reason")]
    assert [(n["unit_id"], n["reason"], n["at"]) for n in incomplete] == [
        (
            "evidence:dbt:stg_baskets.state.values",
            "meaning-missing",
            f"{STAGING}:{_line_of(workspace, STAGING, '- accepted_values:', 1)}-"
            f"{_line_of(workspace, STAGING, 'values: [', 1)}",
        ),
        (
            "evidence:dbt:stg_tills.tender.values",
            "meaning-missing",
            f"{STAGING}:{_line_of(workspace, STAGING, '- accepted_values:', 2)}-"
            f"{_line_of(workspace, STAGING, 'values: [', 2)}",
        ),
    ]
    # What to write where: the column's description, with the values it lacks.
    assert "'cash', 'card', 'voucher'" in incomplete[1]["fix"]
    assert "stg_tills.tender" in incomplete[1]["fix"]
    shown = tht(workspace, "sources", "show", comp["source_id"][:12])
    listed = shown.json["result"]["comparison"]["not_imported"]
    assert sum(1 for n in listed if n.get("reason") == "meaning-missing") == 2
    text = invoke(
        [
            "workspace",
            "evidence",
            "sources",
            "show",
            comp["source_id"][:12],
            "--workspace-root",
            str(workspace),
        ]
    ).stdout
    assert "not imported (meaning-missing) evidence:dbt:stg_tills.tender.values" in text
    assert "to adopt it:" in text

    decided = replace(workspace, "dbt", REL)
    assert decided.exit_code == 0, decided.stdout + decided.stderr
    assert decided.json["result"]["consolidation"]["status"] == "activated"
    assert tht(workspace, "show", "evidence:dbt:baskets.state.values").exit_code == 0
    assert not list((workspace / "evidence/curated").rglob("stg_tills*"))
    after = {p: p.read_bytes() for p in (workspace / REL).rglob("*") if p.is_file()}
    assert after == before  # the dbt project was not edited


def test_an_adopted_enum_that_loses_a_meaning_upstream_is_held_not_retired(
    workspace: Path,
) -> None:
    write_shop(workspace / REL, staging=False)
    import_and_replace(workspace, "dbt", REL, "--language", "en")
    docs = workspace / REL / "models/docs.md"
    text = docs.read_text(encoding="utf-8")
    docs.write_text(
        "".join(line for line in text.splitlines(True) if "refunded" not in line),
        encoding="utf-8",
    )
    # The accepted values still list 'refunded', which now has no meaning.
    assert refresh_one(workspace, "dbt", REL).exit_code == 0
    comp = comparison(workspace, "dbt", REL)
    uid = "evidence:dbt:baskets.state.values"
    assert uid not in {p["id"] for p in comp["proposed"]}
    assert comp["retire"] == []
    (held,) = [n for n in comp["not_imported"] if n.get("unit_id") == uid]
    assert held["reason"] == "meaning-missing" and "'refunded'" in held["fix"]
    assert replace(workspace, "dbt", REL).exit_code == 0
    shown = tht(workspace, "show", uid)
    assert shown.exit_code == 0 and "'refunded'" in shown.stdout  # as adopted before
