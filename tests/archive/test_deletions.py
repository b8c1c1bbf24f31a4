"""Deletions, reserved ids and restore (SPEC.md 5.2)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from archive_helpers import ACTOR, SOURCE_ID, UNIT, UNIT_PATH, entry, managed
from helpers import codes

from evidence_tool.archive.edits import ArchiveEditor
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.errors import ConflictError

RECORD_KEYS = {
    "id",
    "deleted_at",
    "last_revision",
    "actor",
    "reason",
    "last_content_hash",
    "source_id",
}


def _deletion(root: Path, unit_id: str = UNIT) -> dict:
    snapshot = LocalEvidenceArchive(root).newest_snapshot()
    assert snapshot is not None
    return next(d.to_json() for d in snapshot.deletions if d.id == unit_id)


def test_deleting_a_file_records_a_deletion(
    consolidated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = LocalEvidenceArchive(consolidated)
    last = archive.state().newest
    before = entry(consolidated)
    (consolidated / UNIT_PATH).unlink()
    monkeypatch.setenv("THT_NOW", "2030-01-01T00:00:00Z")

    result = archive.consolidate("bob")

    assert result.changes["deleted"] == [UNIT]
    snapshot = archive.newest_snapshot()
    assert snapshot is not None and snapshot.entry(UNIT) is None
    assert [d.to_json() for d in snapshot.deletions] == [
        {
            "id": UNIT,
            "deleted_at": "2030-01-01T00:00:00Z",
            "last_revision": last,
            "actor": "bob",
            "reason": "removed",
            "last_content_hash": before["content_hash"],
            "source_id": None,
        }
    ]
    assert snapshot.manifest["suppressed_sources"] == []


def test_a_deleted_id_stays_reserved(consolidated: Path, tht) -> None:
    data = (consolidated / UNIT_PATH).read_bytes()
    (consolidated / UNIT_PATH).unlink()
    LocalEvidenceArchive(consolidated).consolidate("bob")
    (consolidated / "evidence/curated/domain/admission-date-again.md").write_bytes(data)
    before = managed(consolidated)

    result = tht("consolidate", root=consolidated)

    assert result.exit_code == 1
    assert codes(result) == ["E121"]
    assert result.json["errors"][0]["path"] == "evidence/curated/domain/admission-date-again.md"
    assert managed(consolidated) == before


def test_restore_brings_the_unit_back_with_its_declaration(consolidated: Path, tht) -> None:
    data = (consolidated / UNIT_PATH).read_bytes()
    before = entry(consolidated)
    (consolidated / UNIT_PATH).unlink()
    LocalEvidenceArchive(consolidated).consolidate("bob")

    result = tht("restore", UNIT, "--actor", "carol", root=consolidated)

    assert result.exit_code == 0, result.stdout
    assert result.json["result"]["changes"]["restored"] == [UNIT]
    assert (consolidated / UNIT_PATH).read_bytes() == data
    after = entry(consolidated)
    assert after["provenance"] == before["provenance"]
    assert after["content_hash"] == before["content_hash"]
    snapshot = LocalEvidenceArchive(consolidated).newest_snapshot()
    assert snapshot is not None and snapshot.deletions == []
    events = [e for e in LocalEvidenceArchive(consolidated).events() if e["event"] == "restored"]
    assert events and events[-1]["actor"] == "carol" and events[-1]["id"] == UNIT


def test_restore_of_an_id_that_was_never_deleted_is_an_unknown_name(
    consolidated: Path, tht
) -> None:
    result = tht("restore", "evidence:clinical:drg", root=consolidated)
    assert result.exit_code == 2
    assert codes(result) == ["E904"]


def test_restore_never_overwrites_a_file_at_the_old_path(consolidated: Path) -> None:
    (consolidated / UNIT_PATH).unlink()
    archive = LocalEvidenceArchive(consolidated)
    archive.consolidate("bob")
    (consolidated / UNIT_PATH).write_text("a note the curator is writing\n", encoding="utf-8")
    with pytest.raises(ConflictError):
        ArchiveEditor(archive).restore(UNIT, ACTOR, None)
    assert (consolidated / UNIT_PATH).read_text() == "a note the curator is writing\n"


def test_a_document_derived_deletion_suppresses_its_source(documented: Path) -> None:
    source = documented / entry(documented)["provenance"]["source_path"]
    (documented / UNIT_PATH).unlink()
    archive = LocalEvidenceArchive(documented)

    archive.consolidate("bob")

    record = _deletion(documented)
    assert set(record) == RECORD_KEYS
    assert record["source_id"] == SOURCE_ID and record["reason"] == "removed"
    snapshot = archive.newest_snapshot()
    assert snapshot is not None
    assert snapshot.manifest["suppressed_sources"] == [SOURCE_ID]
    assert source.is_file(), "the source is not deleted with the unit"
    local = (documented / "evidence/local-manifest.yaml").read_text(encoding="utf-8")
    assert f"suppressed_sources: [{SOURCE_ID}]" in local


def test_a_lineage_only_unit_records_its_source_on_deletion(documented: Path) -> None:
    path = documented / UNIT_PATH
    path.write_text(path.read_text().replace("# ", "# Edited: ", 1), encoding="utf-8")
    archive = LocalEvidenceArchive(documented)
    archive.consolidate("bob")
    path.unlink()
    archive.consolidate("bob")
    assert _deletion(documented)["source_id"] == SOURCE_ID


def test_remove_records_the_removing_actor(consolidated: Path) -> None:
    archive = LocalEvidenceArchive(consolidated)
    editor = ArchiveEditor(archive)
    editor.remove(UNIT, editor.get(UNIT).file_hash, "dave")
    assert not (consolidated / UNIT_PATH).exists()
    archive.consolidate("bob")
    record = _deletion(consolidated)
    assert record["actor"] == "dave" and record["reason"] == "removed"


def test_deleting_a_whole_kind_folder_records_each_unit(consolidated: Path) -> None:
    shutil.rmtree(consolidated / "evidence/curated/glossary")
    result = LocalEvidenceArchive(consolidated).consolidate("bob")
    assert len(result.changes["deleted"]) == 6
    assert result.changes["unchanged"] == 42


def test_restore_adopts_a_live_file_holding_the_id(consolidated: Path, tht) -> None:
    """Regression: restore wrote the old file next to the new one, then failed with E120.
    The file that carries the id again is the unit restored; nothing is written beside it
    (the way back from E121 and from an id changed by mistake, W122)."""
    data = (consolidated / UNIT_PATH).read_bytes()
    (consolidated / UNIT_PATH).unlink()
    LocalEvidenceArchive(consolidated).consolidate("bob")
    reuse = consolidated / "evidence/curated/domain/admission-date-again.md"
    reuse.write_bytes(data)
    assert codes(tht("consolidate", root=consolidated)) == ["E121"]

    result = tht("restore", UNIT, root=consolidated)

    assert result.exit_code == 0, result.json
    assert result.json["result"]["changes"]["restored"] == [UNIT]
    assert not (consolidated / UNIT_PATH).exists()
    assert reuse.read_bytes() == data
    assert entry(consolidated)["path"] == "evidence/curated/domain/admission-date-again.md"
