"""Managed provenance: manual and document declarations, lineage, the E150 re-check (SPEC.md 5.1)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from archive_helpers import (
    ACTOR,
    EXCERPT,
    SOURCE_ID,
    SOURCE_TEXT,
    UNIT,
    UNIT_PATH,
    edit_visibly,
    entry,
    managed,
    retitle,
    stage_document,
    tree,
)
from helpers import codes

from evidence_tool.archive.edits import ArchiveEditor
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.errors import InvalidFilesError

LINEAGE_KEYS = {"kind", "source_id", "source_path", "source_hash", "excerpts"}


def test_initialize_records_manual_declarations_and_staged_documents(bare: Path) -> None:
    provenance = stage_document(bare)
    result = LocalEvidenceArchive(bare).initialize("carol")
    assert result.status == "initialized"
    assert entry(bare)["provenance"] == provenance
    other = entry(bare, "evidence:clinical:drg")["provenance"]
    assert other["kind"] == "manual" and other["curator"] == "carol"
    assert set(other) == {"kind", "curator", "declared_at"}


def test_a_staged_document_declaration_binds_only_its_exact_content(consolidated: Path) -> None:
    stage_document(consolidated)
    edit_visibly(consolidated / UNIT_PATH)  # the staged declaration describes the old wording
    LocalEvidenceArchive(consolidated).consolidate("bob")
    provenance = entry(consolidated)["provenance"]
    assert provenance["kind"] == "manual" and provenance["curator"] == "bob"


def test_an_unchanged_document_declaration_carries_over_after_its_recheck(
    documented: Path,
) -> None:
    before = entry(documented)
    retitle(documented / "evidence/curated/glossary/drg.md")  # something else changes
    result = LocalEvidenceArchive(documented).consolidate("bob")
    assert result.changes["modified"] == ["evidence:clinical:drg"]
    assert entry(documented)["provenance"] == before["provenance"]


def test_a_visible_edit_keeps_the_document_as_original_lineage(
    documented: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    document = entry(documented)["provenance"]
    lineage = {k: v for k, v in document.items() if k in LINEAGE_KEYS}
    archive = LocalEvidenceArchive(documented)

    edit_visibly(documented / UNIT_PATH)
    monkeypatch.setenv("THT_NOW", "2030-01-01T00:00:00Z")
    archive.consolidate("bob")
    first = entry(documented)["provenance"]
    assert first == {
        "kind": "manual",
        "curator": "bob",
        "declared_at": "2030-01-01T00:00:00Z",
        "original": lineage,
    }

    retitle(documented / UNIT_PATH)  # a later edit by someone else keeps the lineage
    monkeypatch.setenv("THT_NOW", "2030-02-01T00:00:00Z")
    archive.consolidate("carol")
    second = entry(documented)["provenance"]
    assert second["curator"] == "carol"
    assert second["declared_at"] == "2030-02-01T00:00:00Z"
    assert second["original"] == lineage


def test_lineage_is_not_rechecked_against_the_source(documented: Path) -> None:
    """``original`` is history, not a claim: a changed source does not block the edited unit."""
    edit_visibly(documented / UNIT_PATH)
    LocalEvidenceArchive(documented).consolidate("bob")
    source = documented / entry(documented)["provenance"]["original"]["source_path"]
    source.write_text("rewritten\n", encoding="utf-8")
    retitle(documented / UNIT_PATH)
    result = LocalEvidenceArchive(documented).consolidate("bob")
    assert result.changes["modified"] == [UNIT]


def test_saving_a_document_derived_unit_keeps_the_original_lineage(documented: Path) -> None:
    """Regression: ``save`` staged a manual declaration without the ``original`` lineage."""
    lineage = {k: v for k, v in entry(documented)["provenance"].items() if k in LINEAGE_KEYS}
    editor = ArchiveEditor(LocalEvidenceArchive(documented))
    working = editor.get(UNIT)
    assert working.unit is not None
    editor.save(
        dataclasses.replace(working.unit, title=working.unit.title + " (saved)"),
        working.file_hash,
        "dave",
    )
    LocalEvidenceArchive(documented).consolidate("bob")
    provenance = entry(documented)["provenance"]
    assert provenance["kind"] == "manual" and provenance["curator"] == "dave"
    assert provenance["original"] == lineage


def test_saving_unchanged_content_keeps_the_declaration(documented: Path) -> None:
    """Regression: a save that changes nothing visible replaced the document declaration."""
    before = entry(documented)["provenance"]
    editor = ArchiveEditor(LocalEvidenceArchive(documented))
    working = editor.get(UNIT)
    assert working.unit is not None
    editor.save(working.unit, working.file_hash, "dave")
    LocalEvidenceArchive(documented).consolidate("bob")
    assert entry(documented)["provenance"] == before


def _change_source(root: Path, how: str) -> None:
    source = root / entry(root)["provenance"]["source_path"]
    if how == "bytes-changed":
        source.write_bytes(source.read_bytes() + b"\nAn added line.\n")
    elif how == "excerpt-removed":
        source.write_text(SOURCE_TEXT.replace(EXCERPT, ""), encoding="utf-8")
    else:
        source.unlink()


@pytest.mark.parametrize("how", ["bytes-changed", "excerpt-removed", "missing"])
def test_a_document_declaration_whose_source_changed_is_e150(
    documented: Path, tht, how: str
) -> None:
    _change_source(documented, how)
    before = tree(documented, lock_content=False)

    result = tht("consolidate", root=documented)

    assert result.exit_code == 1
    assert codes(result) == ["E150"]
    error = result.json["errors"][0]
    assert error["unit_id"] == UNIT and error["path"] == UNIT_PATH
    assert tree(documented, lock_content=False) == before
    dry = tht("consolidate", "--dry-run", root=documented)
    assert dry.exit_code == 1 and codes(dry) == ["E150"]


def test_an_excerpt_the_source_does_not_hold_is_e150(consolidated: Path) -> None:
    stage_document(consolidated, excerpts=(EXCERPT, "Admissions are counted monthly."))
    before = managed(consolidated)
    with pytest.raises(InvalidFilesError) as caught:
        LocalEvidenceArchive(consolidated).consolidate(ACTOR)
    assert [d.code for d in caught.value.diagnostics] == ["E150"]
    assert "Admissions are counted monthly." in caught.value.diagnostics[0].message
    assert managed(consolidated) == before


def test_a_restored_source_lets_consolidation_through_again(documented: Path) -> None:
    source = documented / entry(documented)["provenance"]["source_path"]
    original = source.read_bytes()
    source.write_bytes(b"changed\n")
    with pytest.raises(InvalidFilesError):
        LocalEvidenceArchive(documented).consolidate(ACTOR)
    source.write_bytes(original)
    result = LocalEvidenceArchive(documented).consolidate(ACTOR)
    assert entry(documented)["provenance"]["source_id"] == SOURCE_ID
    assert result.changes["unchanged"] == 48


def test_document_declarations_survive_reformatting_and_renames(documented: Path) -> None:
    before = entry(documented)["provenance"]
    path = documented / UNIT_PATH
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    path.rename(documented / "evidence/curated/domain/admission-date-crlf.md")
    result = LocalEvidenceArchive(documented).consolidate("bob")
    assert result.changes["renamed"] == [UNIT]
    assert entry(documented)["provenance"] == before


def test_source_bytes_are_kept_as_objects_of_the_snapshot(documented: Path) -> None:
    archive = LocalEvidenceArchive(documented)
    snapshot = archive.newest_snapshot()
    assert snapshot is not None
    source_path = entry(documented)["provenance"]["source_path"]
    [section] = [s for s in snapshot.manifest["sources"] if s["path"] == source_path]
    assert archive.objects.get(section["blob"]) == (documented / source_path).read_bytes()


def test_a_staged_manual_declaration_for_unchanged_content_applies(documented: Path) -> None:
    """How 'decide keep' turns a kept document unit into a manual one with its lineage."""
    document = entry(documented)["provenance"]
    lineage = {k: v for k, v in document.items() if k in LINEAGE_KEYS}
    keep = {"kind": "manual", "curator": "dave", "declared_at": "2030-01-01T00:00:00Z"}
    archive = LocalEvidenceArchive(documented)
    archive.merge_staged(
        {
            "declarations": {
                UNIT: {
                    "content_hash": entry(documented)["content_hash"],
                    "provenance": {**keep, "original": lineage},
                }
            }
        }
    )
    archive.consolidate("bob")
    assert entry(documented)["provenance"] == {**keep, "original": lineage}
