"""consolidate: idempotence, classification, snapshot growth, dry run, E601 (SPEC.md 4, 5)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from archive_helpers import (
    ACTOR,
    UNIT,
    UNIT_PATH,
    WriteRecorder,
    edit_visibly,
    entry,
    managed,
    retitle,
    tree,
)
from helpers import codes

from evidence_tool.archive.local import LocalEvidenceArchive


@pytest.mark.parametrize("start", ["shipped", "bare"])
def test_consolidating_twice_without_a_change_writes_nothing(
    workspace: Path, start: str, record_writes: WriteRecorder
) -> None:
    """Whether the fixture ships an active archive or none (then the baseline is pending).

    Regression ("bare"): retrying a pending candidate unlinked an absent staged.json.
    """
    if start == "bare":
        shutil.rmtree(workspace / "evidence/.local")
        (workspace / "evidence/local-manifest.yaml").unlink(missing_ok=True)
    initialized = workspace
    archive = LocalEvidenceArchive(initialized)
    archive.initialize(ACTOR)
    first = archive.consolidate(ACTOR)
    before = tree(initialized, lock_content=False)
    record_writes.calls.clear()

    second = archive.consolidate("bob")

    assert second.revision == first.revision
    assert second.wrote is False
    assert second.changes["unchanged"] == 48
    assert tree(initialized, lock_content=False) == before
    # The only write is the lock holder's note, which is not an archive file.
    assert record_writes.paths(initialized) <= {".evidence-archive.lock"}


def test_consolidating_twice_through_the_cli_returns_the_same_revision(
    initialized: Path, tht
) -> None:
    first = tht("consolidate", root=initialized)
    before = tree(initialized, lock_content=False)
    second = tht("consolidate", root=initialized)
    assert first.exit_code == second.exit_code == 0
    assert second.json["result"]["revision"] == first.json["result"]["revision"]
    assert second.json["result"]["wrote"] is False
    assert tree(initialized, lock_content=False) == before


@pytest.mark.parametrize(
    "reformat",
    [
        pytest.param(lambda b: b.replace(b"\n", b"\r\n"), id="crlf"),
        pytest.param(lambda b: b.replace(b"## Rule\n", b"## Rule\n\n", 1), id="blank-line"),
    ],
)
def test_reformatting_keeps_the_declaration_but_makes_a_new_revision(
    initialized: Path, reformat, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = LocalEvidenceArchive(initialized)
    before = entry(initialized)
    path = initialized / UNIT_PATH
    path.write_bytes(reformat(path.read_bytes()))
    monkeypatch.setenv("THT_NOW", "2030-01-01T00:00:00Z")

    result = archive.consolidate("bob")

    after = entry(initialized)
    assert result.changes["reformatted"] == [UNIT]
    assert result.changes["modified"] == []
    assert result.revision != archive.state().baseline
    assert after["file_hash"] != before["file_hash"]
    assert after["content_hash"] == before["content_hash"]
    assert after["provenance"] == before["provenance"]  # same curator, same declared_at
    assert after["provenance"]["curator"] != "bob"


def test_a_visible_edit_makes_a_manual_declaration_by_the_new_actor(
    initialized: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    edit_visibly(initialized / UNIT_PATH)
    monkeypatch.setenv("THT_NOW", "2030-01-01T00:00:00Z")
    result = LocalEvidenceArchive(initialized).consolidate("bob")
    assert result.changes["modified"] == [UNIT]
    assert entry(initialized)["provenance"] == {
        "kind": "manual",
        "curator": "bob",
        "declared_at": "2030-01-01T00:00:00Z",
    }


def test_a_rename_with_the_same_id_keeps_the_declaration(initialized: Path) -> None:
    before = entry(initialized)
    new = initialized / "evidence/curated/domain/admission-date-rule.md"
    (initialized / UNIT_PATH).rename(new)

    result = LocalEvidenceArchive(initialized).consolidate("bob")

    after = entry(initialized)
    assert result.changes["renamed"] == [UNIT]
    assert result.changes["deleted"] == [] and result.changes["added"] == []
    assert after["path"] == "evidence/curated/domain/admission-date-rule.md"
    assert after["provenance"] == before["provenance"]


@pytest.mark.parametrize("k", [1, 3])
def test_a_k_unit_change_adds_k_objects_and_one_snapshot(consolidated: Path, k: int) -> None:
    files = sorted((consolidated / "evidence/curated/glossary").glob("*.md"))[:k]
    before = tree(consolidated)
    for path in files:
        retitle(path)

    result = LocalEvidenceArchive(consolidated).consolidate("bob")

    assert len(result.changes["modified"]) == k
    # .evidence-cache/ is derived and never committed: it is not part of the operator's diff.
    added = {
        p
        for p, kind in tree(consolidated).items()
        if p not in before and kind != "dir" and not p.startswith(".evidence-cache/")
    }
    objects = {p for p in added if p.startswith("evidence/.local/objects/")}
    snapshots = {p for p in added if p.startswith("evidence/.local/snapshots/")}
    assert len(objects) == k
    assert snapshots == {f"evidence/.local/snapshots/{result.revision}/manifest.json"}
    assert added == objects | snapshots


def test_dry_run_writes_nothing_and_classifies_like_the_real_run(initialized: Path, tht) -> None:
    ws = initialized
    edit_visibly(ws / UNIT_PATH)  # modified
    (ws / "evidence/curated/glossary/drg.md").unlink()  # deleted
    path = ws / "evidence/curated/glossary/sdo.md"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))  # reformatted
    (ws / "evidence/curated/glossary/ward.md").rename(ws / "evidence/curated/glossary/wards.md")
    new = (ws / "evidence/curated/glossary/readmission.md").read_text(encoding="utf-8")
    (ws / "evidence/curated/glossary/readmission-90.md").write_text(
        new.replace("id: evidence:clinical:readmission", "id: evidence:clinical:readmission-90"),
        encoding="utf-8",
    )  # added
    (ws / ".evidence-archive.lock").unlink()  # left by init; a dry run must not create it
    before = tree(ws)

    dry = tht("consolidate", "--dry-run", root=ws)

    assert dry.exit_code == 0, dry.stdout
    assert tree(ws) == before
    assert not (ws / ".evidence-archive.lock").exists()
    assert dry.json["result"]["dry_run"] is True
    assert dry.json["result"]["wrote"] is False

    real = tht("consolidate", root=ws)
    assert real.exit_code == 0, real.stdout
    assert real.json["result"]["changes"] == dry.json["result"]["changes"]
    assert dry.json["result"]["changes"] == {
        "added": ["evidence:clinical:readmission-90"],
        "modified": [UNIT],
        "reformatted": ["evidence:clinical:sdo"],
        "renamed": ["evidence:admin:ward"],
        "restored": [],
        "deleted": ["evidence:clinical:drg"],
        "unchanged": 44,
    }


def test_dry_run_on_unchanged_files_reports_no_change(consolidated: Path, tht) -> None:
    before = tree(consolidated)
    dry = tht("consolidate", "--dry-run", root=consolidated)
    assert dry.exit_code == 0
    assert tree(consolidated) == before
    assert dry.json["result"]["revision"] == LocalEvidenceArchive(consolidated).state().newest


def _hide_curated(ws: Path, how: str) -> None:
    curated = ws / "evidence/curated"
    if how == "deleted":
        shutil.rmtree(curated)
    elif how == "renamed":
        curated.rename(ws / "evidence/curated.off")
    else:  # a file where the folder should be
        shutil.rmtree(curated)
        curated.write_text("not a folder\n", encoding="utf-8")


@pytest.mark.parametrize("how", ["deleted", "renamed", "file"])
@pytest.mark.parametrize("dry_run", [False, True], ids=["real", "dry-run"])
def test_a_missing_curated_tree_is_unavailable_not_all_deleted(
    consolidated: Path, tht, how: str, dry_run: bool
) -> None:
    _hide_curated(consolidated, how)
    before = managed(consolidated)

    result = tht("consolidate", *(["--dry-run"] if dry_run else []), root=consolidated)

    assert result.exit_code == 6
    assert codes(result) == ["E601"]
    assert result.json["errors"][0]["path"] == "evidence/curated"
    assert managed(consolidated) == before
    snapshot = LocalEvidenceArchive(consolidated).newest_snapshot()
    assert snapshot is not None and snapshot.deletions == []


def test_invalid_files_block_the_snapshot_and_list_every_error(consolidated: Path, tht) -> None:
    for name in ("drg.md", "sdo.md"):
        path = consolidated / "evidence/curated/glossary" / name
        path.write_text(path.read_text(encoding="utf-8").replace("kind: glossary", "kind: nope"))
    before = managed(consolidated)
    result = tht("consolidate", root=consolidated)
    assert result.exit_code == 1
    paths = {e["path"] for e in result.json["errors"]}
    assert paths == {"evidence/curated/glossary/drg.md", "evidence/curated/glossary/sdo.md"}
    assert managed(consolidated) == before
