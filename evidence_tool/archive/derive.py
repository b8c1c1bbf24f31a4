"""Derivation of a candidate manifest from the working files (SPEC.md 5.1-5.3).

Pure apart from reading source files for the E150 re-check: the same code path
serves the real run and ``--dry-run``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from evidence_tool.archive.clock import Stamp
from evidence_tool.archive.manifest import FORMAT, PreviousJson, manifest_bytes
from evidence_tool.archive.records import (
    Deletion,
    DeletionReason,
    DocumentDeclaration,
    ManualDeclaration,
    declaration_from_json,
)
from evidence_tool.errors import Diagnostic
from evidence_tool.workspace.layout import Layout
from evidence_tool.workspace.scan import CuratedFile

CLASSES = ("added", "modified", "reformatted", "renamed", "restored", "deleted", "unchanged")


def manual(actor: str, at: str, original: dict[str, Any] | None = None) -> dict[str, Any]:
    """A manual declaration's manifest object, keeping ``original`` (a lineage object)."""
    lineage = DocumentDeclaration.from_json(original) if original is not None else None
    return ManualDeclaration(actor, at, lineage).to_json()


def lineage_of(provenance: dict[str, Any]) -> dict[str, Any] | None:
    """The documentary lineage to keep under ``original`` when a unit changes visibly."""
    decl = declaration_from_json(provenance)
    if isinstance(decl, DocumentDeclaration):
        return decl.lineage().to_json()
    return decl.original.to_json() if decl.original is not None else None


def source_of(provenance: dict[str, Any]) -> str | None:
    lineage = lineage_of(provenance)
    return lineage.get("source_id") if lineage else None


def item_key(item: dict[str, Any]) -> tuple[str, str, str]:
    return (item.get("code", ""), item.get("message", ""), item.get("raised_at", ""))


@dataclass
class Derivation:
    manifest: dict[str, Any]
    classes: dict[str, list[str]] = field(default_factory=lambda: {c: [] for c in CLASSES})
    errors: list[Diagnostic] = field(default_factory=list)
    closed_items: list[dict[str, Any]] = field(default_factory=list)
    source_blobs: dict[str, tuple[bytes, str]] = field(default_factory=dict)  # bytes, sha256
    prev_revision: str | None = None
    prev_json: PreviousJson | None = None
    fresh: list[dict[str, Any]] = field(default_factory=list)  # unit entries built anew
    blobs: dict[str, bytes] = field(default_factory=dict)  # sha256 -> bytes (the catalog's)
    _bytes: bytes | None = None
    _revision: str | None = None

    @property
    def manifest_bytes(self) -> bytes:
        """The canonical manifest, serialized once (it is hashed and written)."""
        if self._bytes is None:
            self._bytes = manifest_bytes(self.manifest, self.prev_json)
        return self._bytes

    @property
    def revision(self) -> str:
        if self._revision is None:
            self._revision = hashlib.sha256(self.manifest_bytes).hexdigest()
        return self._revision

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {c: sorted(v) for c, v in self.classes.items() if c != "unchanged"}
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
    decl: dict[str, Any], sources: _Sources, f: CuratedFile, out: Derivation, *, checked: bool
) -> None:
    """E150 unless the source bytes still hash to source_hash and hold every excerpt.

    ``checked``: this very declaration passed the check in the previous snapshot, so
    bytes with the same hash still hold its excerpts (no search through the source).
    """
    rel = decl.get("source_path", "")
    read = sources.read(rel)
    problem = None
    if read is None:
        problem = f"its source {rel} is missing"
    elif read[1] != decl.get("source_hash"):
        problem = f"its source {rel} no longer matches the recorded hash"
    elif not checked:
        text = sources.text(rel, read[0])
        missing = [e for e in decl.get("excerpts", []) if e not in text]
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


def derive(
    prev: dict[str, Any] | None,
    prev_revision: str | None,
    prev_data: bytes | None,
    files: list[CuratedFile],
    staged: dict[str, Any],
    actor: str,
    at: Stamp,
    layout: Layout,
    *,
    block_on_review: bool = True,
) -> Derivation:
    """The candidate manifest of ``files`` against the previous snapshot ``prev``.

    Per unit: kept as it was (the common case, by identity), or a new entry whose
    declaration ``_declaration`` decides; then deletion records for the units gone
    (``_record_deletions``) and, with ``block_on_review``, E140 for open review items.
    """
    prev_json = PreviousJson(prev_data, prev) if prev and prev_data else None
    prev = prev or {"units": [], "deletions": [], "sources": []}
    prev_units = {e["id"]: e for e in prev["units"]}
    deletions = {d["id"]: d for d in prev["deletions"]}
    out = Derivation(manifest={}, prev_revision=prev_revision, prev_json=prev_json)
    sources = _Sources(layout)
    units: list[dict[str, Any]] = []
    live: set[str] = set()
    declared, raised = staged["declarations"], staged["review_items"]
    unchanged = out.classes["unchanged"]
    for f in files:
        uid, ch, fh = f.unit_id, f.content_hash, f.file_hash
        assert uid is not None and ch is not None
        live.add(uid)
        p = prev_units.get(uid)
        if (
            p is not None
            and p["file_hash"] == fh
            and p["path"] == f.rel
            and p["content_hash"] == ch
            and p["kind"] == f.kind
            and not p.get("review_items")
            and uid not in declared
            and uid not in raised
            and p["provenance"].get("kind") != "document"
        ):
            # The common case, decided first: nothing about this unit changed, so the
            # previous entry itself is kept (which also makes comparing manifests cheap).
            # Document-derived units take the long way: their sources are re-checked.
            unchanged.append(uid)
            units.append(p)
            continue
        declaration = _declaration(f, p, staged, deletions, actor, at, out)
        if declaration is None:
            continue
        prov, prior_items = declaration
        if prov.get("kind") == "document":
            _check_document(
                prov, sources, f, out, checked=p is not None and prov is p["provenance"]
            )
        if (
            p is not None
            and prov is p["provenance"]
            and not prior_items
            and uid not in staged["review_items"]
            and p["path"] == f.rel
            and p["file_hash"] == fh
            and p["kind"] == f.kind
        ):
            # Nothing about this unit changed: keep the previous entry itself, which
            # also makes comparing the manifests cheap (equal by identity).
            units.append(p)
            continue
        items = _review_items(uid, ch, prior_items, staged, out)
        entry = {
            "id": uid,
            "path": f.rel,
            "kind": f.kind,
            "content_hash": ch,
            "file_hash": fh,
            "provenance": prov,
            "review_items": items,
        }
        units.append(entry)
        out.fresh.append(entry)
    missing = {uid: p for uid, p in prev_units.items() if uid not in live and uid not in deletions}
    if missing:
        assert prev_revision is not None  # units of a previous snapshot imply its revision
        _record_deletions(missing, staged, prev_revision, actor, at, deletions, out)
    if block_on_review:
        out.errors.extend(_review_blocks(units))
    out.manifest = {
        "format": FORMAT,
        "units": sorted(units, key=lambda e: e["id"]),
        "deletions": [deletions[k] for k in sorted(deletions)],
        "suppressed_sources": sorted(
            {
                d["source_id"]
                for d in deletions.values()
                if d["reason"] == "removed" and d["source_id"]
            }
        ),
        "sources": _sources_section(units, prev, out),
    }
    return out


def _declaration(
    f: CuratedFile,
    p: dict[str, Any] | None,
    staged: dict[str, Any],
    deletions: dict[str, dict[str, Any]],
    actor: str,
    at: Stamp,
    out: Derivation,
) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """Which declaration a unit gets (SPEC 5.1) and its prior items; its class is recorded.

    None when its id is reserved by a deletion (E121, recorded in ``out``); a restored
    unit's deletion record is taken out of ``deletions``.
    """
    uid, ch = f.unit_id, f.content_hash
    assert uid is not None and ch is not None
    staged_decl = staged["declarations"].get(uid)
    staged_prov = (
        staged_decl["provenance"] if staged_decl and staged_decl.get("content_hash") == ch else None
    )
    if p is None:
        restoration = staged["restorations"].get(uid)
        if uid in deletions and restoration is None:
            out.errors.append(_reserved(f, uid))
            return None
        if restoration is not None and uid in deletions:
            deletions.pop(uid)
            if restoration.get("content_hash") == ch:
                prov = restoration["provenance"]
            else:
                prov = manual(actor, at(f.rel), lineage_of(restoration["provenance"]))
            out.classes["restored"].append(uid)
        else:
            prov = staged_prov or manual(actor, at(f.rel))
            out.classes["added"].append(uid)
        return prov, []
    if p["content_hash"] == ch:
        prov = staged_prov or p["provenance"]
        if p["path"] != f.rel:
            out.classes["renamed"].append(uid)
        elif p["file_hash"] != f.file_hash:
            out.classes["reformatted"].append(uid)
        else:
            out.classes["unchanged"].append(uid)
    else:
        prov = staged_prov or manual(actor, at(f.rel), lineage_of(p["provenance"]))
        out.classes["modified"].append(uid)
    return prov, list(p.get("review_items", []))


def _reserved(f: CuratedFile, uid: str) -> Diagnostic:
    """E121: a new file took the id of a deleted unit."""
    return Diagnostic(
        "E121",
        f"id '{uid}' belongs to a deleted unit and stays reserved; choose a "
        f"new id, or bring it back with 'tht workspace evidence restore {uid}'",
        f.rel,
        f.key_line("id") or 1,
        1,
        uid,
    )


def _record_deletions(
    missing: dict[str, dict[str, Any]],
    staged: dict[str, Any],
    prev_revision: str,
    actor: str,
    at: Stamp,
    deletions: dict[str, dict[str, Any]],
    out: Derivation,
) -> None:
    """A deletion record for each previous unit gone from the tree; their items close."""
    for uid, p in missing.items():
        retirement = staged["retirements"].get(uid) or {}
        deletions[uid] = Deletion(
            id=uid,
            deleted_at=at(p["path"]),
            last_revision=prev_revision,
            actor=retirement.get("actor", actor),
            reason=DeletionReason(retirement.get("reason", DeletionReason.REMOVED)),
            last_content_hash=p["content_hash"],
            source_id=source_of(p["provenance"]),
        ).to_json()
        out.classes["deleted"].append(uid)
        # Retiring a unit closes its items, recorded or raised since the last snapshot.
        for item in _union(p.get("review_items", []), staged["review_items"].get(uid, [])):
            out.closed_items.append({"id": uid, "item": item, "closed_by": "retirement"})


def _review_blocks(units: list[dict[str, Any]]) -> list[Diagnostic]:
    """E140 for each unit with open review items: consolidation waits for them."""
    blocks = []
    for entry in units:
        if entry["review_items"]:
            first = entry["review_items"][0]
            blocks.append(
                Diagnostic(
                    "E140",
                    f"unit '{entry['id']}' has {len(entry['review_items'])} open review "
                    f"item(s), first: {first.get('message', '')}",
                    entry["path"],
                    1,
                    1,
                    entry["id"],
                )
            )
    return blocks


def _union(recorded: list[dict[str, Any]], raised: list[dict[str, Any]]) -> list[dict[str, Any]]:
    items = list(recorded)
    for item in raised:
        if item_key(item) not in {item_key(i) for i in items}:
            items.append(item)
    return items


def _review_items(
    uid: str,
    content_hash: str,
    prior: list[dict[str, Any]],
    staged: dict[str, Any],
    out: Derivation,
) -> list[dict[str, Any]]:
    """Open items: those raised on this exact content and not resolved."""
    items = _union(prior, staged["review_items"].get(uid, []))
    resolution = staged["resolutions"].get(uid)
    resolved = {tuple(k) for k in resolution.get("items", [])} if resolution else set()
    keep = []
    for item in items:
        if item.get("content_hash") != content_hash:
            out.closed_items.append({"id": uid, "item": item, "closed_by": "visible change"})
        elif item_key(item) in resolved:
            out.closed_items.append(
                {
                    "id": uid,
                    "item": item,
                    "closed_by": "resolved",
                    "note": resolution.get("note") if resolution else None,
                }
            )
        else:
            keep.append(item)
    return sorted(keep, key=item_key)


def _sources_section(
    units: list[dict[str, Any]], prev: dict[str, Any], out: Derivation
) -> list[dict[str, Any]]:
    """Source bytes that live declarations and their lineage point at, as blobs."""
    wanted: set[str] = set()
    for e in units:
        for decl in (e["provenance"], e["provenance"].get("original")):
            if decl and decl.get("kind") == "document":
                wanted.add(decl["source_path"])
    prev_sources = {s["path"]: s for s in prev.get("sources", [])}
    section = []
    for rel in sorted(wanted):
        if rel in out.source_blobs:
            digest = out.source_blobs[rel][1]
            old = prev_sources.get(rel)
            # The previous entry itself when unchanged: its line is spliced, not re-encoded.
            section.append(old if old and old["blob"] == digest else {"path": rel, "blob": digest})
        elif rel in prev_sources:
            section.append(prev_sources[rel])
    return section
