"""refresh -> comparison -> decide, end to end on copies of the fixture workspace (SPEC 6)."""

from __future__ import annotations

from pathlib import Path

from source_helpers import (
    LAB,
    WARD,
    decide,
    deletions,
    manifest_entry,
    record,
    refresh,
    source_line,
    tht,
    tree_state,
)

LAB_PATH = "evidence/source/lab-handbook.md"
REWORD_OLD = "keep them for questions about specimen quality."
REWORD_NEW = "keep them only for questions about specimen quality."
MINUTES_START = "---\nschema_version: 4\nid: evidence:lab:turnaround-minutes"


def _edit_draft(ws: Path, *, reword: bool = False, drop_minutes: bool = False) -> None:
    path = ws / LAB_PATH
    text = path.read_text()
    if reword:
        text = text.replace(REWORD_OLD, REWORD_NEW)
    if drop_minutes:
        text = text[: text.index(MINUTES_START)]
    path.write_text(text)


def _adopt_lab(ws: Path) -> None:
    first = refresh(ws)
    assert first.exit_code == 0, first.stdout
    assert source_line(first, LAB)["status"] == "compared"
    assert decide(ws, LAB, "replace").exit_code == 0


def test_first_refresh_then_replace_writes_document_units_and_activates(workspace: Path) -> None:
    result = refresh(workspace)
    assert result.exit_code == 0, result.stdout
    assert result.stderr == ""  # no progress bar when stderr is not a terminal
    line = source_line(result, LAB)
    assert line["proposed"] == [
        "evidence:lab:hemolysed-specimens",
        "evidence:lab:turnaround-time",
        "evidence:lab:turnaround-minutes",
    ]
    rec = record(workspace, LAB)
    assert rec["title"] == "PSD laboratory handbook"
    assert rec["identifier"] == {"type": "doi", "value": "10.5555/psd.lab.2026"}
    assert rec["comparison"]["retire"] == [] and rec["comparison"]["review_items"] == []

    decided = decide(workspace, LAB, "replace")
    assert decided.exit_code == 0, decided.stdout
    assert decided.json["result"]["consolidation"]["status"] == "activated"
    sid, chash = rec["source_id"], rec["comparison"]["content_hash"]
    acquired = workspace / f"evidence/source/acquired/{sid}/{chash}.md"
    assert acquired.read_text() == (workspace / LAB_PATH).read_text()
    entry = manifest_entry(workspace, "evidence:lab:turnaround-time")
    assert entry is not None and entry["path"] == "evidence/curated/glossary/lab-turnaround-time.md"
    prov = entry["provenance"]
    assert prov["kind"] == "document" and prov["source_id"] == sid
    assert prov["source_hash"] == chash
    assert "- TAT\n- tempo di risposta" in prov["excerpts"]
    state = (workspace / "evidence/.local/state.yaml").read_text()
    assert "pending: null" in state
    assert tht(workspace, "verify").exit_code == 0
    assert record(workspace, LAB)["adopted_hash"] == chash
    # Unchanged bytes are not refined again and record nothing new.
    again = refresh(workspace)
    assert source_line(again, LAB)["status"] == "unchanged"
    assert record(workspace, LAB)["comparison"] is None


def test_keep_turns_units_manual_with_original_and_is_not_reopened(workspace: Path) -> None:
    _adopt_lab(workspace)
    _edit_draft(workspace, reword=True, drop_minutes=True)
    result = refresh(workspace)
    line = source_line(result, LAB)
    assert line["status"] == "compared"
    assert line["retire"] == ["evidence:lab:turnaround-minutes"]
    comparison = record(workspace, LAB)["comparison"]
    assert {c["id"] for c in comparison["current"]} == {
        "evidence:lab:hemolysed-specimens",
        "evidence:lab:turnaround-time",
        "evidence:lab:turnaround-minutes",
    }
    kept = decide(workspace, LAB, "keep")
    assert kept.exit_code == 0, kept.stdout
    for uid in ("evidence:lab:hemolysed-specimens", "evidence:lab:turnaround-minutes"):
        entry = manifest_entry(workspace, uid)
        assert entry is not None
        assert entry["provenance"]["kind"] == "manual"
        assert entry["provenance"]["original"]["kind"] == "document"
        assert entry["provenance"]["original"]["source_id"] == record(workspace, LAB)["source_id"]
    # The reworded text stays local: the curated file still has the old wording.
    assert (
        REWORD_OLD in (workspace / "evidence/curated/domain/lab-hemolysed-specimens.md").read_text()
    )
    before = (workspace / "evidence/.local/sources.json").read_bytes()
    again = refresh(workspace)
    assert source_line(again, LAB)["status"] == "unchanged"
    assert (workspace / "evidence/.local/sources.json").read_bytes() == before
    shown = tht(workspace, "sources", "show", record(workspace, LAB)["source_id"][:12])
    assert shown.json["result"]["pending_comparison"] is None
    assert {c["as"] for c in shown.json["result"]["citing_units"]} == {"original"}


def test_replace_retires_and_a_returning_id_is_dropped(workspace: Path) -> None:
    _adopt_lab(workspace)
    _edit_draft(workspace, reword=True, drop_minutes=True)
    refresh(workspace)
    assert decide(workspace, LAB, "keep").exit_code == 0
    # A later change: replace now adopts it and retires the dropped id.
    text = (workspace / LAB_PATH).read_text().replace("60\nminutes", "45\nminutes")
    (workspace / LAB_PATH).write_text(text)
    line = source_line(refresh(workspace), LAB)
    assert line["retire"] == ["evidence:lab:turnaround-minutes"]
    # keep made the units manual (the curator's): replace names them and needs the flag.
    refused = decide(workspace, LAB, "replace")
    assert refused.json["errors"][0]["code"] == "E306", refused.stdout
    replaced = decide(workspace, LAB, "replace", "--overwrite-manual")
    assert replaced.exit_code == 0, replaced.stdout
    assert replaced.json["result"]["retired"] == ["evidence:lab:turnaround-minutes"]
    assert not (workspace / "evidence/curated/formula/lab-turnaround-minutes.md").exists()
    record_ = deletions(workspace)["evidence:lab:turnaround-minutes"]
    assert record_["reason"] == "retired-by-replace"
    hemo = manifest_entry(workspace, "evidence:lab:hemolysed-specimens")
    assert hemo is not None and hemo["provenance"]["kind"] == "document"
    assert (
        REWORD_NEW in (workspace / "evidence/curated/domain/lab-hemolysed-specimens.md").read_text()
    )
    # Putting the unit back in the source does not restore retired knowledge.
    original = (Path(__file__).parents[2] / "fixtures/workspace" / LAB_PATH).read_text()
    minutes = original[original.index(MINUTES_START) :]
    (workspace / LAB_PATH).write_text((workspace / LAB_PATH).read_text() + "\n" + minutes)
    line = source_line(refresh(workspace), LAB)
    assert "evidence:lab:turnaround-minutes" not in line["proposed"]
    assert [d["id"] for d in line["dropped"]] == ["evidence:lab:turnaround-minutes"]
    assert "reserved" in line["dropped"][0]["reason"]


def test_editing_an_affected_file_makes_the_comparison_stale(workspace: Path) -> None:
    _adopt_lab(workspace)
    _edit_draft(workspace, reword=True)
    refresh(workspace)
    unit = workspace / "evidence/curated/glossary/lab-turnaround-time.md"
    unit.write_text(unit.read_text().replace("- TAT", "- TAT\n- t.a.t."))
    before = tree_state(workspace)
    stale = decide(workspace, LAB, "replace")
    assert stale.exit_code == 3
    assert stale.json["errors"][0]["code"] == "E304"
    assert "lab-turnaround-time.md" in stale.json["errors"][0]["message"]
    assert tree_state(workspace) == before
    sid = record(workspace, LAB)["source_id"]
    unknown = tht(
        workspace, "decide", "--source-id", sid, "--revision", "0" * 64, "--decision", "keep"
    )
    assert unknown.exit_code == 3 and unknown.json["errors"][0]["code"] == "E304"
    assert tree_state(workspace) == before


def test_mass_retirement_needs_the_flag(workspace: Path) -> None:
    units = "".join(
        f"---\nschema_version: 4\nid: evidence:mass:rule-{n}\nkind: domain\nlanguage: en\n"
        f"purposes: [sql_generation]\n---\n\n# Rule {n}\n\n## Rule\n\nRule number {n} holds.\n\n"
        for n in range(4)
    )
    draft = workspace / "evidence/incoming/mass.md"
    draft.write_text(units)
    refresh(workspace)
    assert decide(workspace, "fs:evidence/incoming/mass.md", "replace").exit_code == 0
    draft.write_text(units[: units.index("---\nschema_version", 10)])  # only rule-0 is left
    line = source_line(refresh(workspace), "fs:evidence/incoming/mass.md")
    assert line["retire"] == [
        "evidence:mass:rule-1",
        "evidence:mass:rule-2",
        "evidence:mass:rule-3",
    ]
    before = tree_state(workspace)
    refused = decide(workspace, "fs:evidence/incoming/mass.md", "replace")
    assert refused.exit_code == 3 and refused.json["errors"][0]["code"] == "E305"
    assert tree_state(workspace) == before
    allowed = decide(workspace, "fs:evidence/incoming/mass.md", "replace", "--allow-mass-retire")
    assert allowed.exit_code == 0, allowed.stdout
    gone = deletions(workspace)
    assert all(gone[f"evidence:mass:rule-{n}"]["reason"] == "retired-by-replace" for n in (1, 2, 3))


def test_ownership_conflict_is_a_review_item_that_blocks_replace(workspace: Path) -> None:
    taken = (workspace / "evidence/curated/domain/validated-lab-results.md").read_text()
    (workspace / "evidence/incoming/takeover.md").write_text(taken.replace("Preliminary", "Draft"))
    line = source_line(refresh(workspace), "fs:evidence/incoming/takeover.md")
    assert line["review_items"] == 1
    items = record(workspace, "fs:evidence/incoming/takeover.md")["comparison"]["review_items"]
    assert items[0]["code"] == "ownership-conflict"
    assert "manual unit without lineage" in items[0]["message"]
    before = tree_state(workspace)
    refused = decide(workspace, "fs:evidence/incoming/takeover.md", "replace")
    assert refused.exit_code == 1 and refused.json["errors"][0]["code"] == "E140"
    assert tree_state(workspace) == before


def test_retract_raises_review_items_until_edited_retired_or_resolved(workspace: Path) -> None:
    _adopt_lab(workspace)
    sid = record(workspace, LAB)["source_id"]
    retracted = tht(workspace, "sources", "retract", sid, "--note", "withdrawn by the lab")
    assert retracted.exit_code == 0, retracted.stdout
    assert retracted.json["result"]["review_items_raised"] == [
        "evidence:lab:hemolysed-specimens",
        "evidence:lab:turnaround-minutes",
        "evidence:lab:turnaround-time",
    ]
    shown = tht(workspace, "sources", "show", sid)
    assert shown.json["result"]["status"] == "retracted"
    assert "withdrawn by the lab" in shown.json["warnings"][0]["message"]
    unit_show = tht(workspace, "show", "evidence:lab:turnaround-time")
    assert any("withdrawn" in w for w in unit_show.json["result"]["warnings"])
    blocked = tht(workspace, "consolidate")
    assert blocked.exit_code == 1
    assert {e["code"] for e in blocked.json["errors"]} == {"E140"}
    assert len(blocked.json["errors"]) == 3
    hemo = workspace / "evidence/curated/domain/lab-hemolysed-specimens.md"
    hemo.write_text(hemo.read_text().replace("falsely high", "falsely elevated"))
    (workspace / "evidence/curated/formula/lab-turnaround-minutes.md").unlink()
    still = tht(workspace, "consolidate")
    assert [e["unit_id"] for e in still.json["errors"]] == ["evidence:lab:turnaround-time"]
    resolved = tht(
        workspace, "review", "resolve", "evidence:lab:turnaround-time", "--note", "still valid"
    )
    assert resolved.exit_code == 0, resolved.stdout
    done = tht(workspace, "consolidate")
    assert done.exit_code == 0, done.stdout
    listed = tht(workspace, "sources", "list").json["result"]["sources"]
    lab = next(s for s in listed if s["source_id"] == sid)
    assert lab["status"] == "retracted" and lab["suppressed"] is True


def test_dry_run_and_missing_sources_never_delete(workspace: Path) -> None:
    before = tree_state(workspace)
    dry = refresh(workspace, "--dry-run")
    assert dry.exit_code == 0 and source_line(dry, WARD)["status"] == "compared"
    assert tree_state(workspace) == before
    _adopt_lab(workspace)
    (workspace / LAB_PATH).unlink()
    line = source_line(refresh(workspace), LAB)
    assert line["status"] == "missing"
    assert record(workspace, LAB)["status"] == "missing"
    assert (workspace / "evidence/curated/glossary/lab-turnaround-time.md").exists()
    assert tht(workspace, "consolidate").exit_code == 0  # the acquired version still backs them


def test_a_curated_deletion_suppresses_new_ids_from_the_source(workspace: Path) -> None:
    _adopt_lab(workspace)
    (workspace / "evidence/curated/formula/lab-turnaround-minutes.md").unlink()
    assert tht(workspace, "consolidate").exit_code == 0
    extra = (
        "\n---\nschema_version: 4\nid: evidence:lab:new-rule\nkind: domain\nlanguage: en\n"
        "purposes: [sql_generation]\n---\n\n# New rule\n\n## Rule\n\nA new rule.\n"
    )
    (workspace / LAB_PATH).write_text((workspace / LAB_PATH).read_text() + extra)
    line = source_line(refresh(workspace), LAB)
    reasons = {d["id"]: d["reason"] for d in line["dropped"]}
    assert "suppressed" in reasons["evidence:lab:new-rule"]
    assert "reserved" in reasons["evidence:lab:turnaround-minutes"]


def test_refresh_one_source_by_id_prefix(workspace: Path) -> None:
    result = refresh(workspace, "--source-id", "220c55b7c756")
    assert result.exit_code == 0, result.stdout
    assert [s["locator"] for s in result.json["result"]["sources"]] == [LAB]
    unknown = refresh(workspace, "--source-id", "ffffffffffff")
    assert unknown.exit_code == 2 and unknown.json["errors"][0]["code"] == "E904"


def test_a_decision_blocked_by_other_review_items_is_saved_for_retry(workspace: Path) -> None:
    _adopt_lab(workspace)
    sid = record(workspace, LAB)["source_id"]
    assert tht(workspace, "sources", "retract", sid, "--note", "withdrawn").exit_code == 0
    refresh(workspace)
    blocked = decide(workspace, WARD, "replace")
    assert blocked.exit_code == 1, blocked.stdout
    assert blocked.json["result"] == {"decision": "saved"}
    assert "--retry" in blocked.json["errors"][-1]["message"]
    assert record(workspace, WARD)["decision"]["status"] == "saved"
    assert (workspace / "evidence/curated/enum/admin-tipo-reparto.md").exists()
    for uid in ("hemolysed-specimens", "turnaround-time", "turnaround-minutes"):
        resolved = tht(workspace, "review", "resolve", f"evidence:lab:{uid}", "--note", "checked")
        assert resolved.exit_code == 0
    ward_id = record(workspace, WARD)["source_id"]
    retried = tht(workspace, "decide", "--source-id", ward_id, "--retry")
    assert retried.exit_code == 0, retried.stdout
    assert record(workspace, WARD)["decision"]["status"] == "activated"
    entry = manifest_entry(workspace, "evidence:admin:tipo-reparto")
    assert entry is not None and entry["provenance"]["kind"] == "document"


def test_every_sources_command_prints_one_valid_json_envelope(workspace: Path) -> None:
    import jsonschema

    from evidence_tool.unit.schemas import load_schema

    schema = load_schema("cli/envelope.schema.json")
    validator = jsonschema.validators.validator_for(schema)(schema)
    outputs = [refresh(workspace), refresh(workspace, "--dry-run")]
    sid = record(workspace, LAB)["source_id"]
    outputs.append(decide(workspace, LAB, "replace"))
    outputs.append(tht(workspace, "sources", "list"))
    outputs.append(tht(workspace, "sources", "show", sid))
    outputs.append(tht(workspace, "sources", "retract", sid, "--note", "gone"))
    outputs.append(tht(workspace, "decide", "--source-id", sid, "--retry"))  # E140: blocked
    outputs.append(tht(workspace, "decide", "--source-id", sid))  # usage: no --revision
    for out in outputs:
        assert out.stdout.count("\n") == 1, out.stdout
        validator.validate(out.json)
    assert [o.exit_code for o in outputs] == [0, 0, 0, 0, 0, 0, 1, 2]
