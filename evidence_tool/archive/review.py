"""review resolve: close a unit's open review items with a note (SPEC.md 5)."""

from __future__ import annotations

from evidence_tool.archive import eventlog
from evidence_tool.archive import staged as staging
from evidence_tool.archive.clock import now
from evidence_tool.archive.core import ArchiveCore
from evidence_tool.archive.derive import item_key
from evidence_tool.errors import UnknownNameError, UsageError
from evidence_tool.jsonvalue import JsonObject, JsonValue


def resolve_review(core: ArchiveCore, unit_id: str, note: str, actor: str) -> list[JsonObject]:
    """Close the open review items of a unit with a note (recorded with the actor)."""
    if not note.strip():
        raise UsageError("--note is required: say why the review items are resolved")
    with core.locked("review resolve"):
        newest = core.newest_snapshot()
        entry = newest.entry(unit_id) if newest else None
        staged = core.staged()
        items = (entry.review_items if entry else []) + staging.raised_items(staged, unit_id)
        if not items:
            raise UnknownNameError(
                f"unit '{unit_id}' has no open review items; 'tht workspace evidence "
                "status' lists the units that have some"
            )
        keys = [item_key(i) for i in items]
        core.merge_staged(staging.resolution_change(unit_id, note, actor, now(), keys))
        eventlog.append(
            core.layout.log,
            "review resolved",
            actor,
            id=unit_id,
            note=note,
            items=list[JsonValue](items),
        )
        return items
