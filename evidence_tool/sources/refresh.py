"""``refresh``: acquire every source, refine the changed ones, record comparisons (SPEC 6.1-6.3).

Fetching and refining run without the archive lock (they may be slow); the
comparisons are then computed and written under the lock against the files as
they are at that moment, and new proposals are cached under it too (a locked
run's sweep owns every temp file, the cache's included).  Any failure before that point raises and leaves
sources.json, earlier comparisons and the active revision untouched; a dry run
follows the same path and writes nothing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from evidence_tool import fsio
from evidence_tool.archive import eventlog
from evidence_tool.archive.clock import now
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.errors import EvidenceError, LockHeldError
from evidence_tool.sources import compare, import_record, import_refiner, proposals, store
from evidence_tool.sources.acquire import Progress, acquire, check_count, discover
from evidence_tool.sources.document import Acquired, DocumentMeta, document_meta
from evidence_tool.sources.import_source import ImportAcquired
from evidence_tool.sources.policy import NetworkPolicy
from evidence_tool.sources.refiner import (
    CommandRefiner,
    Proposal,
    UnitsRefiner,
    build_request,
    check_excerpts,
)
from evidence_tool.sources.registry import resolve_id


@dataclass
class Refined:
    doc: Acquired
    meta: DocumentMeta
    proposal: Proposal | None  # None: unchanged since the last acknowledged or adopted hash


def _select(
    candidates: list[Any], only: str | None, registry: dict[str, Any]
) -> tuple[list[Any], set[str] | None]:
    """The candidates to fetch, and the ids this refresh may mark missing (None: all)."""
    if only is None:
        return candidates, None
    # Known ids are the registry's and what discovery found now: one resolver (E904 with
    # the candidates by short id and locator) answers for refresh, decide and show.
    known = {"sources": {**registry["sources"]}}
    for c in candidates:
        known["sources"].setdefault(c.source_id, {"source_id": c.source_id, "locator": c.locator})
    chosen = resolve_id(known, only)
    return [c for c in candidates if c.source_id == chosen], {chosen}


def refine_all(
    archive: LocalEvidenceArchive,
    docs: list[Acquired],
    registry: dict[str, Any],
    refiner: UnitsRefiner | CommandRefiner,
    default_language: str,
    progress: Progress | None,
    made: list[tuple[str, Proposal]],
) -> list[Refined]:
    """Refine each changed document once per (bytes, refiner): a proposal already made is
    read from the cache; the first refinement failure raises (E502).  New proposals are
    appended to ``made`` for the caller to cache under the lock (nothing is written here:
    this runs unlocked, and a locked run's sweep owns every temp file in the cache)."""
    view: compare.ArchiveView | None = None  # only a refiner run needs the current units
    out = []
    for n, doc in enumerate(docs):
        if progress:
            progress("refining", n, len(docs))
        record = registry["sources"].get(doc.source_id, {})
        meta = document_meta(doc.text)
        if doc.content_hash in (record.get("adopted_hash"), record.get("acknowledged_hash")):
            out.append(Refined(doc, meta, None))
            continue
        language = doc.language or meta.language or default_language
        imported = isinstance(doc, ImportAcquired)
        chosen = import_refiner.for_source(doc) if isinstance(doc, ImportAcquired) else refiner
        key = proposals.key_of(doc, language, chosen.identity())
        proposal = proposals.load(archive.layout, key)
        if proposal is None:
            if imported:  # an importer reads files, not a draft: no current units
                request = {"language": language}
            else:
                view = view or compare.ArchiveView.load(archive)
                request = build_request(doc, meta, language, view.request_units(doc.source_id))
            proposal = chosen.refine(doc, request)
            made.append((key, proposal))
        spans: set[str] = set()
        if proposal.record is not None:
            # What replace stores and what excerpts are checked against: the import record.
            doc = dataclasses.replace(doc, raw=proposal.record.encode(), text=proposal.record)
            spans = {s.text for s in import_record.parse(doc.raw)}
        check_excerpts(proposal, doc.text, spans)
        out.append(Refined(doc, meta, proposal))
    if progress:
        progress("refining", len(docs), len(docs))
    return out


def _cache_what_was_paid_for(
    archive: LocalEvidenceArchive, made: list[tuple[str, Proposal]]
) -> None:
    """Cache the proposals of a refresh that then failed, under the lock like every write;
    a busy lock only costs a later refresh the refinement again."""
    if not made:
        return
    try:
        with archive.locked("refresh"):
            for key, proposal in made:
                proposals.save(archive.layout, key, proposal)
    except LockHeldError:
        pass


def _record(registry: dict[str, Any], doc: Acquired, meta: DocumentMeta, at: str) -> dict[str, Any]:
    record: dict[str, Any] = registry["sources"].setdefault(
        doc.source_id,
        {
            "source_id": doc.source_id,
            "locator": doc.locator,
            "kind": doc.kind,
            "first_seen_at": at,
            "adopted_hash": None,
            "acknowledged_hash": None,
            "comparison": None,
            "decision": None,
            "retraction": None,
        },
    )
    # No "last seen" time: an unchanged refresh must leave sources.json byte-for-byte alone.
    record.pop("missing_since", None)
    record.update(
        status="active",
        last_hash=doc.content_hash,
        title=meta.title or doc.title,
        identifier=meta.identifier,
    )
    return record


def _apply(
    archive: LocalEvidenceArchive,
    registry: dict[str, Any],
    refined: list[Refined],
    seen: set[str],
    scope: set[str] | None,
    at: str,
) -> list[dict[str, Any]]:
    """Update the registry in memory: comparisons, missing sources; returns per-source lines."""
    view = compare.ArchiveView.load(archive)
    lines = []
    for r in refined:
        record = _record(registry, r.doc, r.meta, at)
        line: dict[str, Any] = {
            "source_id": r.doc.source_id,
            "locator": r.doc.locator,
            "kind": r.doc.kind,
            "content_hash": r.doc.content_hash,
        }
        if r.proposal is None:
            record["comparison"] = None  # back to what was decided: nothing left to compare
            lines.append({**line, "status": "unchanged"})
            continue
        base = record.get("adopted_hash") or record.get("acknowledged_hash")
        comp = compare.build(
            view, r.doc, r.meta, r.proposal, base, bool(record.get("retraction")), at
        )
        previous = record.get("comparison")
        if previous and previous["revision"] == comp["revision"]:
            comp["created_at"] = previous["created_at"]  # same comparison: keep the bytes stable
        record["comparison"] = comp
        lines.append(
            {
                **line,
                "status": "compared",
                "revision": comp["revision"],
                "proposed": [p["id"] for p in comp["proposed"]],
                "retire": comp["retire"],
                "dropped": comp["dropped"],
                "review_items": len(comp["review_items"]),
            }
        )
        if "not_imported" in comp:  # an import: what it did not turn into units
            lines[-1] |= {"not_imported": len(comp["not_imported"]), "skipped": comp["skipped"]}
    for sid, record in sorted(registry["sources"].items()):
        if sid in seen or (scope is not None and sid not in scope):
            continue
        if record.get("status") != "missing":
            record["status"] = "missing"
            record["missing_since"] = at
        lines.append(
            {
                "source_id": sid,
                "locator": record["locator"],
                "kind": record["kind"],
                "status": "missing",
            }
        )
    return lines


def refresh(
    archive: LocalEvidenceArchive,
    descriptor_sources: list[dict[str, Any]],
    policy: NetworkPolicy,
    refiner: UnitsRefiner | CommandRefiner,
    default_language: str,
    actor: str,
    *,
    only: str | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> dict[str, Any]:
    layout = archive.layout
    registry = store.read(layout)
    candidates = discover(layout, descriptor_sources, policy)
    selected, scope = _select(candidates, only, registry)
    check_count(selected, policy)
    docs = acquire(selected, policy, progress)
    made: list[tuple[str, Proposal]] = []
    try:
        refined = refine_all(archive, docs, registry, refiner, default_language, progress, made)
    except EvidenceError:
        if not dry_run:
            _cache_what_was_paid_for(archive, made)  # a later failure wastes no refinement
        raise
    seen = {c.source_id for c in candidates}
    at = now()
    if dry_run:
        lines = _apply(archive, registry, refined, seen, scope, at)
        return {"dry_run": True, "wrote": False, "sources": lines}
    with archive.locked("refresh"):
        for key, proposal in made:
            proposals.save(layout, key, proposal)
        registry = store.read(layout)  # re-read: a decide may have finished meanwhile
        lines = _apply(archive, registry, refined, seen, scope, at)
        fsio.begin_step()  # the acquisitions, committed by the sources.json naming them
        for r in refined:
            record = registry["sources"][r.doc.source_id]
            if record.get("comparison") and record["comparison"]["acquisition"] == r.doc.raw_hash:
                store.save_acquisition(layout, r.doc)
        before = layout.sources_json.read_bytes() if layout.sources_json.exists() else None
        wrote = before != store.render(registry)
        if wrote:
            store.write(layout, registry)
            eventlog.append(
                layout.log,
                "refreshed",
                actor,
                sources=len(lines),
                compared=sum(1 for x in lines if x["status"] == "compared"),
            )
    return {"dry_run": False, "wrote": wrote, "sources": lines}
