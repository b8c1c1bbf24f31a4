"""Read-only views of the archive for ``status`` and ``show`` (no lock: pointers are atomic)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from evidence_tool.archive import staged as staging
from evidence_tool.archive.diffing import Diff, diff
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.archive.manifest import UnitEntry
from evidence_tool.archive.records import Declaration, Deletion, DeletionReason
from evidence_tool.archive.snapshot import Snapshot
from evidence_tool.archive.state import State
from evidence_tool.errors import EvidenceWarning, NotReadyError, UnknownNameError
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.record import Record, View
from evidence_tool.unit import render
from evidence_tool.unit.suggest import did_you_mean_live


class PendingEntry(Record, frozen=True):
    """A journal entry of an operation that did not finish (``status``'s ``journal``)."""

    entry: str
    op: str
    at: str


class Serving(Record, frozen=True):
    """What retrieval serves (SPEC.md 8): the active revision and its unit count, or
    nothing, with why and what to run.  Until the first activation an initialized
    archive serves nothing, although ``status`` counts the baseline's units."""

    revision: str | None
    units: int
    reason: str | None  # None while a revision is active

    def line(self) -> str:
        """The one line ``status`` prints about it."""
        if self.revision is None:
            return f"retrieval serves nothing: {self.reason}"
        return f"retrieval: {self.units} unit(s) of revision {self.revision[:12]}…"


_CONSOLIDATE = "'tht workspace evidence consolidate'"


def serving(
    archive: LocalEvidenceArchive,
    state: State | None = None,
    review: dict[str, list[JsonObject]] | None = None,
    newest: Snapshot | None = None,
) -> Serving:
    """What retrieval serves now; ``state``, ``review`` (open items by unit) and the
    ``newest`` snapshot when the caller read them already."""
    state = state if state is not None else archive.state()
    if state.active:
        held = newest if newest is not None and newest.revision == state.active else None
        snap = held or archive.snapshot(state.active)  # no second read
        return Serving(state.active, snap.view.unit_count(), None)
    if not state.initialized:
        init = "the archive is not initialized: run 'tht workspace evidence init'"
        return Serving(None, 0, f"{init}, then {_CONSOLIDATE}")
    if review is None:
        review = _open_items(archive.newest_snapshot(), archive.staged())
    if review:
        reason = (
            f"no revision is active yet: open review items on {len(review)} unit(s) block the "
            "first activation (E140); resolve them ('tht workspace evidence review'), then "
            f"run {_CONSOLIDATE}"
        )
    elif state.pending:
        reason = (
            f"revision {state.pending[:12]}… is consolidated but not activated (activation "
            f"failed or did not run): run {_CONSOLIDATE} to activate it"
        )
    else:
        reason = (
            f"no revision is active yet (after init or migrate): run {_CONSOLIDATE} to "
            "activate the first one"
        )
    return Serving(None, 0, reason)


@dataclass(frozen=True, slots=True)
class ArchiveStatus(View):
    """``status``: pointers, counts, unconsolidated changes, open items, pending journal."""

    initialized: bool
    state: State
    units: int
    deletions: int
    changes: Diff | None  # against the working files; None before the first snapshot
    # Open review items by unit id: JSON objects, shown and carried as recorded.
    review_items: dict[str, list[JsonObject]]
    journal: tuple[PendingEntry, ...]
    id_changes: tuple[EvidenceWarning, ...]  # W122, not yet recorded
    staged: dict[str, list[str]]  # staged section -> its unit ids, sorted
    serving: Serving
    _keys = (
        "initialized",
        "state",
        "units",
        "deletions",
        "unconsolidated",
        "review_items",
        "journal",
        "id_changes",
        "staged",
        "serving",
    )

    @property
    def unconsolidated(self) -> dict[str, list[str]]:
        """Change class -> ids (the diff without its from/to ends)."""
        if self.changes is None:
            return {}
        return {**self.changes.classes, "invalid": self.changes.invalid}


def status(archive: LocalEvidenceArchive) -> ArchiveStatus:
    """The archive's status: pointers, counts, unconsolidated changes, items."""
    state = archive.state()
    newest = archive.newest_snapshot()
    staged = archive.staged()
    review = _open_items(newest, staged)
    journal = tuple(PendingEntry(p.name, e.op, e.at) for p, e in archive.journal.pending())
    changes = diff(archive) if state.initialized else None
    # W122 while it is cheap to undo: nothing is recorded (or reserved) yet.
    id_changes = []
    if newest and changes and changes.ids("added") and changes.ids("deleted"):
        from evidence_tool.archive.consolidate import id_changes_since

        id_changes = id_changes_since(archive, newest)
    return ArchiveStatus(
        initialized=state.initialized,
        state=state,
        units=newest.view.unit_count() if newest else 0,
        deletions=len(newest.view.deletion_objects()) if newest else 0,
        changes=changes,
        review_items=review,
        journal=journal,
        id_changes=tuple(c.warning(recorded=False) for c in id_changes),
        staged={k: sorted(v) for k in staging.SECTIONS if (v := staging.section(staged, k))},
        serving=serving(archive, state, review, newest),
    )


def _open_items(newest: Snapshot | None, staged: JsonObject) -> dict[str, list[JsonObject]]:
    """Open review items by unit: the newest snapshot's, then those raised since."""
    review = {e.id: items for e in newest.entries() if (items := e.review_items)} if newest else {}
    for uid in staging.section(staged, "review_items"):
        review.setdefault(uid, []).extend(staging.raised_items(staged, uid))
    return review


@dataclass(frozen=True, slots=True)
class ShownUnit(View):
    """``show``: a unit as the newest snapshot holds it, or a deleted unit's record with
    its last archived content; the session adds source warnings and import places."""

    id: str
    text: str
    revision: str  # the newest snapshot's
    entry: UnitEntry | None  # the live unit's, or the deleted unit's last entry
    deleted: Deletion | None = None
    warnings: tuple[str, ...] = ()
    imported_from: tuple[str, ...] = ()
    _keys: ClassVar[tuple[str, ...]] = (
        "id",
        "path",
        "text",
        "deleted",
        "provenance",
        "review_items",
        "content_hash=entry.content_hash",
        "file_hash=entry.file_hash",
        "revision",
        "warnings",
        "imported_from?",
    )

    @property
    def declaration(self) -> Declaration | None:
        return self.entry.declaration if self.entry else None

    def extended(self, warnings: list[str], imported_from: list[str]) -> ShownUnit:
        return dataclasses.replace(
            self, warnings=(*self.warnings, *warnings), imported_from=tuple(imported_from)
        )

    @property
    def path(self) -> str | None:
        return self.entry.path if self.entry and self.deleted is None else None

    @property
    def provenance(self) -> JsonObject | None:
        return self.entry.provenance if self.entry else None

    @property
    def review_items(self) -> list[JsonObject]:
        return self.entry.review_items if self.entry and self.deleted is None else []


@dataclass(frozen=True, slots=True)
class ShownDeleted(ShownUnit):
    """``show`` of a deleted unit: its deletion record first, no hashes."""

    _keys = (
        "id",
        "deleted",
        "text",
        "path",
        "provenance",
        "review_items",
        "revision",
        "warnings",
        "imported_from?",
    )


def show(archive: LocalEvidenceArchive, unit_id: str) -> ShownUnit:
    """The unit as the newest snapshot holds it, with provenance, lineage and review items;
    a deleted unit shows its deletion record and last content."""
    newest = archive.newest_snapshot()
    if newest is None:
        raise NotReadyError("the archive is not initialized: run 'tht workspace evidence init'")
    entry = newest.entry(unit_id)
    if entry is None:
        record = newest.deletion(unit_id)
        if record is None:
            live = {e.id for e in newest.entries()}
            # How a deleted id is marked in a suggestion.
            retired = "deleted: retired by a replace"
            gone = {
                d.id: retired if d.reason == DeletionReason.RETIRED else "deleted"
                for d in newest.deletions
            }
            raise UnknownNameError(
                f"no unit '{unit_id}' in revision {newest.revision[:12]}…"
                f"{did_you_mean_live(unit_id, live, gone)}"
            )
        last = archive.snapshot(record.last_revision)
        last_entry = last.entry(unit_id)
        text = last.unit_bytes(last_entry).decode("utf-8") if last_entry else ""
        return ShownDeleted(unit_id, text, newest.revision, last_entry, deleted=record)
    # This unit's blob only, not every unit's.
    return ShownUnit(unit_id, render(newest.unit(entry)), newest.revision, entry)
