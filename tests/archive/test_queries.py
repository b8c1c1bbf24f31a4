"""show, diff, log, status, init and --workspace through the CLI (SPEC.md 5, 10)."""

from __future__ import annotations

import shutil
from pathlib import Path

from archive_helpers import (
    PYTHON,
    SOURCE_ID,
    UNIT,
    UNIT_PATH,
    edit_visibly,
    retitle,
    stage_review_item,
    tree,
    write_installation,
)
from helpers import codes

from evidence_tool.archive.local import LocalEvidenceArchive

NEW_UNIT = "evidence:clinical:readmission-90"


def _add_unit(ws: Path) -> None:
    text = (ws / "evidence/curated/glossary/readmission.md").read_text(encoding="utf-8")
    (ws / "evidence/curated/glossary/readmission-90.md").write_text(
        text.replace("id: evidence:clinical:readmission", f"id: {NEW_UNIT}"), encoding="utf-8"
    )


def test_show_gives_provenance_and_lineage(documented: Path, tht) -> None:
    edit_visibly(documented / UNIT_PATH)
    assert tht("consolidate", "--actor", "bob", root=documented).exit_code == 0

    shown = tht("show", UNIT, root=documented)

    assert shown.exit_code == 0
    result = shown.json["result"]
    assert result["id"] == UNIT and result["path"] == UNIT_PATH and result["deleted"] is None
    assert result["provenance"]["kind"] == "manual"
    assert result["provenance"]["curator"] == "bob"
    assert result["provenance"]["original"]["source_id"] == SOURCE_ID
    assert "Each audited report" in result["text"]
    text = tht("show", UNIT, root=documented, as_json=False)
    assert text.exit_code == 0 and "original" in text.stdout


def test_show_of_a_deleted_unit_gives_its_record_and_last_text(consolidated: Path, tht) -> None:
    (consolidated / "evidence/curated/glossary/drg.md").unlink()
    tht("consolidate", root=consolidated)
    shown = tht("show", "evidence:clinical:drg", root=consolidated)
    assert shown.exit_code == 0
    assert shown.json["result"]["deleted"]["reason"] == "removed"
    assert shown.json["result"]["text"].startswith("---\n")
    unknown = tht("show", "evidence:nothing-here", root=consolidated)
    assert unknown.exit_code == 2 and codes(unknown) == ["E904"]


def test_diff_without_revisions_shows_unconsolidated_edits(consolidated: Path, tht) -> None:
    edit_visibly(consolidated / UNIT_PATH)
    (consolidated / "evidence/curated/glossary/drg.md").unlink()
    _add_unit(consolidated)

    result = tht("diff", root=consolidated)

    assert result.exit_code == 0
    data = result.json["result"]
    state = LocalEvidenceArchive(consolidated).state()
    assert data["from"] == (state.active or state.newest)  # the active one when there is one
    assert data["to"] == "working files"
    assert data["added"] == [NEW_UNIT]
    assert data["modified"] == [UNIT]
    assert data["deleted"] == ["evidence:clinical:drg"]
    assert data["invalid"] == []


def test_diff_between_two_revisions(consolidated: Path, tht) -> None:
    archive = LocalEvidenceArchive(consolidated)
    old = archive.state().newest
    assert old is not None
    retitle(consolidated / UNIT_PATH)
    (consolidated / "evidence/curated/glossary/drg.md").unlink()
    _add_unit(consolidated)
    new = tht("consolidate", root=consolidated).json["result"]["revision"]

    result = tht("diff", old[:12], new, root=consolidated)

    assert result.exit_code == 0
    data = result.json["result"]
    assert (data["from"], data["to"]) == (old, new)
    assert (data["added"], data["modified"], data["deleted"]) == (
        [NEW_UNIT],
        [UNIT],
        ["evidence:clinical:drg"],
    )
    assert tht("diff", "baseline", "active", root=consolidated).exit_code == 0
    bad = tht("diff", "zz", root=consolidated)
    assert bad.exit_code == 2 and codes(bad) == ["E904"]
    too_many = tht("diff", old, new, new, root=consolidated)
    assert too_many.exit_code == 2


def test_status_reports_revisions_and_unconsolidated_edits(consolidated: Path, tht) -> None:
    retitle(consolidated / UNIT_PATH)
    status = tht("status", root=consolidated)
    assert status.exit_code == 0
    result = status.json["result"]
    state = LocalEvidenceArchive(consolidated).state()
    assert result["initialized"] is True
    assert result["state"] == {
        "baseline": state.baseline,
        "active": state.active,
        "pending": state.pending,
    }
    assert result["units"] == 48
    assert result["unconsolidated"]["modified"] == [UNIT]
    assert tht("status", root=consolidated, as_json=False).exit_code == 0


def test_status_before_initialization(bare: Path, tht) -> None:
    result = tht("status", root=bare)
    assert result.exit_code == 0
    assert result.json["result"]["initialized"] is False


def test_init_is_idempotent(bare: Path, tht) -> None:
    first = tht("init", "--actor", "carol", root=bare)
    assert first.exit_code == 0
    assert first.json["result"]["status"] == "initialized"
    state = LocalEvidenceArchive(bare).state()
    assert state.baseline == first.json["result"]["revision"]
    assert state.active is None and state.pending is None  # no activation at init
    before = tree(bare, lock_content=False)

    second = tht("init", "--actor", "dave", root=bare)

    assert second.exit_code == 0
    assert second.json["result"]["status"] == "already_initialized"
    assert second.json["result"]["revision"] == state.baseline
    assert second.json["result"]["wrote"] is False
    assert tree(bare, lock_content=False) == before


def test_the_log_records_every_event_with_actor_and_time(bare: Path, tmp_path: Path, tht) -> None:
    failing = write_installation(
        tmp_path / "failing.yaml", command=[PYTHON, "-c", "import sys; sys.exit(1)"]
    )
    assert tht("init", "--actor", "carol", root=bare).exit_code == 0
    assert tht("consolidate", "--actor", "carol", root=bare).exit_code == 0
    retitle(bare / UNIT_PATH)
    failed = tht("consolidate", "--actor", "dave", root=bare, installation=failing)
    assert failed.exit_code == 4
    assert tht("consolidate", "--actor", "dave", root=bare).exit_code == 0
    (bare / "evidence/curated/glossary/drg.md").unlink()
    assert tht("consolidate", "--actor", "dave", root=bare).exit_code == 0
    assert tht("restore", "evidence:clinical:drg", "--actor", "erin", root=bare).exit_code == 0
    stage_review_item(bare, "evidence:clinical:sdo")
    resolved = tht(
        "review", "resolve", "evidence:clinical:sdo", "--note", "ok", "--actor", "erin", root=bare
    )
    assert resolved.exit_code == 0

    log = tht("log", root=bare)

    assert log.exit_code == 0
    events = log.json["result"]["events"]
    assert [(e["event"], e["actor"]) for e in events] == [
        ("baseline", "carol"),
        ("consolidated", "carol"),
        ("activated", "carol"),
        ("consolidated", "dave"),
        ("activation failed", "dave"),
        ("activated", "dave"),
        ("consolidated", "dave"),
        ("activated", "dave"),
        ("restored", "erin"),
        ("consolidated", "erin"),
        ("activated", "erin"),
        ("review resolved", "erin"),
    ]
    assert all(e["at"].endswith("Z") for e in events)
    text = tht("log", root=bare, as_json=False)
    assert text.exit_code == 0 and "review resolved by erin" in text.stdout


def test_workspace_id_resolves_under_the_registry(workspace: Path, tmp_path: Path, tht) -> None:
    registry = tmp_path / "registry"
    root = registry / "repo" / "psd-clinical"
    root.parent.mkdir(parents=True)
    shutil.copytree(workspace, root, symlinks=True)
    inst = write_installation(tmp_path / "inst.yaml", registry=registry)

    status = tht("status", installation=inst, workspace_id="psd-clinical")
    assert status.exit_code == 0
    assert status.json["workspace"] == str(root)
    retitle(root / UNIT_PATH)
    result = tht("consolidate", "--no-activate", installation=inst, workspace_id="psd-clinical")
    assert result.exit_code == 0
    assert result.json["result"]["changes"]["modified"] == [UNIT]

    missing = tht("consolidate", installation=inst, workspace_id="no-such-workspace")
    assert missing.exit_code == 6 and codes(missing) == ["E603"]
    assert not (registry / "repo" / "no-such-workspace").exists()
    no_inst = tht("status", workspace_id="psd-clinical")
    assert no_inst.exit_code == 2


def test_a_missing_workspace_root_is_unavailable(tmp_path: Path, tht) -> None:
    """Regression: readers reported an empty archive (verify passed) and writers said E303."""
    gone = tmp_path / "gone"
    for command in (("status",), ("verify",), ("log",), ("consolidate",), ("init",)):
        result = tht(*command, root=gone)
        assert result.exit_code == 6, command
        assert codes(result) == ["E603"]
    assert not gone.exists()


def test_a_first_consolidate_without_init_records_the_baseline(bare: Path, tht) -> None:
    """Regression: it left baseline null, and a later 'init' reset the active pointer."""
    first = tht("consolidate", root=bare)
    assert first.exit_code == 0, first.stdout
    revision = first.json["result"]["revision"]
    state = LocalEvidenceArchive(bare).state()
    assert (state.baseline, state.active, state.pending) == (revision, revision, None)

    again = tht("init", root=bare)

    assert again.json["result"]["status"] == "already_initialized"
    assert LocalEvidenceArchive(bare).state() == state
    events = [e["event"] for e in LocalEvidenceArchive(bare).events()]
    assert events == ["baseline", "consolidated", "activated"]
    assert tht("verify", root=bare).exit_code == 0
