"""Durable comparisons of local units against a source's proposal (SPEC 6.3).

A comparison names every curated file it depends on with the hash it had
(``affected_files``), and its ``revision`` hashes all of it: any edit to one
of those files makes the comparison stale for ``decide``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from evidence_tool.archive import staged as staging
from evidence_tool.archive.journal import current_hash
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.archive.manifest import Manifest, empty_manifest
from evidence_tool.sources.document import Acquired, DocumentMeta
from evidence_tool.sources.refiner import Proposal
from evidence_tool.unit import render, sha256_hex
from evidence_tool.unit.hashing import canonical_json
from evidence_tool.workspace.layout import Layout
from evidence_tool.workspace.scan import CuratedFile


def cites(provenance: dict[str, Any] | None, sid: str) -> bool:
    """True when a declaration names ``sid`` as its document source or as its ``original``."""
    if not provenance:
        return False
    if provenance.get("kind") == "document" and provenance.get("source_id") == sid:
        return True
    original = provenance.get("original") or {}
    return bool(original.get("source_id") == sid)


def slug(unit_id: str) -> str:
    tail = unit_id.split(":", 1)[1].replace(":", "-")
    return re.sub(r"[^a-z0-9._-]", "-", tail).strip(".-") or "unit"


@dataclass
class ArchiveView:
    """What comparisons read from the archive: live files, declarations, deletions."""

    files: dict[str, CuratedFile]  # by unit id (valid units only)
    paths: dict[str, str | None]  # path -> unit id (None: an invalid file)
    carriers: dict[str, list[str]]  # unit id -> every file naming it, valid or not
    declarations: dict[str, dict[str, Any]]  # unit id -> provenance in force
    reserved: set[str]
    suppressed: set[str]
    layout: Layout

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
        )

    @cached_property
    def citing(self) -> dict[str, list[tuple[str, str]]]:
        """source id -> (unit id, "source" | "original") of the live units citing it, by
        unit id: built once, so a refresh over many sources stays linear in the units."""
        out: dict[str, list[tuple[str, str]]] = {}
        for uid in sorted(self.files):
            prov = self.declarations.get(uid) or {}
            original = prov.get("original") or {}
            if prov.get("kind") == "document" and prov.get("source_id"):
                out.setdefault(prov["source_id"], []).append((uid, "source"))
            if original.get("source_id") and original.get("source_id") != (
                prov.get("source_id") if prov.get("kind") == "document" else None
            ):
                out.setdefault(original["source_id"], []).append((uid, "original"))
        return out

    def current(self, sid: str) -> list[dict[str, Any]]:
        """The live units from this source, as the comparison records them."""
        out = []
        for uid, _ in self.citing.get(sid, []):
            prov = self.declarations.get(uid)
            if cites(prov, sid):
                f = self.files[uid]
                assert prov is not None
                out.append(
                    {
                        "id": uid,
                        "path": f.rel,
                        "file_hash": f.file_hash,
                        "content_hash": f.content_hash,
                        "provenance": prov,
                    }
                )
        return out

    def request_units(self, sid: str) -> list[dict[str, Any]]:
        return [
            {"id": c["id"], "path": c["path"], "markdown": self.files[c["id"]].data.decode()}
            for c in self.current(sid)
        ]


def carriers_of(files: Iterable[CuratedFile]) -> dict[str, list[str]]:
    """unit id -> the paths of every curated file naming it, invalid files included: a
    half-written file with a proposed id is as much in the way as a valid one."""
    out: dict[str, list[str]] = {}
    for f in files:
        if f.unit_id is not None:
            out.setdefault(f.unit_id, []).append(f.rel)
    return out


def affected_ids(comparison: dict[str, Any]) -> set[str]:
    """The ids a decision on this comparison touches: current and proposed."""
    return {c["id"] for c in comparison["current"]} | {p["id"] for p in comparison["proposed"]}


def stale_paths(
    layout: Layout, comparison: dict[str, Any], carriers: dict[str, list[str]]
) -> list[str]:
    """Curated files that make the comparison stale: an affected file whose bytes changed,
    or a file naming an affected id that the refresh did not see (a new copy, a new draft)."""
    recorded = comparison["affected_files"]
    changed = [
        path
        for path, expected in recorded.items()
        if current_hash(layout.resolve_inside(path)) != expected
    ]
    new = {
        path
        for uid in affected_ids(comparison)
        for path in carriers.get(uid, ())
        if path not in recorded
    }
    return changed + sorted(new)


def _owner(view: ArchiveView, uid: str) -> str:
    prov = view.declarations.get(uid) or {}
    lineage = prov if prov.get("kind") == "document" else prov.get("original") or {}
    if lineage.get("source_id"):
        return f"source {lineage['source_id'][:12]}…"
    return "a manual unit without lineage to this source"


def build(
    view: ArchiveView,
    doc: Acquired,
    meta: DocumentMeta,
    proposal: Proposal,
    base_hash: str | None,
    retracted: bool,
    at: str,
) -> dict[str, Any]:
    """The comparison of one changed source; ``revision`` is the hash of everything else."""
    sid = doc.source_id
    current = view.current(sid)
    current_ids = {c["id"]: c for c in current}
    items = [dict(i) for i in proposal.review_items]
    for problem in meta.problems:
        items.append({"code": "document-metadata", "message": problem, "unit_id": None})
    if retracted:
        items.append(
            {"code": "source-retracted", "message": "the source is retracted", "unit_id": None}
        )
    proposed: list[dict[str, Any]] = []
    dropped: list[dict[str, str]] = []
    taken: dict[str, str] = {}
    proposed_ids: set[str] = set()
    for pu in proposal.units:
        uid = pu.unit.id
        if uid in proposed_ids:
            items.append(
                {"code": "duplicate-id", "message": "the id is proposed twice", "unit_id": uid}
            )
            continue
        if uid in view.reserved:
            dropped.append({"id": uid, "reason": "reserved by a deletion record"})
            continue
        if uid not in view.files and sid in view.suppressed:
            dropped.append({"id": uid, "reason": "suppressed: the source had a curated deletion"})
            continue
        if uid in view.files and uid not in current_ids:
            items.append(
                {
                    "code": "ownership-conflict",
                    "message": f"the id is owned by {_owner(view, uid)}; "
                    "replace will not take it over",
                    "unit_id": uid,
                }
            )
        path = _target_path(view, current_ids.get(uid), pu.unit.kind, uid)
        holder = view.paths.get(path, uid)
        if holder != uid or path in taken:
            items.append(
                {"code": "path-taken", "message": f"{path} holds another unit", "unit_id": uid}
            )
        taken[path] = uid
        text = render(pu.unit)
        proposed_ids.add(uid)
        proposed.append(
            {
                "id": uid,
                "kind": pu.unit.kind,
                "path": path,
                "content_hash": pu.unit.content_hash,
                "markdown": text,
                "excerpts": pu.excerpts,
            }
        )
    affected = {c["path"]: c["file_hash"] for c in current}
    for p in proposed:
        affected.setdefault(p["path"], current_hash(view.layout.resolve_inside(p["path"])))
    # Every other file naming one of these ids (an ownership conflict, a duplicate) is a
    # dependency too: decide then tells a file it has seen from one created since.
    for uid in set(current_ids) | proposed_ids:
        for path in view.carriers.get(uid, ()):
            affected.setdefault(path, current_hash(view.layout.resolve_inside(path)))
    body = {
        "source_id": sid,
        "locator": doc.locator,
        "content_hash": doc.content_hash,
        "acquisition": doc.raw_hash,
        "base_hash": base_hash,
        "document": meta.to_json(),
        "current": current,
        "proposed": proposed,
        "review_items": items,
        "retire": sorted(set(current_ids) - proposed_ids),
        "dropped": dropped,
        "affected_files": dict(sorted(affected.items())),
    }
    if proposal.record is not None:  # an import: what it did not turn into units
        body["not_imported"] = proposal.not_imported
        body["skipped"] = proposal.skipped
    return {"revision": revision_of(body), "created_at": at, **body}


def revision_of(comparison: dict[str, Any]) -> str:
    body = {k: v for k, v in comparison.items() if k not in ("revision", "created_at")}
    return sha256_hex(canonical_json(body))


def _target_path(view: ArchiveView, current: dict[str, Any] | None, kind: str, uid: str) -> str:
    """Where replace writes a unit: its current file if the kind is unchanged, else canonical."""
    if current and current["path"].startswith(f"evidence/curated/{kind}/"):
        return str(current["path"])
    return f"evidence/curated/{kind}/{slug(uid)}.md"
