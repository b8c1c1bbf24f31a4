"""Derivation of a candidate manifest from the working files (SPEC.md 5.1-5.3).

Pure apart from reading source files for the E150 re-check: the same code path
serves the real run and ``--dry-run``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property
from operator import itemgetter

from evidence_tool.archive import staged as staging
from evidence_tool.archive.clock import Stamp
from evidence_tool.archive.manifest import (
    FORMAT,
    PreviousJson,
    UnitEntry,
    cited_source_paths,
    kept_as_is,
    manifest_bytes,
)
from evidence_tool.archive.records import (
    ClosedBy,
    ClosedItem,
    Deletion,
    DeletionReason,
    DocumentDeclaration,
    ManualDeclaration,
    declaration_from_json,
)
from evidence_tool.archive.snapshot import Snapshot
from evidence_tool.errors import Diagnostic
from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.workspace.curated import CuratedFile
from evidence_tool.workspace.layout import Layout

CLASSES = ("added", "modified", "reformatted", "renamed", "restored", "deleted", "unchanged")
# A consolidation's changes: the ids of each class, and how many units stayed unchanged.
Changes = dict[str, list[str] | int]


def changes_json(changes: Changes) -> JsonObject:
    """The changes as ``--json`` and the event log write them."""
    return {k: list[JsonValue](v) if isinstance(v, list) else v for k, v in changes.items()}


def manual(actor: str, at: str, original: JsonObject | None = None) -> JsonObject:
    """A manual declaration's manifest object, keeping ``original`` (a lineage object)."""
    lineage = DocumentDeclaration.from_json(original) if original is not None else None
    return ManualDeclaration(actor, at, lineage).to_json()


def lineage_of(provenance: JsonObject) -> JsonObject | None:
    """The documentary lineage to keep under ``original`` when a unit changes visibly."""
    decl = declaration_from_json(provenance)
    if isinstance(decl, DocumentDeclaration):
        return decl.lineage().to_json()
    return decl.original.to_json() if decl.original is not None else None


def source_of(provenance: JsonObject) -> str | None:
    """The source id a declaration or its lineage names, if any."""
    lineage = lineage_of(provenance)
    return str(lineage["source_id"]) if lineage is not None else None


def item_key(item: JsonObject) -> tuple[str, str, str]:
    """What tells review items apart: code, message and when it was raised."""
    code, message, at = item.get("code", ""), item.get("message", ""), item.get("raised_at", "")
    return (str(code), str(message), str(at))


@dataclass(frozen=True, slots=True)
class DeriveRequest:
    """What a derivation starts from: the working files, what is staged, and the previous
    snapshot (``sealed``: its bytes were written by this encoder, so they may be spliced)."""

    files: list[CuratedFile]
    staged: JsonObject
    actor: str
    at: Stamp
    layout: Layout
    previous: Snapshot | None = None
    sealed: bool = False
    block_on_review: bool = True


@dataclass
class Derivation:
    manifest: JsonObject
    classes: dict[str, list[str]] = field(default_factory=lambda: {c: [] for c in CLASSES})
    errors: list[Diagnostic] = field(default_factory=list)
    closed_items: list[ClosedItem] = field(default_factory=list)
    source_blobs: dict[str, tuple[bytes, str]] = field(default_factory=dict)  # bytes, sha256
    prev_revision: str | None = None
    prev_json: PreviousJson | None = None
    fresh: list[UnitEntry] = field(default_factory=list)  # unit entries built anew
    blobs: dict[str, bytes] = field(default_factory=dict)  # sha256 -> bytes (the catalog's)

    @cached_property
    def manifest_bytes(self) -> bytes:
        """The canonical manifest, serialized once (it is hashed and written)."""
        return manifest_bytes(self.manifest, self.prev_json)

    @cached_property
    def revision(self) -> str:
        return hashlib.sha256(self.manifest_bytes).hexdigest()

    def summary(self) -> Changes:
        out: Changes = {c: sorted(v) for c, v in self.classes.items() if c != "unchanged"}
        out["unchanged"] = len(self.classes["unchanged"])
        return out


class _Sources:
    """Reads, hashes and decodes each source once, however many units cite it."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.cache: dict[str, tuple[bytes, str] | None] = {}  # bytes, sha256
        self.texts: dict[str, str] = {}

    def read(self, rel: str) -> tuple[bytes, str] | None:
        if rel not in self.cache:
            try:
                path = self.layout.resolve_inside(rel)
                data = path.read_bytes() if self.layout.inside(path) else None
            except (OSError, ValueError):
                data = None
            self.cache[rel] = (data, hashlib.sha256(data).hexdigest()) if data is not None else None
        return self.cache[rel]

    def text(self, rel: str, data: bytes) -> str:
        if rel not in self.texts:
            self.texts[rel] = data.decode("utf-8", errors="replace")
        return self.texts[rel]


def _check_document(
    decl: JsonObject, sources: _Sources, f: CuratedFile, out: Derivation, *, checked: bool
) -> None:
    """E150 unless the source bytes still hash to source_hash and hold every excerpt.

    ``checked``: this very declaration passed the check in the previous snapshot, so
    bytes with the same hash still hold its excerpts (no search through the source).
    """
    doc = DocumentDeclaration.from_json(decl)
    rel = doc.source_path
    read = sources.read(rel)
    problem = None
    if read is None:
        problem = f"its source {rel} is missing"
    elif read[1] != doc.source_hash:
        problem = f"its source {rel} no longer matches the recorded hash"
    elif not checked:
        text = sources.text(rel, read[0])
        missing = [e for e in doc.excerpts if e not in text]
        if missing:
            problem = f"the excerpt {missing[0][:60]!r} is not in {rel}"
    if problem:
        uid = f.unit_id
        out.errors.append(
            Diagnostic(
                "E150",
                f"unit '{uid}' is document-derived but {problem}; restore the source, or "
                "adopt a new version with 'refresh' and 'decide'",
                f.rel,
                1,
                1,
                uid,
            )
        )
        return
    assert read is not None
    out.source_blobs[rel] = read


def derive(request: DeriveRequest) -> Derivation:
    """The candidate manifest of the working files against the previous snapshot.

    Per unit: kept as it was (the common case, by identity), or a new entry whose
    declaration ``_Run.declaration`` decides; then deletion records for the units gone
    and, with ``block_on_review``, E140 for open review items.
    """
    run = _Run(request)
    prev_units, declared, raised = run.prev_units, run.declared, run.raised
    live, unchanged = run.live, run.out.classes["unchanged"]
    units: list[JsonObject] = []
    for f in request.files:
        uid, kind, ch = f.unit_id, f.kind, f.content_hash
        assert uid is not None and kind is not None and ch is not None
        raw = prev_units.get(uid)
        if (
            raw is not None
            and kept_as_is(raw, f.rel, kind, ch, f.file_hash)
            and uid not in declared
            and uid not in raised
        ):
            # The common case, decided first (inline: it runs once per unit of every
            # no-op consolidate): the previous entry itself is kept, which also makes
            # comparing the manifests cheap (equal by identity).
            live.add(uid)
            unchanged.append(uid)
            units.append(raw)
        elif (entry := run.unit(f, raw)) is not None:
            units.append(entry)
    run.record_deletions()
    if request.block_on_review:
        run.out.errors.extend(_review_blocks(units))
    run.out.manifest = run.manifest(units)
    return run.out


class _Run:
    """One derivation: the previous snapshot's units and deletions, and what is decided."""

    def __init__(self, request: DeriveRequest) -> None:
        self.request = request
        prev = request.previous
        self.prev = prev
        sealed = prev is not None and request.sealed and prev.data
        prev_json = PreviousJson(prev.data, prev.manifest) if prev and sealed else None
        self.out = Derivation(
            manifest={}, prev_revision=prev.revision if prev else None, prev_json=prev_json
        )
        self.sources = _Sources(request.layout)
        self.prev_units: dict[str, JsonObject] = prev.view.objects_by_id() if prev else {}
        self.deletions: dict[str, JsonObject] = (
            {str(d["id"]): d for d in prev.view.deletion_objects()} if prev else {}
        )
        self.live: set[str] = set()
        staged = request.staged
        self.declared = staging.section(staged, "declarations")
        self.raised = staging.section(staged, "review_items")

    def unit(self, f: CuratedFile, raw: JsonObject | None) -> JsonObject | None:
        """The entry of a working file that is not simply kept (``raw``: its previous
        entry, if any): the previous one after all, a new one, or None (E121)."""
        uid, kind, ch = f.unit_id, f.kind, f.content_hash
        assert uid is not None and kind is not None and ch is not None
        self.live.add(uid)
        p = UnitEntry(raw) if raw is not None else None
        declaration = self.declaration(f, p)
        if declaration is None:
            return None
        prov, prior_items = declaration
        kept_prov = p is not None and prov is p.provenance_json
        if prov.get("kind") == "document":
            _check_document(prov, self.sources, f, self.out, checked=kept_prov)
        if (
            p is not None
            and kept_prov
            and not prior_items
            and uid not in self.raised
            and p.raw["file_hash"] == f.file_hash
            and p.raw["path"] == f.rel
            and p.raw["kind"] == kind
        ):
            # Nothing about this unit changed but what was checked: keep the previous
            # entry itself, which also makes comparing the manifests cheap (identity).
            return p.raw
        items = self._review_items(uid, ch, prior_items)
        entry = UnitEntry.build(
            unit_id=uid,
            path=f.rel,
            kind=kind,
            content_hash=ch,
            file_hash=f.file_hash,
            provenance=prov,
            review_items=list[JsonValue](items),
        )
        self.out.fresh.append(entry)
        return entry.raw

    def declaration(
        self, f: CuratedFile, p: UnitEntry | None
    ) -> tuple[JsonObject, list[JsonObject]] | None:
        """Which declaration a unit gets (SPEC 5.1) and its prior items; its class is recorded.

        None when its id is reserved by a deletion (E121, recorded in ``out``); a restored
        unit's deletion record is taken out of ``deletions``.
        """
        uid, ch = f.unit_id, f.content_hash
        assert uid is not None and ch is not None
        req, classes = self.request, self.out.classes
        staged_prov = staging.declaration_for(req.staged, uid, ch)
        if p is None:
            return self._new_declaration(f, uid, ch, staged_prov)
        if p.content_hash == ch:
            prov = staged_prov or p.provenance_json
            if p.path != f.rel:
                classes["renamed"].append(uid)
            elif p.file_hash != f.file_hash:
                classes["reformatted"].append(uid)
            else:
                classes["unchanged"].append(uid)
        else:
            prov = staged_prov or manual(req.actor, req.at(f.rel), lineage_of(p.provenance_json))
            classes["modified"].append(uid)
        return prov, p.review_items

    def _new_declaration(
        self, f: CuratedFile, uid: str, ch: str, staged_prov: JsonObject | None
    ) -> tuple[JsonObject, list[JsonObject]] | None:
        """A unit the previous snapshot lacks: added, restored, or refused (reserved id)."""
        req = self.request
        restoration = staging.restoration(req.staged, uid)
        if uid in self.deletions and restoration is None:
            self.out.errors.append(reserved_error(f, uid))
            return None
        if restoration is not None and uid in self.deletions:
            self.deletions.pop(uid)
            prov = staging.restored_provenance(restoration, ch)
            if prov is None:
                recorded = restoration.get("provenance")
                lineage = lineage_of(recorded) if isinstance(recorded, dict) else None
                prov = manual(req.actor, req.at(f.rel), lineage)
            self.out.classes["restored"].append(uid)
        else:
            prov = staged_prov or manual(req.actor, req.at(f.rel))
            self.out.classes["added"].append(uid)
        return prov, []

    def record_deletions(self) -> None:
        """A deletion record for each previous unit gone from the tree; their items close."""
        missing = [
            UnitEntry(raw)
            for uid, raw in self.prev_units.items()
            if uid not in self.live and uid not in self.deletions
        ]
        if not missing:
            return
        req, out = self.request, self.out
        prev_revision = out.prev_revision
        assert prev_revision is not None  # units of a previous snapshot imply its revision
        for p in missing:
            uid = p.id
            actor, reason = staging.retirement(req.staged, uid)
            self.deletions[uid] = Deletion(
                id=uid,
                deleted_at=req.at(p.path),
                last_revision=prev_revision,
                actor=actor or req.actor,
                reason=DeletionReason(reason or DeletionReason.REMOVED),
                last_content_hash=p.content_hash,
                source_id=source_of(p.provenance_json),
            ).to_json()
            out.classes["deleted"].append(uid)
            # Retiring a unit closes its items, recorded or raised since the last snapshot.
            for item in _union(p.review_items, staging.raised_items(req.staged, uid)):
                out.closed_items.append(ClosedItem(uid, item, ClosedBy.RETIREMENT))

    def _review_items(
        self, uid: str, content_hash: str, prior: list[JsonObject]
    ) -> list[JsonObject]:
        """Open items: those raised on this exact content and not resolved."""
        staged = self.request.staged
        items = _union(prior, staging.raised_items(staged, uid))
        resolution = staging.resolution(staged, uid)
        resolved, note = resolution if resolution is not None else (set(), None)
        keep = []
        for item in items:
            if item.get("content_hash") != content_hash:
                self.out.closed_items.append(ClosedItem(uid, item, ClosedBy.VISIBLE_CHANGE))
            elif item_key(item) in resolved:
                self.out.closed_items.append(ClosedItem(uid, item, ClosedBy.RESOLVED, note))
            else:
                keep.append(item)
        return sorted(keep, key=item_key)

    def manifest(self, units: list[JsonObject]) -> JsonObject:
        """The candidate manifest: units by id, deletions, suppressed sources, source blobs."""
        deletions = self.deletions
        suppressed = {
            d["source_id"]
            for d in deletions.values()
            if d["reason"] == DeletionReason.REMOVED.value
            and isinstance(d["source_id"], str)
            and d["source_id"]
        }
        by_id = sorted(units, key=itemgetter("id"))
        ordered = list[JsonValue](by_id)
        return {
            "format": FORMAT,
            "units": ordered,
            "deletions": [deletions[k] for k in sorted(deletions)],
            "suppressed_sources": list[JsonValue](sorted(suppressed)),
            "sources": self._sources_section(units),
        }

    def _sources_section(self, units: list[JsonObject]) -> list[JsonValue]:
        """Source bytes that live declarations and their lineage point at, as blobs."""
        wanted = cited_source_paths(units)
        prev_sources = (
            {str(s["path"]): s for s in self.prev.view.source_objects()} if self.prev else {}
        )
        blobs = self.out.source_blobs
        section: list[JsonValue] = []
        for rel in sorted(wanted):
            old = prev_sources.get(rel)
            if rel in blobs:
                digest = blobs[rel][1]
                # The previous entry itself when unchanged: its line is spliced, not re-encoded.
                fresh: JsonObject = {"path": rel, "blob": digest}
                section.append(old if old and old["blob"] == digest else fresh)
            elif old is not None:
                section.append(old)
        return section


def reserved_error(f: CuratedFile, uid: str) -> Diagnostic:
    """E121: a new file took the id of a deleted unit (consolidate, validate and verify
    say it in the same words)."""
    return Diagnostic(
        "E121",
        f"id '{uid}' belongs to a deleted unit and stays reserved; choose a "
        f"new id, or bring it back with 'tht workspace evidence restore {uid}'",
        f.rel,
        f.key_line("id") or 1,
        1,
        uid,
    )


def _review_blocks(units: list[JsonObject]) -> list[Diagnostic]:
    """E140 for each unit with open review items: consolidation waits for them."""
    blocks = []
    for raw in units:
        if raw.get("review_items"):
            entry = UnitEntry(raw)
            items = entry.review_items
            blocks.append(
                Diagnostic(
                    "E140",
                    f"unit '{entry.id}' has {len(items)} open review "
                    f"item(s), first: {items[0].get('message', '')}",
                    entry.path,
                    1,
                    1,
                    entry.id,
                )
            )
    return blocks


def _union(recorded: list[JsonObject], raised: list[JsonObject]) -> list[JsonObject]:
    """Recorded items, then the raised ones not already among them."""
    items = list(recorded)
    for item in raised:
        if item_key(item) not in {item_key(i) for i in items}:
            items.append(item)
    return items
