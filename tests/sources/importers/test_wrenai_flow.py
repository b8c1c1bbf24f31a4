"""A WrenAI v5 project end to end: sources add -> refresh -> comparison -> replace -> search.

Then a second refresh of the unchanged project is ``unchanged``, and a changed column
description is a modified proposal of the same id (nothing retired, nothing new).
"""

from __future__ import annotations

from pathlib import Path

from cli_runner import tht
from import_helpers import (
    add,
    comparison,
    import_and_replace,
    record_of,
    refresh_one,
    search_ids,
    sid_of,
)
from wren_cortex_fixtures import WREN_PROJECT, write_tree

from evidence_tool.unit import parse_unit

REL = "imports/velo"
W = "evidence:wrenai:"
LABEL = W + "column.stations.label"


def test_wrenai_project_round_trip_to_search_and_unchanged_again(workspace: Path) -> None:
    write_tree(workspace / REL, WREN_PROJECT)
    comp = import_and_replace(workspace, "wrenai", REL, "--language", "en")
    proposed = {p["id"]: p for p in comp["proposed"]}
    assert len(proposed) == 14 and comp["review_items"] == []
    # (.gitkeep is a hidden file: the pipeline never hands it to the importer)
    assert comp["skipped"] == {"generated file": 1, "model or view SQL": 1, "project settings": 2}
    listed = {(n["element"], n["what"]): n["at"] for n in comp["not_imported"]}
    # Named with the lines it sits on, so a curator sees what was left out and where.
    assert listed[("wrenai relationship rental_start_station", "join_type")] == (
        f"{REL}/relationships.yml:6-6"
    )
    # Every excerpt is the source's exact bytes.
    for p in comp["proposed"]:
        for excerpt in p["excerpts"]:
            assert any(
                excerpt.encode() in (workspace / REL / rel).read_bytes() for rel in WREN_PROJECT
            ), excerpt
    label = parse_unit(proposed[LABEL]["markdown"]).unit
    assert label is not None and label.metadata.applies_to.columns == ("public.stations.label",)

    assert LABEL in search_ids(workspace, "painted docking station")
    assert W + "rules.pricing.free-rides" in search_ids(workspace, "rides under 2 minutes free")
    shown = tht(workspace, "show", W + "sql.rides-per-station").json["result"]
    assert shown["imported_from"] == [
        f"{REL}/knowledge/sql/rides-per-station.md:2-2",
        f"{REL}/knowledge/sql/rides-per-station.md:3-6",
        f"{REL}/knowledge/sql/rides-per-station.md:12-12",
    ]
    assert tht(workspace, "verify").exit_code == 0

    again = refresh_one(workspace, "wrenai", REL)
    assert [s["status"] for s in again.json["result"]["sources"]] == ["unchanged"]
    assert record_of(workspace, "wrenai", REL)["comparison"] is None


def test_changed_description_is_a_modified_proposal_of_the_same_id(workspace: Path) -> None:
    write_tree(workspace / REL, WREN_PROJECT)
    import_and_replace(workspace, "wrenai", REL, "--language", "en")
    meta = workspace / REL / "models/stations/metadata.yml"
    meta.write_text(meta.read_text().replace("painted on", "printed on"))
    assert refresh_one(workspace, "wrenai", REL).exit_code == 0
    comp = comparison(workspace, "wrenai", REL)
    current = {c["id"]: c["content_hash"] for c in comp["current"]}
    proposed = {p["id"]: p["content_hash"] for p in comp["proposed"]}
    assert sorted(current) == sorted(proposed) and comp["retire"] == []
    assert [uid for uid in proposed if proposed[uid] != current[uid]] == [LABEL]


def test_sources_add_takes_the_schema_option(workspace: Path) -> None:
    write_tree(workspace / REL, WREN_PROJECT)
    added = add(workspace, "wrenai", REL, "--option", "schema=analytics")
    assert added.exit_code == 0, added.stdout + added.stderr
    assert refresh_one(workspace, "wrenai", REL).exit_code == 0
    comp = comparison(workspace, "wrenai", REL)
    label = parse_unit(next(p for p in comp["proposed"] if p["id"] == LABEL)["markdown"]).unit
    assert label is not None
    assert label.metadata.applies_to.columns == ("analytics.stations.label",)
    assert comp["source_id"] == sid_of("wrenai", REL)


def test_attack_duplicate_key_fails_the_refresh_and_records_nothing(workspace: Path) -> None:
    write_tree(workspace / REL, WREN_PROJECT)
    assert add(workspace, "wrenai", REL).exit_code == 0
    store = workspace / "evidence/.local/sources.json"
    before = store.read_bytes() if store.exists() else None
    meta = workspace / REL / "models/rentals/metadata.yml"
    text = meta.read_text()
    meta.write_text(text + "cached: true\n")  # 'cached' is already a key of the model
    duplicate_line = text.count("\n") + 1
    failed = refresh_one(workspace, "wrenai", REL)
    assert failed.exit_code == 5, failed.stdout + failed.stderr
    error = failed.json["errors"][0]
    assert error["code"] == "E504"
    assert error["path"] == f"{REL}/models/rentals/metadata.yml" and error["line"] == duplicate_line
    assert (store.read_bytes() if store.exists() else None) == before
