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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from msgspec.structs import replace

from evidence_tool import fsio
from evidence_tool.archive import eventlog
from evidence_tool.archive.clock import now
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.errors import EvidenceError, LockHeldError, SourceError
from evidence_tool.jsonvalue import JsonObject, JsonValue, View
from evidence_tool.record import UNSET
from evidence_tool.sources import compare, import_record, proposals, store
from evidence_tool.sources.acquire import Progress, acquire, check_count, discover
from evidence_tool.sources.identity import Acquired, Candidate, DocumentMeta, document_meta
from evidence_tool.sources.import_source import ImportAcquired, for_source
from evidence_tool.sources.policy import NetworkPolicy, specs_of
from evidence_tool.sources.records import (
    Comparison,
    LineStatus,
    Registry,
    SourceKind,
    SourceRecord,
    SourceStatus,
)
from evidence_tool.sources.refiner import (
    CommandRefiner,
    Proposal,
    UnitsRefiner,
    build_request,
    check_excerpts,
)
from evidence_tool.sources.registry import locators, resolve_id


@dataclass
class Refined:
    doc: Acquired
    meta: DocumentMeta
    proposal: Proposal | None  # None: unchanged since the last acknowledged or adopted hash


def _select(
    candidates: list[Candidate], only: str | None, registry: Registry
) -> tuple[list[Candidate], set[str] | None]:
    """The candidates to fetch, and the ids this refresh may mark missing (None: all)."""
    if only is None:
        return candidates, None
    # Known ids are the registry's and what discovery found now: one resolver (E904 with
    # the candidates by short id and locator) answers for refresh, decide and show.
    known = locators(registry)
    for c in candidates:
        known.setdefault(c.source_id, c.locator)
    chosen = resolve_id(known, only)
    return [c for c in candidates if c.source_id == chosen], {chosen}


def refine_all(
    archive: LocalEvidenceArchive,
    docs: list[Acquired],
    registry: Registry,
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
        record = registry.sources.get(doc.source_id)
        meta = document_meta(doc.text)
        if record is not None and doc.content_hash in record.decided_hashes:
            out.append(Refined(doc, meta, None))
            continue
        language = doc.language or meta.language or default_language
        imported = isinstance(doc, ImportAcquired)
        chosen = for_source(doc) if isinstance(doc, ImportAcquired) else refiner
        key = proposals.key_of(doc, language, chosen.identity())
        proposal = proposals.load(archive.layout, key)
        if proposal is None:
            if imported:  # an importer reads files, not a draft: no current units
                request = build_request(doc, meta, language)
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


def _record(registry: Registry, doc: Acquired, meta: DocumentMeta, at: str) -> SourceRecord:
    """The source's record as this refresh found it: active again, with its last hash."""
    known = registry.sources.get(doc.source_id)
    record = known or SourceRecord(doc.source_id, doc.locator, SourceKind(doc.kind), at)
    # No "last seen" time: an unchanged refresh must leave sources.json byte-for-byte alone.
    return replace(
        record,
        status=SourceStatus.ACTIVE,
        missing_since=UNSET,
        last_hash=doc.content_hash,
        title=meta.title or doc.title,
        identifier=meta.identifier,
    )


@dataclass(frozen=True, slots=True)
class SourceLine(View):
    """What refresh did with one source (one line of its output)."""

    _keys = (
        "source_id",
        "locator",
        "kind",
        "content_hash?",
        "status",
        "error?=failure",
        "*compared",
    )
    source_id: str
    locator: str
    kind: SourceKind
    status: LineStatus
    content_hash: str | None = None  # None for a missing source
    comparison: Comparison | None = None  # only when compared
    error: EvidenceError | None = None  # only when failed

    @property
    def failure(self) -> JsonObject | None:
        return self.error.diagnostics[0].to_dict() if self.error is not None else None

    @property
    def compared(self) -> JsonObject:
        """What the comparison proposes (nothing where the source was not compared)."""
        c = self.comparison
        if c is None:
            return {}
        out: JsonObject = {
            "revision": c.revision,
            "proposed": [p.id for p in c.proposed],
            "retire": list(c.retire),
            "dropped": [d.to_json() for d in c.dropped],
            "review_items": len(c.review_items),
            "changes": c.changes().counts(),
        }
        if c.imported is not None:  # an import: what it did not turn into units
            out |= {
                "not_imported": len(c.imported.not_imported),
                "skipped": dict(c.imported.skipped),
            }
        return out


@dataclass(frozen=True, slots=True)
class RefreshResult(View):
    _keys = ("dry_run", "wrote", "sources")
    dry_run: bool
    wrote: bool
    sources: tuple[SourceLine, ...]

    @property
    def compared(self) -> int:
        return sum(1 for line in self.sources if line.status == LineStatus.COMPARED)

    @property
    def failed(self) -> list[EvidenceError]:
        """The errors of the sources that failed alone (the others were recorded)."""
        return [line.error for line in self.sources if line.error is not None]


def _compared(view: compare.ArchiveView, record: SourceRecord, r: Refined, at: str) -> Comparison:
    """The comparison of a changed source; a comparison equal to the pending one keeps
    its creation time, so the registry's bytes stay stable."""
    assert r.proposal is not None
    base = record.adopted_hash or record.acknowledged_hash
    refinement = compare.Refinement(r.doc, r.meta, r.proposal, base, bool(record.retraction), at)
    comp = compare.build(view, refinement)
    previous = record.comparison
    if previous and previous.revision == comp.revision:
        comp = replace(comp, created_at=previous.created_at)
    return comp


def _apply(
    archive: LocalEvidenceArchive,
    registry: Registry,
    refined: list[Refined],
    seen: set[str],
    scope: set[str] | None,
    at: str,
) -> list[SourceLine]:
    """Update the registry in memory: comparisons, missing sources; returns per-source lines."""
    # Only a comparison reads the curated tree: an unchanged refresh answers from the
    # hashes recorded at the last decision, without scanning the units.
    view = (
        compare.ArchiveView.load(archive) if any(r.proposal is not None for r in refined) else None
    )
    lines = []
    for r in refined:
        record = _record(registry, r.doc, r.meta, at)
        kind, chash = SourceKind(r.doc.kind), r.doc.content_hash
        if r.proposal is None:
            # Back to what was decided: nothing left to compare.
            registry.sources[record.source_id] = replace(record, comparison=None)
            lines.append(
                SourceLine(record.source_id, r.doc.locator, kind, LineStatus.UNCHANGED, chash)
            )
            continue
        assert view is not None
        comp = _compared(view, record, r, at)
        registry.sources[record.source_id] = replace(record, comparison=comp)
        lines.append(
            SourceLine(record.source_id, r.doc.locator, kind, LineStatus.COMPARED, chash, comp)
        )
    for sid, record in sorted(registry.sources.items()):
        if sid in seen or (scope is not None and sid not in scope):
            continue
        if record.status != SourceStatus.MISSING:
            registry.sources[sid] = replace(record, status=SourceStatus.MISSING, missing_since=at)
        lines.append(SourceLine(sid, record.locator, record.kind, LineStatus.MISSING))
    return lines


def refresh(
    archive: LocalEvidenceArchive,
    descriptor_sources: Sequence[Mapping[str, JsonValue]],  # evidence.sources, as loaded
    policy: NetworkPolicy,
    refiner: UnitsRefiner | CommandRefiner,
    default_language: str,
    actor: str,
    *,
    only: str | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> RefreshResult:
    layout = archive.layout
    registry = store.read(layout)
    candidates = discover(layout, specs_of(descriptor_sources), policy)
    selected, scope = _select(candidates, only, registry)
    check_count(selected, policy)
    failed: list[tuple[Candidate, SourceError]] = []
    docs = acquire(selected, policy, progress, failed)
    failed_lines = [
        SourceLine(c.source_id, c.locator, SourceKind(c.kind), LineStatus.FAILED, error=exc)
        for c, exc in failed
    ]
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
        return RefreshResult(True, False, tuple(lines + failed_lines))
    with archive.locked("refresh"):
        for key, proposal in made:
            proposals.save(layout, key, proposal)
        registry = store.read(layout)  # re-read: a decide may have finished meanwhile
        lines = _apply(archive, registry, refined, seen, scope, at)
        fsio.begin_step()  # the acquisitions, committed by the sources.json naming them
        for r in refined:
            comparison = registry.sources[r.doc.source_id].comparison
            if comparison and comparison.acquisition == r.doc.raw_hash:
                store.save_acquisition(layout, r.doc)
        before = layout.sources_json.read_bytes() if layout.sources_json.exists() else None
        rendered = store.render(registry)
        wrote = before != rendered
        if wrote:
            store.write(layout, registry, rendered)
            eventlog.append(
                layout.log,
                "refreshed",
                actor,
                sources=len(lines),
                compared=sum(1 for x in lines if x.status == LineStatus.COMPARED),
            )
    return RefreshResult(False, wrote, tuple(lines + failed_lines))
