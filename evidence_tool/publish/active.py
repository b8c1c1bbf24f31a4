"""The active snapshot as typed units: the one thing every format publishes from
(never the working files: an unconsolidated edit is not published)."""

from __future__ import annotations

from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.publish.model import Entry, Snapshot
from evidence_tool.workspace.descriptor import load_workspace_descriptor


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _who_and_when(provenance: JsonObject) -> tuple[str | None, str | None]:
    """A manual unit's curator and date; a document unit's actor and date when a migration
    recorded them (a refined unit has no person behind it)."""
    who = _text(provenance.get("curator")) or _text(provenance.get("actor"))
    return who, _text(provenance.get("declared_at"))


def load_active(archive: LocalEvidenceArchive, revision: str) -> Snapshot:
    """The snapshot ``revision``'s units with their provenance, sorted by id."""
    snapshot = archive.snapshot(revision)
    entries = []
    for entry, unit in snapshot.units():
        who, when = _who_and_when(entry.provenance_json)
        entries.append(Entry(unit, who, when))
    entries.sort(key=lambda e: e.unit.id)
    workspace = load_workspace_descriptor(archive.layout.root).id
    return Snapshot(workspace, revision, tuple(entries))
