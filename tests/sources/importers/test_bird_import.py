"""The BIRD format end to end: sources add -> refresh -> comparison -> replace ->
consolidate -> search, an unchanged re-refresh, and changed evidence as a modified
proposal of the same id."""

from __future__ import annotations

import json
from pathlib import Path

import bird_fixture as bf
from cli_runner import tht
from import_helpers import (
    add,
    comparison,
    import_and_replace,
    record_of,
    refresh_one,
    replace,
    search_ids,
    write,
)

REL = "imports/bird"
TONNAGE = "evidence:bird:harbor:term.tonnage-in-kilotonnes"


def test_bird_folder_round_trip_to_search_and_unchanged_again(workspace: Path) -> None:
    bf.write(workspace / REL)
    comp = import_and_replace(
        workspace, "bird", REL, "--language", "en", "--option", "schemas={harbor: port_ops}"
    )
    ids = [p["id"] for p in comp["proposed"]]
    assert len(ids) == len(set(ids)) == 38
    assert comp["review_items"] == [] and comp["retire"] == []
    assert comp["skipped"] == {"other files": 1}  # dev_tables.json: schema, not evidence
    assert {(n["element"], n["what"]) for n in comp["not_imported"]} >= {
        ("BIRD harbor questions (5)", "difficulty"),
        ("BIRD clinic.pets column descriptions (4)", "data_format"),
    }
    by_id = {p["id"]: p for p in comp["proposed"]}
    hull = by_id["evidence:bird:harbor.vessels.hull_kind.values"]
    assert "port_ops.vessels.hull_kind" in hull["markdown"]
    assert '### "D"\n\ndouble hull' in hull["markdown"]
    # Each excerpt is the exact source text: the CSV row (its two lines) or the fragment.
    raw_csv = (
        workspace / REL / "dev_databases/harbor/database_description/vessels.csv"
    ).read_bytes()
    flag = by_id["evidence:bird:harbor.vessels.flag-state"]
    assert flag["excerpts"][0].encode() in raw_csv and "\r\n" in flag["excerpts"][0]
    assert by_id[TONNAGE]["excerpts"] == ["tonnage in kilotonnes = gross_tonnage / 1000"]

    assert "evidence:bird:harbor:term.cancellation-rate" in search_ids(
        workspace, "cancellation rate"
    )
    assert "evidence:bird:harbor.vessels.flag-state" in search_ids(
        workspace, "flag the vessel flies"
    )
    assert "evidence:bird:clinic.q7" in search_ids(workspace, "heaviest dog")
    raw_json = (workspace / REL / "dev.json").read_text()
    line = raw_json[: raw_json.index("tonnage in kilotonnes =")].count("\n") + 1
    shown = tht(workspace, "show", TONNAGE).json["result"]
    # The fragment's own line (its question's record, which holds it too, may be listed).
    assert f"{REL}/dev.json:{line}-{line}" in shown["imported_from"]
    assert tht(workspace, "verify").exit_code == 0

    again = refresh_one(workspace, "bird", REL)
    assert again.exit_code == 0
    assert [s["status"] for s in again.json["result"]["sources"]] == ["unchanged"]
    assert record_of(workspace, "bird", REL)["comparison"] is None


def test_changed_evidence_is_a_modified_proposal_with_the_same_id(workspace: Path) -> None:
    bf.write(workspace / REL)
    import_and_replace(workspace, "bird", REL, "--language", "en")
    changed = [dict(q) for q in bf.QUESTIONS]
    changed[4]["evidence"] = changed[4]["evidence"].replace("/ 1000", "/ 1000.0")
    write(workspace, f"{REL}/dev.json", bf.questions_json(changed))
    again = refresh_one(workspace, "bird", REL)
    assert again.json["result"]["sources"][0]["status"] == "compared"
    comp = comparison(workspace, "bird", REL)
    assert comp["retire"] == [] and comp["review_items"] == []
    current = {c["id"]: c for c in comp["current"]}
    modified = sorted(
        p["id"] for p in comp["proposed"] if p["content_hash"] != current[p["id"]]["content_hash"]
    )
    assert modified == ["evidence:bird:harbor.q4", TONNAGE]  # the fragment and its question
    proposal = next(p for p in comp["proposed"] if p["id"] == TONNAGE)
    assert proposal["path"] == current[TONNAGE]["path"]  # replaced in place
    assert replace(workspace, "bird", REL).exit_code == 0
    assert "gross_tonnage / 1000.0" in (workspace / proposal["path"]).read_text()


def test_italian_workspace_gets_italian_units_from_a_file_source(workspace: Path) -> None:
    # The fixture workspace's default language is Italian; a file source is dev.json alone.
    write(workspace, "imports/bird-it/dev.json", json.dumps(bf.QUESTIONS[5:7], indent=2))
    comp = import_and_replace(workspace, "bird", "imports/bird-it/dev.json")
    example = next(p for p in comp["proposed"] if p["id"] == "evidence:bird:clinic.q5")
    assert "## Domanda\n\nHow many cats are neutered?" in example["markdown"]
    assert "Conoscenza esterna: cats refers to species = 1" in example["markdown"]
    assert "evidence:bird:clinic:term.share" in search_ids(workspace, "share")


def test_malformed_questions_record_nothing(workspace: Path) -> None:
    bf.write(workspace / REL)
    assert add(workspace, "bird", REL).exit_code == 0
    write(workspace, f"{REL}/dev.json", '[\n{"question_id": 1, "db_id": "harbor"}\n]')
    store = workspace / "evidence/.local/sources.json"
    before = store.read_bytes() if store.exists() else None
    failed = refresh_one(workspace, "bird", REL)
    assert failed.exit_code == 5, failed.stdout + failed.stderr
    error = failed.json["errors"][0]
    assert error["code"] == "E504" and error["path"] == f"{REL}/dev.json" and error["line"] == 2
    assert (store.read_bytes() if store.exists() else None) == before
