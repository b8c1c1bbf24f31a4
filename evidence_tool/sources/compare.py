"""Durable comparisons of local units against a source's proposal (SPEC 6.3).

A comparison names every curated file it depends on with the hash it had
(``affected_files``), and its ``revision`` hashes all of it: any edit to one
of those files makes the comparison stale for ``decide``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

from msgspec.structs import replace

from evidence_tool.archive import staged as staging
from evidence_tool.archive.journal import current_hash
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.archive.manifest import Manifest, empty_manifest
from evidence_tool.archive.records import cited_sources
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.sources.identity import Acquired, DocumentMeta
from evidence_tool.sources.records import (
    Comparison,
    CurrentUnit,
    Dropped,
    DropReason,
    ProposedEntry,
    ReviewCode,
    ReviewItem,
)
from evidence_tool.sources.refiner import Proposal, ProposedUnit, RequestUnit
from evidence_tool.unit import render, sha256_hex
from evidence_tool.unit.hashing import canonical_json
from evidence_tool.workspace.curated import CuratedFile
from evidence_tool.workspace.layout import Layout


def cites(provenance: JsonObject | None, sid: str) -> bool:
    """True when a declaration names ``sid`` as its document source or as its ``original``."""
    if not provenance:
        return False
    cited = cited_sources(provenance)
    return sid in (cited.source, cited.original)


def slug(unit_id: str) -> str:
    tail = unit_id.split(":", 1)[1].replace(":", "-")
    return re.sub(r"[^a-z0-9._-]", "-", tail).strip(".-") or "unit"


@dataclass
class ArchiveView:
    """What comparisons read from the archive: live files, declarations, deletions."""

    files: dict[str, CuratedFile]  # by unit id (valid units only)
    paths: dict[str, str | None]  # path -> unit id (None: an invalid file)
    carriers: dict[str, list[str]]  # unit id -> every file naming it, valid or not
    # Unit id -> the provenance object in force, verbatim: a comparison records it as is
    # (CurrentUnit, sources.json), so it stays the manifest's JSON; read via cited_sources.
    declarations: dict[str, JsonObject]
    reserved: set[str]
    suppressed: set[str]
    layout: Layout
    # The last content hash of every deleted unit: an import proposal equal to one of them is
    # retired knowledge (SPEC 6.3), whatever id it carries now.
    retired_content: frozenset[str] = frozenset()

    @classmethod
    def load(cls, archive: LocalEvidenceArchive) -> ArchiveView:
        newest = archive.newest_snapshot()
        manifest = newest.view if newest else Manifest(empty_manifest())
        staged = archive.staged()
        files: dict[str, CuratedFile] = {}
        paths: dict[str, str | None] = {}
        scanned = archive.scan().files
        for f in scanned:
            # By the stat cache's summary: unchanged files are not read to be listed.
            uid = f.unit_id if f.valid else None
            paths[f.rel] = uid
            if uid is not None:
                files.setdefault(uid, f)
        decls = {e.id: e.provenance_json for e in manifest.units()}
        for uid in staging.declared_ids(staged):
            live = files.get(uid)
            staged_prov = staging.declaration_for(staged, uid, live.content_hash) if live else None
            if staged_prov is not None:
                decls[uid] = staged_prov
        return cls(
            files,
            paths,
            carriers_of(scanned),
            decls,
            manifest.deleted_ids(),
            set(manifest.suppressed_sources()),
            archive.layout,
            frozenset(d.last_content_hash for d in manifest.deletions()),
        )

    @cached_property
    def citing(self) -> dict[str, list[tuple[str, str]]]:
        """source id -> (unit id, "source" | "original") of the live units citing it, by
        unit id: built once, so a refresh over many sources stays linear in the units."""
        out: dict[str, list[tuple[str, str]]] = {}
        for uid in sorted(self.files):
            cited = cited_sources(self.declarations.get(uid) or {})
            if cited.source:
                out.setdefault(cited.source, []).append((uid, "source"))
            if cited.original and cited.original != cited.source:
                out.setdefault(cited.original, []).append((uid, "original"))
        return out

    def current(self, sid: str) -> list[CurrentUnit]:
        """The live units from this source, as the comparison records them."""
        out = []
        for uid, _ in self.citing.get(sid, []):
            prov = self.declarations.get(uid)
            if cites(prov, sid):
                f = self.files[uid]
                assert prov is not None and f.content_hash is not None  # a valid unit
                out.append(CurrentUnit(uid, f.rel, f.file_hash, f.content_hash, prov))
        return out

    def request_units(self, sid: str) -> list[RequestUnit]:
        """The refiner request's ``current_units``: each live unit's file as it is now."""
        return [
            RequestUnit(c.id, c.path, self.files[c.id].data.decode()) for c in self.current(sid)
        ]


def carriers_of(files: Iterable[CuratedFile]) -> dict[str, list[str]]:
    """unit id -> the paths of every curated file naming it, invalid files included: a
    half-written file with a proposed id is as much in the way as a valid one."""
    out: dict[str, list[str]] = {}
    for f in files:
        if f.unit_id is not None:
            out.setdefault(f.unit_id, []).append(f.rel)
    return out


def stale_paths(
    layout: Layout, comparison: Comparison, carriers: dict[str, list[str]]
) -> list[str]:
    """Curated files that make the comparison stale: an affected file whose bytes changed,
    or a file naming an affected id that the refresh did not see (a new copy, a new draft)."""
    recorded = comparison.affected_files
    changed = [
        path
        for path, expected in recorded.items()
        if current_hash(layout.resolve_inside(path)) != expected
    ]
    new = {
        path
        for uid in comparison.affected_ids()
        for path in carriers.get(uid, ())
        if path not in recorded
    }
    return changed + sorted(new)


def _owner(view: ArchiveView, uid: str) -> str:
    cited = cited_sources(view.declarations.get(uid) or {})
    lineage = cited.source or cited.original
    if lineage:
        return f"source {lineage[:12]}…"
    return "a manual unit without lineage to this source"


@dataclass(frozen=True, slots=True)
class Refinement:
    """What one changed source's comparison is built from: the acquired document, its
    metadata and proposal, what was decided before, and when."""

    doc: Acquired
    meta: DocumentMeta
    proposal: Proposal
    base_hash: str | None  # the adopted or acknowledged hash
    retracted: bool
    at: str


@dataclass
class _Placement:
    """The proposal's units as replace would write them, and what is in their way."""

    proposed: list[ProposedEntry] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)
    items: list[ReviewItem] = field(default_factory=list)
    taken: dict[str, str] = field(default_factory=dict)  # path -> proposed unit id
    # Kept beside ``proposed``: tested once per unit under the refresh lock, a set rebuilt
    # per test made a large import's comparison quadratic (issue 27, G2).
    ids: set[str] = field(default_factory=set)

    def add(self, entry: ProposedEntry) -> None:
        self.proposed.append(entry)
        self.ids.add(entry.id)


def build(view: ArchiveView, r: Refinement) -> Comparison:
    """The comparison of one changed source; ``revision`` is the hash of everything else."""
    sid = r.doc.source_id
    current = view.current(sid)
    by_id = {c.id: c for c in current}
    placed = _Placement(items=_document_items(r))
    for pu in r.proposal.units:
        _place(view, sid, by_id, pu, placed, imported=r.doc.kind == "import")
    comparison = Comparison(
        revision="",
        created_at=r.at,
        source_id=sid,
        locator=r.doc.locator,
        content_hash=r.doc.content_hash,
        acquisition=r.doc.raw_hash,
        base_hash=r.base_hash,
        document=r.meta.facts(),
        current=tuple(current),
        proposed=tuple(placed.proposed),
        review_items=tuple(placed.items),
        retire=tuple(sorted(set(by_id) - placed.ids - _held(r.proposal))),
        dropped=tuple(placed.dropped),
        affected_files=_affected_files(view, current, placed),
    )
    if r.proposal.record is not None:  # an import: what it did not turn into units
        comparison = replace(
            comparison,
            not_imported=tuple(r.proposal.not_imported),
            skipped=dict(r.proposal.skipped),
        )
    return replace(comparison, revision=revision_of(comparison))


def _document_items(r: Refinement) -> list[ReviewItem]:
    """Decides the review items of the document as a whole: the refiner's own, a broken
    frontmatter, a retracted source."""
    items = list(r.proposal.review_items)
    items += [ReviewItem(ReviewCode.DOCUMENT_METADATA, p) for p in r.meta.problems]
    if r.retracted:
        items.append(ReviewItem(ReviewCode.SOURCE_RETRACTED, "the source is retracted"))
    return items


def _place(
    view: ArchiveView,
    sid: str,
    current: dict[str, CurrentUnit],
    pu: ProposedUnit,
    placed: _Placement,
    *,
    imported: bool,
) -> None:
    """Decides what becomes of one proposed unit: skipped as a duplicate, dropped (a
    reserved or suppressed id), or proposed at its path with any conflict as an item.

    Suppression after a curated deletion differs by kind (SPEC 6.3, docs/sources.md): a
    document's refiner may rename what it proposes, so every id new to the tree is dropped;
    an importer's ids are upstream names, so only the deleted ids (reserved) and a proposal
    whose content equals a deleted unit's are dropped, and new upstream elements come in."""
    uid = pu.unit.id
    if uid in placed.ids:
        placed.items.append(ReviewItem(ReviewCode.DUPLICATE_ID, "the id is proposed twice", uid))
        return
    if uid in view.reserved:
        placed.dropped.append(Dropped(uid, DropReason.RESERVED))
        return
    if imported:
        if uid not in view.files and pu.unit.content_hash in view.retired_content:
            placed.dropped.append(Dropped(uid, DropReason.RETIRED_CONTENT))
            return
    elif uid not in view.files and sid in view.suppressed:
        placed.dropped.append(Dropped(uid, DropReason.SUPPRESSED))
        return
    if uid in view.files and uid not in current:
        message = f"the id is owned by {_owner(view, uid)}; replace will not take it over"
        placed.items.append(ReviewItem(ReviewCode.OWNERSHIP_CONFLICT, message, uid))
    path = _target_path(current.get(uid), pu.unit.kind, uid)
    holder = view.paths.get(path, uid)
    if holder != uid or path in placed.taken:
        placed.items.append(ReviewItem(ReviewCode.PATH_TAKEN, f"{path} holds another unit", uid))
    placed.taken[path] = uid
    placed.add(
        ProposedEntry(
            uid,
            pu.unit.kind,
            path,
            pu.unit.content_hash,
            pu.markdown if pu.markdown is not None else render(pu.unit),
            tuple(pu.excerpts),
        )
    )


def _affected_files(
    view: ArchiveView, current: list[CurrentUnit], placed: _Placement
) -> dict[str, str | None]:
    """Decides which files the comparison depends on, with the hash each has now."""
    affected: dict[str, str | None] = {c.path: c.file_hash for c in current}
    for p in placed.proposed:
        affected.setdefault(p.path, current_hash(view.layout.resolve_inside(p.path)))
    # Every other file naming one of these ids (an ownership conflict, a duplicate) is a
    # dependency too: decide then tells a file it has seen from one created since.
    for uid in {c.id for c in current} | placed.ids:
        for path in view.carriers.get(uid, ()):
            affected.setdefault(path, current_hash(view.layout.resolve_inside(path)))
    return dict(sorted(affected.items()))


def _held(proposal: Proposal) -> set[str]:
    """Ids an import left out as incomplete: a live unit with one stays as it is (replace
    neither rewrites nor retires it) until the source gives the element whole again."""
    return {n.unit_id for n in proposal.not_imported if isinstance(n.unit_id, str)}


def revision_of(comparison: Comparison) -> str:
    return sha256_hex(canonical_json(comparison.body_json()))


def _target_path(current: CurrentUnit | None, kind: str, uid: str) -> str:
    """Where replace writes a unit: its current file if the kind is unchanged, else canonical."""
    if current and current.path.startswith(f"evidence/curated/{kind}/"):
        return current.path
    return f"evidence/curated/{kind}/{slug(uid)}.md"
