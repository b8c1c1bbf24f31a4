"""The JSON shapes of what the server answers: one unit, one hit, one retired id.

The MCP tools and the HTTP API return the same objects (docs/serve.md lists them).
"""

from __future__ import annotations

from evidence_tool.activation.records import Hit, IndexRecord
from evidence_tool.archive.records import Deletion, DeletionReason
from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.serve.revisions import RevisionView


def provenance(view: RevisionView, record: IndexRecord) -> JsonObject:
    """``kind`` (manual / document) and the declaration: a document's source, path, hash
    and verified excerpts, a curator's name and date, and the ``original`` lineage;
    ``origin`` says ``manual``, ``document`` or ``import`` (a document adopted from
    another tool's export, ``imported_from`` naming each excerpt's span in it)."""
    declared = record.provenance
    out: JsonObject = {"kind": record.provenance_kind}
    if isinstance(declared, dict):
        out.update({k: v for k, v in declared.items() if k != "kind"})
    spans = view.imported_from(record.id)
    out["origin"] = "import" if spans else (record.provenance_kind or "manual")
    if spans:
        out["imported_from"] = list[JsonValue](spans)
    return out


def unit(view: RevisionView, record: IndexRecord) -> JsonObject:
    """One active unit: what an agent reads before it writes SQL with it."""
    return {
        "id": record.id,
        "kind": record.kind,
        "language": record.language,
        "title": record.title,
        "text": view.text(record.id),
        "applies_to": record.applies_to,
        "purposes": list[JsonValue](record.purposes),
        "fields": record.payload,
        "path": record.path,
        "content_hash": record.content_hash,
        "provenance": provenance(view, record),
    }


def hit(view: RevisionView, found: Hit, mode: str) -> JsonObject:
    """A search hit: the unit (from the pinned revision's own record), its score and mode.
    Shaped per answer, not kept: a forked worker would hold its own copy of every unit
    it ever showed (docs/performance.md)."""
    return {
        **unit(view, found.record),
        "score": found.score,
        "mode": mode,
        "matched": list[JsonValue](found.matched),
    }


def retired(deletion: Deletion) -> JsonObject:
    """A deleted or retired id: when, by whom, why, and the replacement if one is recorded
    (no record names one today: ``replacement`` is null, ``source_id`` says where a
    retired unit's successors came from)."""
    return {
        "id": deletion.id,
        "status": "retired",
        "reason": "retired" if deletion.reason == DeletionReason.RETIRED else "deleted",
        "retired_at": deletion.deleted_at,
        "retired_by": deletion.actor,
        "last_revision": deletion.last_revision,
        "replacement": None,
        "source_id": deletion.source_id,
    }
