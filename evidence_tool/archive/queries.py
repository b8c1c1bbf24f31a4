"""Read-only views of the archive for ``status`` and ``show`` (no lock: pointers are atomic)."""

from __future__ import annotations

from typing import Any

from evidence_tool.archive import staged as staging
from evidence_tool.archive.diffing import diff
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.errors import NotReadyError, UnknownNameError
from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.unit import render
from evidence_tool.unit.suggest import did_you_mean


# JSON boundary: the 'status --json' document; Session.status extends it and the review
# page (report/collect.py) reads it by key, so it stays a JSON object until those type it.
def status(archive: LocalEvidenceArchive) -> dict[str, Any]:
    """The archive's status document: pointers, counts, unconsolidated changes, items."""
    state = archive.state()
    newest = archive.newest_snapshot()
    staged = archive.staged()
    review: dict[str, list[JsonObject]] = {}
    if newest:
        for e in newest.entries():
            if e.review_items:
                review[e.id] = e.review_items
    for uid in staging.section(staged, "review_items"):
        review.setdefault(uid, []).extend(staging.raised_items(staged, uid))
    journal: list[JsonValue] = [
        {"entry": p.name, "op": e.op, "at": e.at} for p, e in archive.journal.pending()
    ]
    changes = diff(archive) if state.initialized else None
    unconsolidated = changes.to_json() if changes is not None else {}
    # W122 while it is cheap to undo: nothing is recorded (or reserved) yet.
    id_changes = (
        archive.id_changes_since(newest)
        if newest and changes and changes.ids("added") and changes.ids("deleted")
        else []
    )
    return {
        "initialized": state.initialized,
        "state": {"baseline": state.baseline, "active": state.active, "pending": state.pending},
        "units": newest.view.unit_count() if newest else 0,
        "deletions": len(newest.view.deletion_objects()) if newest else 0,
        "unconsolidated": {k: v for k, v in unconsolidated.items() if k not in ("from", "to")},
        "review_items": {uid: list[JsonValue](items) for uid, items in review.items()},
        "journal": journal,
        "id_changes": [c.warning(recorded=False).to_dict() for c in id_changes],
        "staged": {
            k: list[JsonValue](sorted(v))
            for k in staging.SECTIONS
            if (v := staging.section(staged, k))
        },
    }


# JSON boundary: the 'show --json' document, which Session.show extends with its own
# warnings and import places before it is rendered.
def show(archive: LocalEvidenceArchive, unit_id: str) -> dict[str, Any]:
    """The unit as the newest snapshot holds it, with provenance, lineage and review items;
    a deleted unit shows its deletion record and last content."""
    newest = archive.newest_snapshot()
    if newest is None:
        raise NotReadyError("the archive is not initialized: run 'tht workspace evidence init'")
    entry = newest.entry(unit_id)
    if entry is None:
        record = newest.deletion(unit_id)
        if record is None:
            known = {e.id for e in newest.entries()} | newest.view.deleted_ids()
            raise UnknownNameError(
                f"no unit '{unit_id}' in revision {newest.revision[:12]}…"
                f"{did_you_mean(unit_id, known)}"
            )
        last = archive.snapshot(record.last_revision)
        last_entry = last.entry(unit_id)
        text = last.unit_bytes(last_entry).decode("utf-8") if last_entry else ""
        return {
            "id": unit_id,
            "deleted": record.to_json(),
            "text": text,
            "path": None,
            "provenance": last_entry.provenance if last_entry else None,
            "review_items": [],
            "revision": newest.revision,
            "warnings": [],
        }
    unit_text = render(newest.unit(entry))  # this unit's blob only, not every unit's
    return {
        "id": unit_id,
        "path": entry.path,
        "text": unit_text,
        "deleted": None,
        "provenance": entry.provenance,
        "review_items": entry.review_items,
        "content_hash": entry.content_hash,
        "file_hash": entry.file_hash,
        "revision": newest.revision,
        "warnings": [],
    }
