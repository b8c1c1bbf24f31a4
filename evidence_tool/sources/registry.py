"""The source registry: list, show and retract (SPEC 6.5).

Retraction keeps every link (declarations and lineage stay as they are) and
raises a review item on each live unit that cites the source, bound to that
unit's current content hash: consolidation is blocked (E140) until the unit
is edited, retired or its item resolved.
"""

from __future__ import annotations

from typing import Any

from evidence_tool.archive import eventlog
from evidence_tool.archive.clock import now
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.errors import EvidenceWarning, UnknownNameError, UsageError
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.sources import store
from evidence_tool.sources.compare import ArchiveView

RETRACTED = "source-retracted"
MISSING = "W151"  # a live unit derived from a source that refresh marked missing


MIN_PREFIX = 6
_LISTED = 10  # candidates named in the message; 'sources list' shows the rest


def resolve_id(registry: dict[str, Any], given: str) -> str:
    """A full source id, or a unique prefix of at least 6 hex characters (else E904)."""
    known: dict[str, Any] = registry["sources"]
    if given in known:
        return given
    matches = [s for s in known if s.startswith(given)]
    if len(given) >= MIN_PREFIX and len(matches) == 1:
        return matches[0]
    if len(given) < MIN_PREFIX:
        what = f"is too short: give at least {MIN_PREFIX} characters of a source id"
    else:
        what = "is ambiguous" if matches else "is not a known source"
    raise UnknownNameError(f"source id {given!r} {what}; {_candidates(registry, matches)}")


def _candidates(registry: dict[str, Any], matches: list[str]) -> str:
    """The sources to choose from (those the prefix matches, if any): short id and locator."""
    records = [registry["sources"][s] for s in (matches or sorted(registry["sources"]))]
    if not records:
        return "the workspace has no sources yet: run 'tht workspace evidence refresh'"
    shown = [f"{r['source_id'][:12]} {r['locator']}" for r in records[:_LISTED]]
    more = f", and {len(records) - _LISTED} more" if len(records) > _LISTED else ""
    return (
        "candidates: "
        + ", ".join(shown)
        + more
        + " ('tht workspace evidence sources list' shows them all)"
    )


def _citing(view: ArchiveView, sid: str) -> list[dict[str, Any]]:
    return [
        {"id": uid, "as": role, "path": view.files[uid].rel}
        for uid, role in view.citing.get(sid, [])
    ]


def _summary(record: dict[str, Any], view: ArchiveView) -> dict[str, Any]:
    sid = record["source_id"]
    comparison = record.get("comparison")
    return {
        "source_id": sid,
        "locator": record["locator"],
        "kind": record["kind"],
        "status": "retracted" if record.get("retraction") else record.get("status", "active"),
        "title": record.get("title"),
        "identifier": record.get("identifier"),
        "adopted_hash": record.get("adopted_hash"),
        "acknowledged_hash": record.get("acknowledged_hash"),
        "pending_comparison": comparison["revision"] if comparison else None,
        "suppressed": sid in view.suppressed,
        "retraction": record.get("retraction"),
        "decision": record.get("decision"),
        "citing_units": _citing(view, sid),
    }


def list_sources(archive: LocalEvidenceArchive) -> list[dict[str, Any]]:
    registry = store.read(archive.layout)
    view = ArchiveView.load(archive)
    return [_summary(r, view) for _, r in sorted(registry["sources"].items())]


def warning_for(record: dict[str, Any]) -> str | None:
    retraction = record.get("retraction")
    if not retraction:
        return None
    return (
        f"source {record['locator']} was retracted on {retraction['at']} by "
        f"{retraction['actor']}: {retraction['note']}"
    )


def show_source(archive: LocalEvidenceArchive, given: str) -> dict[str, Any]:
    registry = store.read(archive.layout)
    sid = resolve_id(registry, given)
    record = registry["sources"][sid]
    out = _summary(record, ArchiveView.load(archive))
    out["comparison"] = record.get("comparison")
    warning = warning_for(record)
    out["warnings"] = [warning] if warning else []
    return out


def unit_warnings(archive: LocalEvidenceArchive, provenance: dict[str, Any] | None) -> list[str]:
    """Retraction warnings for a unit whose declaration or lineage cites a retracted source."""
    if not provenance:
        return []
    registry = store.read(archive.layout)
    out = []
    for decl in (provenance, provenance.get("original") or {}):
        record = registry["sources"].get(decl.get("source_id") or "")
        warning = warning_for(record) if record else None
        if warning and warning not in out:
            out.append(warning)
    return out


def _where(record: dict[str, Any]) -> str:
    locator = str(record["locator"])
    return locator[3:] if record.get("kind") == "fs" else locator


def missing_warnings(
    archive: LocalEvidenceArchive,
    view: ArchiveView | None = None,
    registry: dict[str, Any] | None = None,
) -> list[EvidenceWarning]:
    """W151 for each live unit whose declaration or lineage cites a source the last
    refresh did not find: nothing is retired for it, so the operator must choose."""
    registry = registry if registry is not None else store.read(archive.layout)
    missing = {s: r for s, r in registry["sources"].items() if r.get("status") == "missing"}
    if not missing:
        return []  # the common case costs one small read, no scan
    view = view if view is not None else ArchiveView.load(archive)
    out = []
    for sid, record in sorted(missing.items()):
        since = record.get("missing_since") or "the last refresh"
        for uid, _ in view.citing.get(sid, []):
            path = view.files[uid].rel
            message = (
                f"unit '{uid}' comes from {_where(record)}, which refresh has not found since "
                f"{since}: restore the document and run 'tht workspace evidence refresh', or "
                f"retire the unit: delete {path} and run 'tht workspace evidence consolidate'"
            )
            out.append(EvidenceWarning(message, path, None, MISSING))
    return sorted(out, key=lambda w: (w.path or "", w.message))


def retract(archive: LocalEvidenceArchive, given: str, note: str, actor: str) -> dict[str, Any]:
    if not note.strip():
        raise UsageError("--note is required: say why the source is retracted")
    with archive.locked("sources retract"):
        layout = archive.layout
        registry = store.read(layout)
        sid = resolve_id(registry, given)
        record = registry["sources"][sid]
        # The retraction is recorded first and its time reused, so re-running after a
        # crash stages identical items (staged merges are idempotent).
        if not record.get("retraction"):
            record["retraction"] = {"note": note, "actor": actor, "at": now()}
            store.write(layout, registry)
        retraction = record["retraction"]
        view = ArchiveView.load(archive)
        citing = _citing(view, sid)
        items: JsonObject = {}  # staged.json's review_items section
        for c in citing:
            unit = view.files[c["id"]].unit
            assert unit is not None
            items[c["id"]] = [
                {
                    "code": RETRACTED,
                    "message": f"its source {record['locator']} was retracted: "
                    f"{retraction['note']}",
                    "raised_by": retraction["actor"],
                    "raised_at": retraction["at"],
                    "content_hash": unit.content_hash,
                    "source_id": sid,
                }
            ]
        archive.merge_staged({"review_items": items})
        eventlog.append(
            layout.log,
            "source retracted",
            actor,
            source_id=sid,
            note=note,
            units=[c["id"] for c in citing],
        )
    return {"source_id": sid, "retraction": retraction, "review_items_raised": sorted(items)}
