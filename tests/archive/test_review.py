"""Review items block consolidation until a visible change, retirement or resolution (5.3)."""

from __future__ import annotations

from pathlib import Path

import pytest
from archive_helpers import (
    UNIT,
    UNIT_PATH,
    content_hash,
    edit_visibly,
    entry,
    managed,
    stage_review_item,
)
from helpers import codes

from evidence_tool.archive.edits import ArchiveEditor
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.errors import InvalidFilesError, UsageError


def test_an_open_review_item_blocks_consolidation(consolidated: Path, tht) -> None:
    item = stage_review_item(consolidated, message="the handbook was retracted")
    before = managed(consolidated)

    result = tht("consolidate", root=consolidated)

    assert result.exit_code == 1
    assert codes(result) == ["E140"]
    error = result.json["errors"][0]
    assert error["unit_id"] == UNIT and error["path"] == UNIT_PATH
    assert item["message"] in error["message"]
    assert managed(consolidated) == before
    status = tht("status", root=consolidated)
    assert status.json["result"]["review_items"][UNIT] == [item]


def test_a_visible_change_closes_the_item(consolidated: Path) -> None:
    item = stage_review_item(consolidated)
    edit_visibly(consolidated / UNIT_PATH)
    result = LocalEvidenceArchive(consolidated).consolidate("bob")
    assert result.changes["modified"] == [UNIT]
    assert [c.to_json() for c in result.closed_review_items] == [
        {"id": UNIT, "item": item, "closed_by": "visible change"}
    ]
    assert entry(consolidated)["review_items"] == []


def test_retiring_the_unit_closes_the_item(consolidated: Path) -> None:
    item = stage_review_item(consolidated)
    (consolidated / UNIT_PATH).unlink()
    result = LocalEvidenceArchive(consolidated).consolidate("bob")
    assert result.changes["deleted"] == [UNIT]
    assert [c.to_json() for c in result.closed_review_items] == [
        {"id": UNIT, "item": item, "closed_by": "retirement"}
    ]


def test_review_resolve_closes_the_item_with_a_note(consolidated: Path, tht) -> None:
    item = stage_review_item(consolidated)
    resolved = tht(
        "review", "resolve", UNIT, "--note", "checked with the ward", "--actor", "erin",
        root=consolidated,
    )  # fmt: skip
    assert resolved.exit_code == 0, resolved.stdout
    assert resolved.json["result"] == {"id": UNIT, "resolved": [item]}

    result = tht("consolidate", root=consolidated)

    assert result.exit_code == 0, result.stdout
    assert result.json["result"]["closed_review_items"] == [
        {"id": UNIT, "item": item, "closed_by": "resolved", "note": "checked with the ward"}
    ]
    assert entry(consolidated)["review_items"] == []
    [event] = [
        e for e in LocalEvidenceArchive(consolidated).events() if e["event"] == "review resolved"
    ]
    assert event["actor"] == "erin" and event["note"] == "checked with the ward"
    assert event["id"] == UNIT and event["at"]


def test_items_recorded_in_a_snapshot_block_later_consolidations(bare: Path, tht) -> None:
    """Migration carries legacy review items into the baseline; they block until resolved."""
    item = {
        "code": "legacy-review",
        "message": "carried from the legacy unit",
        "raised_by": "migration",
        "raised_at": "2026-11-01T00:00:00Z",
        "content_hash": content_hash(bare, UNIT),
    }
    archive = LocalEvidenceArchive(bare)
    archive.initialize("alice", carried={"review_items": {UNIT: [item]}})
    assert entry(bare)["review_items"] == [item]
    blocked = tht("consolidate", root=bare)
    assert blocked.exit_code == 1 and codes(blocked) == ["E140"]

    ArchiveEditor(archive).resolve_review(UNIT, "reviewed after migration", "erin")
    result = archive.consolidate("erin")
    assert entry(bare)["review_items"] == []
    assert [c.closed_by for c in result.closed_review_items] == ["resolved"]


def test_an_item_raised_on_older_content_does_not_block(consolidated: Path) -> None:
    item = stage_review_item(consolidated)
    archive = LocalEvidenceArchive(consolidated)
    archive.merge_staged({"review_items": {UNIT: [{**item, "content_hash": "0" * 64}]}})
    with pytest.raises(InvalidFilesError):  # the current-content item still blocks
        archive.consolidate("bob")


def test_resolve_needs_a_note_and_an_open_item(consolidated: Path, tht) -> None:
    editor = ArchiveEditor(LocalEvidenceArchive(consolidated))
    with pytest.raises(UsageError):
        editor.resolve_review(UNIT, "   ", "erin")
    result = tht("review", "resolve", UNIT, "--note", "nothing to do", root=consolidated)
    assert result.exit_code == 2 and codes(result) == ["E904"]
