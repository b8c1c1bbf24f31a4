"""``decide``: keep the local units or adopt the proposal of one source (SPEC 6.4).

Everything a decision changes (unit files, the adopted document, staged
declarations and retirements, sources.json) is written through the archive's
journal in one entry, then the archive consolidates and activates.  An
activation failure leaves the decision saved; ``retry`` re-activates it
without reading any source again.
"""

from __future__ import annotations

from typing import Any

from evidence_tool.archive.clock import now
from evidence_tool.archive.derive import lineage_of, manual
from evidence_tool.archive.edits import ArchiveEditor
from evidence_tool.archive.local import (
    Activate,
    ConsolidateResult,
    ConsolidateStatus,
    LocalEvidenceArchive,
)
from evidence_tool.archive.records import DeletionReason, DocumentDeclaration
from evidence_tool.errors import (
    Diagnostic,
    EvidenceError,
    IntegrityError,
    NotReadyError,
    UsageError,
)
from evidence_tool.sources import compare, store
from evidence_tool.sources.identity import content_hash, normalize
from evidence_tool.sources.registry import resolve_id

RETIRED = DeletionReason.RETIRED.value


def _stale(
    comparison: dict[str, Any], message: str, paths: list[str] | None = None
) -> EvidenceError:
    return EvidenceError(
        message + "; run 'tht workspace evidence refresh' and decide on the new revision",
        code="E304",
        path=paths[0] if paths else None,
        details={
            "result": {"stale_paths": [*(paths or [])], "revision": comparison.get("revision")}
        },
    )


def _comparison(
    archive: LocalEvidenceArchive, registry: dict[str, Any], sid: str, rev: str
) -> dict[str, Any]:
    record = registry["sources"].get(sid)
    comparison: dict[str, Any] | None = (record or {}).get("comparison")
    if not comparison or comparison["revision"] != rev:
        raise _stale(comparison or {}, f"no pending comparison {rev[:12]}… for source {sid[:12]}…")
    stale = compare.stale_paths(
        archive.layout, comparison, compare.carriers_of(archive.scan().files)
    )
    if stale:
        changed = [p for p in stale if p in comparison["affected_files"]]
        new = [p for p in stale if p not in comparison["affected_files"]]
        why = [f"{', '.join(changed)} changed"] if changed else []
        why += [f"{', '.join(new)} appeared naming an id of this comparison"] if new else []
        raise _stale(
            comparison,
            f"comparison {rev[:12]}… is stale: {' and '.join(why)} since the refresh",
            stale,
        )
    return comparison


def _keep(comparison: dict[str, Any], actor: str, at: str) -> dict[str, Any]:
    """Document-derived units become manual declarations that keep their lineage."""
    declarations = {
        c["id"]: {
            "content_hash": c["content_hash"],
            "provenance": manual(actor, at, lineage_of(c["provenance"])),
        }
        for c in comparison["current"]
        if c["provenance"].get("kind") == "document"
    }
    return {"declarations": declarations}


def _check_replace(comparison: dict[str, Any], allow_mass_retire: bool) -> None:
    items = comparison["review_items"]
    if items:
        first = items[0]
        raise EvidenceError(
            f"the proposal has {len(items)} review item(s), first: "
            f"{first.get('unit_id') or 'document'}: {first['message']}; correct the draft and "
            "refresh, or keep the local units",
            code="E140",
            unit_id=first.get("unit_id"),
            details={"result": {"review_items": items}},
        )
    retire, total = len(comparison["retire"]), len(comparison["current"])
    if retire >= 3 and 2 * retire > total and not allow_mass_retire:
        raise EvidenceError(
            f"replace would retire {retire} of the source's {total} units "
            f"({', '.join(comparison['retire'])}); check the source is complete, or pass "
            "--allow-mass-retire",
            code="E305",
            details={"result": {"retire": comparison["retire"]}},
        )


def _replace(
    archive: LocalEvidenceArchive, comparison: dict[str, Any], actor: str
) -> tuple[list[tuple[str, bytes | None]], dict[str, Any]]:
    """File changes and staged declarations/retirements that adopt the proposal."""
    sid, chash = comparison["source_id"], comparison["content_hash"]
    raw = store.load_acquisition(archive.layout, sid, comparison["acquisition"])
    if "not_imported" in comparison:
        # An import keeps its record (checked against its name on loading), named by
        # its own hash: the input's content hash names what was imported, not the file.
        text, chash = raw.decode("utf-8"), comparison["acquisition"]
    else:
        text = normalize(raw, sid)
        if content_hash(text) != chash:
            raise IntegrityError(
                f"the acquired bytes of {sid[:12]}… no longer match; refresh again"
            )
    acquired = f"evidence/source/acquired/{sid}/{chash}.md"
    changes: list[tuple[str, bytes | None]] = [(acquired, text.encode("utf-8"))]
    declarations = {}
    current = {c["id"]: c for c in comparison["current"]}
    for p in comparison["proposed"]:
        changes.append((p["path"], p["markdown"].encode("utf-8")))
        old = current.get(p["id"])
        if old and old["path"] != p["path"]:
            changes.append((old["path"], None))  # the kind changed: the file moves
        declarations[p["id"]] = {
            "content_hash": p["content_hash"],
            "provenance": DocumentDeclaration(sid, acquired, chash, tuple(p["excerpts"])).to_json(),
        }
    retirements = {}
    for uid in comparison["retire"]:
        changes.append((current[uid]["path"], None))
        retirements[uid] = {"reason": RETIRED, "actor": actor}
    return changes, {"declarations": declarations, "retirements": retirements}


def _finish(
    archive: LocalEvidenceArchive, sid: str, actor: str, activate: Activate | None
) -> ConsolidateResult:
    """Consolidate and activate, then record how far the saved decision got."""
    try:
        result = archive.consolidate_locked(actor, activate)
    except EvidenceError as exc:
        # Other files block the consolidation (open review items, invalid units): the
        # decision itself is saved and stays "saved" until a retry consolidates it.
        exc.add_result(decision="saved")
        exc.diagnostics.append(
            Diagnostic(
                exc.code,
                f"the decision for source {sid[:12]}… is saved; correct the files above, then "
                f"run 'tht workspace evidence decide --source-id {sid[:12]} --retry'",
            )
        )
        raise
    registry = store.read(archive.layout)
    decision = registry["sources"][sid]["decision"]
    # "unchanged" when a re-run finds the decision's snapshot already active.
    active = archive.state().active == result.revision
    decision["status"] = ConsolidateStatus.ACTIVATED.value if active else result.status.value
    decision["activation_error"] = result.activation_error
    decision["snapshot"] = result.revision
    store.write(archive.layout, registry)
    return result


def decide(
    archive: LocalEvidenceArchive,
    sid: str,
    revision: str,
    decision: str,
    actor: str,
    activate: Activate | None,
    *,
    allow_mass_retire: bool = False,
) -> dict[str, Any]:
    if decision not in ("keep", "replace"):
        raise UsageError("--decision is keep or replace")
    with archive.locked("decide"):
        if not archive.state().initialized:
            # Without a baseline, provenance cannot be derived against anything.
            raise NotReadyError("the archive is not initialized: run 'tht workspace evidence init'")
        registry = store.read(archive.layout)
        sid = resolve_id(registry, sid)
        saved = (registry["sources"].get(sid) or {}).get("decision") or {}
        if saved.get("revision") == revision and saved.get("decision") == decision:
            # The same decision, already saved by a run that was interrupted (or that
            # raced us to the lock): finish it instead of refusing a consumed comparison.
            return _finished_again(archive, sid, saved, actor, activate)
        comparison = _comparison(archive, registry, sid, revision)
        at = now()
        if decision == "keep":
            changes: list[tuple[str, bytes | None]] = []
            staged = _keep(comparison, actor, at)
        else:
            _check_replace(comparison, allow_mass_retire)
            changes, staged = _replace(archive, comparison, actor)
        record = registry["sources"][sid]
        record["adopted_hash" if decision == "replace" else "acknowledged_hash"] = comparison[
            "content_hash"
        ]
        record["comparison"] = None
        record["decision"] = {
            "decision": decision,
            "revision": revision,
            "content_hash": comparison["content_hash"],
            "actor": actor,
            "at": at,
            "status": "saved",
            "retired": comparison["retire"] if decision == "replace" else [],
        }
        # sources.json travels in the same journal entry as the unit files it describes.
        changes.append((archive.layout.rel(archive.layout.sources_json), store.render(registry)))
        ArchiveEditor(archive).apply_changes(
            "decide",
            actor,
            changes,
            dict(comparison["affected_files"]),
            staged,
            event="decided",
            source_id=sid,
            decision=decision,
            revision=revision,
        )
        result = _finish(archive, sid, actor, activate)
    return {
        "source_id": sid,
        "decision": decision,
        "revision": revision,
        "written": [p for p, data in changes if data is not None],
        "removed": [p for p, data in changes if data is None],
        "retired": record["decision"]["retired"],
        "consolidation": result.to_json(),
    }


def _finished_again(
    archive: LocalEvidenceArchive,
    sid: str,
    saved: dict[str, Any],
    actor: str,
    activate: Activate | None,
) -> dict[str, Any]:
    """The result of re-running a saved decision: consolidate and activate it again."""
    result = _finish(archive, sid, actor, activate)
    return {
        "source_id": sid,
        "decision": saved["decision"],
        "revision": saved["revision"],
        "written": [],
        "removed": [],
        "retired": saved.get("retired", []),
        "already_saved": True,
        "consolidation": result.to_json(),
    }


def retry(
    archive: LocalEvidenceArchive, sid: str, actor: str, activate: Activate | None
) -> dict[str, Any]:
    """Re-activate a saved decision: no source is read, only the archive."""
    with archive.locked("decide --retry"):
        registry = store.read(archive.layout)
        sid = resolve_id(registry, sid)
        record = registry["sources"].get(sid)
        if not record or not record.get("decision"):
            raise NotReadyError(
                f"source {sid[:12]}… has no saved decision to retry: run 'tht workspace "
                "evidence decide' with --revision and --decision first"
            )
        result = _finish(archive, sid, actor, activate)
    return {
        "source_id": sid,
        "decision": record["decision"]["decision"],
        "revision": record["decision"]["revision"],
        "retry": True,
        "consolidation": result.to_json(),
    }
