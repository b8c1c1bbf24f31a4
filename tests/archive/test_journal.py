"""Revision-checked edits (E301) and the journal of operator-file writes (E302, recover; 5.4)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from archive_helpers import UNIT, UNIT_PATH, entry, managed
from helpers import codes

from evidence_tool import fsio
from evidence_tool.archive.edits import ArchiveEditor
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.errors import ConflictError

OTHER_EDIT = b"\n<!-- edited in another editor -->\n"


class Crash(Exception):
    """Stands for the process dying at the injected point."""


def crash_after_journal_entry(op: str, path: str, phase: str) -> None:
    """Die right after the journal entry is durable, before any operator file is touched."""
    if op == "replace" and phase == "after" and "/.local/journal/" in path:
        raise Crash(path)


def _editor(root: Path) -> ArchiveEditor:
    return ArchiveEditor(LocalEvidenceArchive(root))


def _retitled(editor: ArchiveEditor):
    working = editor.get(UNIT)
    assert working.unit is not None
    return working, dataclasses.replace(working.unit, title=working.unit.title + " (saved)")


def _interrupt(root: Path, action) -> None:
    fsio.set_hook(crash_after_journal_entry)
    try:
        with pytest.raises(Crash):
            action()
    finally:
        fsio.set_hook(None)
    assert len(list((root / "evidence/.local/journal").glob("*.json"))) == 1


def _interrupted_save(root: Path) -> bytes:
    """A save that died after its journal entry; returns the bytes it meant to write."""
    editor = _editor(root)
    working, unit = _retitled(editor)
    _interrupt(root, lambda: editor.save(unit, working.file_hash, "dave"))
    from evidence_tool.unit import render

    return render(unit).encode("utf-8")


def test_save_writes_canonically_and_the_next_consolidation_records_the_saver(
    consolidated: Path,
) -> None:
    editor = _editor(consolidated)
    working, unit = _retitled(editor)
    saved = editor.save(unit, working.file_hash, "dave")
    assert saved.unit == unit and saved.path == UNIT_PATH
    result = LocalEvidenceArchive(consolidated).consolidate("bob")
    assert result.changes["modified"] == [UNIT]
    assert entry(consolidated)["provenance"]["curator"] == "dave"


def test_save_over_a_file_edited_behind_its_back_is_e301(consolidated: Path) -> None:
    editor = _editor(consolidated)
    working, unit = _retitled(editor)
    path = consolidated / UNIT_PATH
    path.write_bytes(path.read_bytes() + OTHER_EDIT)
    edited = path.read_bytes()
    with pytest.raises(ConflictError) as caught:
        editor.save(unit, working.file_hash, "dave")
    assert caught.value.code == "E301" and caught.value.path == UNIT_PATH
    assert path.read_bytes() == edited
    assert not list((consolidated / "evidence/.local/journal").glob("*.json"))


def test_remove_of_a_file_edited_behind_its_back_is_e301(consolidated: Path) -> None:
    editor = _editor(consolidated)
    stale = editor.get(UNIT).file_hash
    path = consolidated / UNIT_PATH
    path.write_bytes(path.read_bytes() + OTHER_EDIT)
    edited = path.read_bytes()
    with pytest.raises(ConflictError) as caught:
        editor.remove(UNIT, stale, "dave")
    assert caught.value.code == "E301"
    assert path.read_bytes() == edited


def test_a_new_unit_never_overwrites_a_file_that_appeared(consolidated: Path) -> None:
    editor = _editor(consolidated)
    _working, unit = _retitled(editor)
    new = dataclasses.replace(
        unit, metadata=dataclasses.replace(unit.metadata, id="evidence:discharge-date")
    )
    target = consolidated / "evidence/curated/domain/discharge-date.md"
    target.write_text("someone's draft\n", encoding="utf-8")
    with pytest.raises(ConflictError):
        editor.save(new, None, "dave")
    assert target.read_text() == "someone's draft\n"


def test_a_journal_whose_target_was_edited_is_e302_and_recover_abandons_it(
    consolidated: Path, tht
) -> None:
    _interrupted_save(consolidated)
    path = consolidated / UNIT_PATH
    path.write_bytes(path.read_bytes() + OTHER_EDIT)
    edited = path.read_bytes()
    before = managed(consolidated)

    blocked = tht("consolidate", root=consolidated)

    assert blocked.exit_code == 3
    assert codes(blocked) == ["E302"]
    assert blocked.json["errors"][0]["path"] == UNIT_PATH
    assert blocked.json["result"] == {"paths": [UNIT_PATH]}
    assert path.read_bytes() == edited
    assert managed(consolidated) == before

    shown = tht("recover", root=consolidated)
    assert shown.exit_code == 0
    [item] = shown.json["result"]["entries"]
    assert item["op"] == "save" and item["actor"] == "dave"
    assert item["conflicts"] == [UNIT_PATH]
    assert [f["path"] for f in item["files"]] == [UNIT_PATH]
    assert shown.json["result"]["abandoned"] is False
    assert len(list((consolidated / "evidence/.local/journal").glob("*.json"))) == 1

    abandoned = tht("recover", "--abandon", "--actor", "erin", root=consolidated)
    assert abandoned.exit_code == 0 and abandoned.json["result"]["abandoned"] is True
    assert not list((consolidated / "evidence/.local/journal").glob("*.json"))
    assert path.read_bytes() == edited

    result = tht("consolidate", root=consolidated)
    assert result.exit_code == 0, result.stdout
    assert result.json["result"]["changes"]["modified"] == [UNIT]  # the operator's edit
    assert entry(consolidated)["provenance"]["curator"] == "alice"  # not the abandoned save's
    [event] = [
        e for e in LocalEvidenceArchive(consolidated).events() if e["event"] == "journal abandoned"
    ]
    assert event["actor"] == "erin" and event["conflicts"] == [UNIT_PATH]


def test_an_untouched_journal_is_replayed_to_its_post_image(consolidated: Path) -> None:
    post = _interrupted_save(consolidated)
    path = consolidated / UNIT_PATH
    assert path.read_bytes() != post  # the crash came before the file was replaced

    result = LocalEvidenceArchive(consolidated).consolidate("bob")

    assert path.read_bytes() == post
    assert not list((consolidated / "evidence/.local/journal").glob("*.json"))
    assert result.changes["modified"] == [UNIT]
    assert entry(consolidated)["provenance"]["curator"] == "dave"  # the staged declaration


def test_a_journal_already_at_its_post_image_is_closed(consolidated: Path) -> None:
    post = _interrupted_save(consolidated)
    (consolidated / UNIT_PATH).write_bytes(post)  # as if the crash came after the replace
    LocalEvidenceArchive(consolidated).consolidate("bob")
    assert (consolidated / UNIT_PATH).read_bytes() == post
    assert not list((consolidated / "evidence/.local/journal").glob("*.json"))


def test_an_interrupted_remove_is_replayed_with_its_actor(consolidated: Path) -> None:
    editor = _editor(consolidated)
    fh = editor.get(UNIT).file_hash
    _interrupt(consolidated, lambda: editor.remove(UNIT, fh, "dave"))
    assert (consolidated / UNIT_PATH).exists()

    result = LocalEvidenceArchive(consolidated).consolidate("bob")

    assert not (consolidated / UNIT_PATH).exists()
    assert result.changes["deleted"] == [UNIT]
    snapshot = LocalEvidenceArchive(consolidated).newest_snapshot()
    assert snapshot is not None and snapshot.deletions[0].actor == "dave"


def test_status_shows_an_interrupted_operation(consolidated: Path, tht) -> None:
    _interrupted_save(consolidated)
    status = tht("status", root=consolidated)
    assert [j["op"] for j in status.json["result"]["journal"]] == ["save"]
