"""``decide``: keep the local units or adopt the proposal of one source (SPEC 6.4).

Everything a decision changes (unit files, the adopted document, staged
declarations and retirements, sources.json) is written through the archive's
journal in one entry, then the archive consolidates and activates.  An
activation failure leaves the decision saved; ``retry`` re-activates it
without reading any source again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from msgspec.structs import replace

from evidence_tool.archive.clock import now
from evidence_tool.archive.derive import lineage_of, manual
from evidence_tool.archive.edits import ArchiveEditor
from evidence_tool.archive.local import (
    Activate,
    CatalogRecord,
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
from evidence_tool.jsonvalue import JsonObject, View
from evidence_tool.record import AnyObject, Record, field
from evidence_tool.sources import compare, store
from evidence_tool.sources.identity import content_hash, normalize
from evidence_tool.sources.records import (
    Comparison,
    Decision,
    DecisionProgress,
    DecisionValue,
    ProposalChanges,
    Registry,
    SourceRecord,
)
from evidence_tool.sources.registry import locators, resolve_id

RETIRED = DeletionReason.RETIRED.value
Changes = list[tuple[str, bytes | None]]  # workspace path -> new bytes (None: removed)


@dataclass(frozen=True, slots=True)
class DecisionRequest:
    """One operator's decision on one comparison, as 'decide' is given it."""

    source_id: str  # a full id or a unique prefix
    revision: str
    decision: DecisionValue
    actor: str
    allow_mass_retire: bool = False
    # replace only: ids left as they are (not written, not retired), and whether units
    # fixed by hand (provenance manual) may be overwritten (E306 otherwise).
    exclude: tuple[str, ...] = ()
    overwrite_manual: bool = False


class Staged(Record, frozen=True, omit_defaults=True):
    """What a decision stages for the next consolidation (the archive's staged.json
    format: a JSON boundary, merged by the archive)."""

    declarations: AnyObject
    retirements: AnyObject | None = None  # None (left out): keep retires nothing


@dataclass(frozen=True, slots=True)
class DecideResult(View):
    """What decide (or a re-run, or a retry) did; ``to_json`` is the --json result (the
    consolidation's own envelope last)."""

    _keys = ("source_id", "decision", "revision", "*done", "consolidation")
    source_id: str
    decision: DecisionValue
    revision: str
    consolidation: ConsolidateResult
    written: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    retired: tuple[str, ...] = ()
    already_saved: bool = False
    retry: bool = False
    excluded: tuple[str, ...] = ()
    overwrote_manual: tuple[str, ...] = ()
    initialized: str | None = None  # the baseline recorded first, on a workspace never init'd

    @property
    def done(self) -> JsonObject:
        """What the decision did to the files; a retry says only that it was one."""
        if self.retry:
            return {"retry": True}
        done = ("written", "removed", "retired", "excluded", "overwrote_manual")
        out: JsonObject = {key: list(getattr(self, key)) for key in done}
        if self.already_saved:
            out["already_saved"] = True
        if self.initialized is not None:
            out["initialized"] = self.initialized
        return out


class DecidePlan(Record, frozen=True, kw_only=True):
    """What ``decide --dry-run`` found: the decision's effect, nothing written."""

    source_id: str
    decision: DecisionValue
    revision: str
    dry_run: bool = True  # always: written for the --json result, in this place
    changes: ProposalChanges
    excluded: tuple[str, ...] = ()
    overwrites_manual: tuple[str, ...] = ()
    write: tuple[str, ...] = field(default=(), name="would_write")
    remove: tuple[str, ...] = field(default=(), name="would_remove")


def _stale(revision: str | None, message: str, paths: list[str] | None = None) -> EvidenceError:
    return EvidenceError(
        message + "; run 'tht workspace evidence refresh' and decide on the new revision",
        code="E304",
        path=paths[0] if paths else None,
        details={"result": {"stale_paths": [*(paths or [])], "revision": revision}},
    )


def _comparison(
    archive: LocalEvidenceArchive, record: SourceRecord | None, sid: str, rev: str
) -> Comparison:
    """Decides whether the pending comparison is the one asked for and still current
    (E304 naming what changed since the refresh)."""
    comparison = record.comparison if record else None
    if comparison is None or not _names(rev, comparison.revision):
        revision = comparison.revision if comparison else None
        if comparison is not None:
            # A mistyped or superseded revision: name the pending one (sources show).
            raise _stale(
                revision,
                f"no pending comparison {rev[:12]}… for source {sid[:12]}…: the pending one "
                f"is {comparison.revision[:12]} ('tht workspace evidence sources show "
                f"{sid[:12]}' shows it); if you took {rev[:12]} from an older refresh",
            )
        raise _stale(revision, f"no pending comparison {rev[:12]}… for source {sid[:12]}…")
    stale = compare.stale_paths(
        archive.layout, comparison, compare.carriers_of(archive.scan().files)
    )
    if stale:
        changed = [p for p in stale if p in comparison.affected_files]
        new = [p for p in stale if p not in comparison.affected_files]
        why = [f"{', '.join(changed)} changed"] if changed else []
        why += [f"{', '.join(new)} appeared naming an id of this comparison"] if new else []
        raise _stale(
            comparison.revision,
            f"comparison {rev[:12]}… is stale: {' and '.join(why)} since the refresh",
            stale,
        )
    return comparison


MIN_PREFIX = 8  # a revision prefix names its comparison from this many hex digits on


def _names(given: str, revision: str) -> bool:
    """True when ``given`` is the revision or a prefix of it long enough to be deliberate
    (one source has one pending comparison, so a prefix is unique by construction)."""
    given = given.lower()
    return given == revision or (len(given) >= MIN_PREFIX and revision.startswith(given))


def full_revision(record: SourceRecord | None, given: str) -> str:
    """The pending comparison's full revision when ``given`` names it, else ``given``."""
    comparison = record.comparison if record else None
    if comparison is not None and _names(given, comparison.revision):
        return comparison.revision
    saved = record.decision if record else None  # a re-run of a decision already saved
    if comparison is None and saved is not None and _names(given, saved.revision):
        return saved.revision
    return given


def _keep(comparison: Comparison, actor: str, at: str) -> Staged:
    """Document-derived units become manual declarations that keep their lineage."""
    declarations: JsonObject = {
        c.id: {
            "content_hash": c.content_hash,
            "provenance": manual(actor, at, lineage_of(c.provenance)),
        }
        for c in comparison.current
        if c.from_document
    }
    return Staged(declarations)


def _check_exclude(comparison: Comparison, exclude: tuple[str, ...]) -> None:
    """Every excluded id must be one the comparison names (a typo excludes nothing)."""
    known = comparison.affected_ids()
    unknown = [uid for uid in exclude if uid not in known]
    if unknown:
        raise UsageError(
            f"--exclude {unknown[0]}: not an id this comparison proposes, retires or holds; "
            "'tht workspace evidence sources show SOURCE' lists them"
        )


def _manual_overwrites(comparison: Comparison, req: DecisionRequest) -> tuple[str, ...]:
    """The units fixed by hand that replace would overwrite or retire, excluded ones aside."""
    return tuple(uid for uid in comparison.changes().manual if uid not in req.exclude)


def _check_manual(overwrites: tuple[str, ...], req: DecisionRequest) -> None:
    if overwrites and not req.overwrite_manual:
        raise EvidenceError(
            f"replace would overwrite {len(overwrites)} unit(s) fixed by hand (provenance "
            f"manual): {', '.join(overwrites)}; pass --overwrite-manual to put the source's "
            "text back, or --exclude ID for each unit to keep as it is",
            code="E306",
            unit_id=overwrites[0],
            details={"result": {"overwrites_manual": list(overwrites)}},
        )


def _check_replace(
    comparison: Comparison, allow_mass_retire: bool, exclude: tuple[str, ...] = ()
) -> None:
    """Decides whether replace may go ahead: every excluded id known, no open review item
    (E140) on what it adopts (an excluded id's items do not count), and no mass retirement
    unless allowed (E305)."""
    _check_exclude(comparison, exclude)
    items = tuple(i for i in comparison.review_items if i.unit_id not in exclude or not i.unit_id)
    if items:
        first = items[0]
        out = f", or leave {first.unit_id} out with --exclude {first.unit_id}"
        raise EvidenceError(
            f"the proposal has {len(items)} review item(s), first: "
            f"{first.unit_id or 'document'}: {first.message}; correct the draft and "
            f"refresh, or keep the local units{out if first.unit_id else ''}",
            code="E140",
            unit_id=first.unit_id,
            details={"result": {"review_items": [i.to_json() for i in items]}},
        )
    retire = len([uid for uid in comparison.retire if uid not in exclude])
    total = len(comparison.current)
    if retire >= 3 and 2 * retire > total and not allow_mass_retire:
        raise EvidenceError(
            f"replace would retire {retire} of the source's {total} units "
            f"({', '.join(comparison.retire)}); check the source is complete, or pass "
            "--allow-mass-retire",
            code="E305",
            details={"result": {"retire": list(comparison.retire)}},
        )


def _adopted_text(archive: LocalEvidenceArchive, comparison: Comparison) -> tuple[str, str]:
    """Decides what replace stores as the adopted document, and the hash naming it."""
    sid, chash = comparison.source_id, comparison.content_hash
    raw = store.load_acquisition(archive.layout, sid, comparison.acquisition)
    if comparison.imported is not None:
        # An import keeps its record (checked against its name on loading), named by
        # its own hash: the input's content hash names what was imported, not the file.
        return raw.decode("utf-8"), comparison.acquisition
    text = normalize(raw, sid)
    if content_hash(text) != chash:
        raise IntegrityError(f"the acquired bytes of {sid[:12]}… no longer match; refresh again")
    return text, chash


def _replace(
    archive: LocalEvidenceArchive,
    comparison: Comparison,
    actor: str,
    exclude: tuple[str, ...] = (),
) -> tuple[Changes, Staged]:
    """File changes and staged declarations/retirements that adopt the proposal, every
    excluded id left as it is."""
    sid = comparison.source_id
    text, chash = _adopted_text(archive, comparison)
    acquired = f"evidence/source/acquired/{sid}/{chash}.md"
    changes: Changes = [(acquired, text.encode("utf-8"))]
    declarations: JsonObject = {}
    current = {c.id: c for c in comparison.current}
    for p in comparison.proposed:
        if p.id in exclude:
            continue
        changes.append((p.path, p.markdown.encode("utf-8")))
        old = current.get(p.id)
        if old and old.path != p.path:
            changes.append((old.path, None))  # the kind changed: the file moves
        declarations[p.id] = {
            "content_hash": p.content_hash,
            "provenance": DocumentDeclaration(sid, acquired, chash, p.excerpts).to_json(),
        }
    retirements: JsonObject = {}
    for uid in comparison.retire:
        if uid in exclude:
            continue
        changes.append((current[uid].path, None))
        retirements[uid] = {"reason": RETIRED, "actor": actor}
    return changes, Staged(declarations, retirements)


# The catalog step of the installation, run on the files as the decision left them (the
# session's: the sources layer never imports the catalog package); None: no step.
CatalogHook = Callable[[], CatalogRecord | None]


def _finish(
    archive: LocalEvidenceArchive,
    sid: str,
    actor: str,
    activate: Activate | None,
    catalog: CatalogHook | None = None,
) -> ConsolidateResult:
    """Consolidate and activate, then record how far the saved decision got."""
    try:
        checked = catalog() if catalog is not None else None
        result = archive.consolidate_locked(actor, activate, checked)
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
    record = registry.sources[sid]
    assert record.decision is not None
    # "unchanged" when a re-run finds the decision's snapshot already active.
    active = archive.state().active == result.revision
    status = ConsolidateStatus.ACTIVATED if active else result.status
    decision = replace(
        record.decision,
        status=status,
        snapshot=result.revision,
        activation_error=result.activation_error,
    )
    registry.sources[sid] = replace(record, decision=decision)
    store.write(archive.layout, registry)
    return result


def _record_decision(
    registry: Registry, sid: str, req: DecisionRequest, comparison: Comparison, at: str
) -> Decision:
    """Decides the source's new record: the hash adopted or acknowledged, the comparison
    consumed, the decision saved (not yet consolidated)."""
    replacing = req.decision == DecisionValue.REPLACE
    decision = Decision(
        req.decision,
        req.revision,
        comparison.content_hash,
        req.actor,
        at,
        DecisionProgress.SAVED,
        tuple(u for u in comparison.retire if u not in req.exclude) if replacing else (),
        excluded=req.exclude if replacing else (),
    )
    decided = {"adopted_hash" if replacing else "acknowledged_hash": comparison.content_hash}
    registry.sources[sid] = replace(
        registry.sources[sid], comparison=None, decision=decision, **decided
    )
    return decision


def _apply_decision(
    archive: LocalEvidenceArchive, registry: Registry, sid: str, req: DecisionRequest
) -> tuple[Changes, Decision]:
    """Writes everything the decision changes in one journal entry; returns the changes."""
    comparison = _comparison(archive, registry.sources.get(sid), sid, req.revision)
    at = now()
    if req.decision == DecisionValue.KEEP:
        changes: Changes = []
        staged = _keep(comparison, req.actor, at)
    else:
        _check_replace(comparison, req.allow_mass_retire, req.exclude)
        _check_manual(_manual_overwrites(comparison, req), req)
        changes, staged = _replace(archive, comparison, req.actor, req.exclude)
    decision = _record_decision(registry, sid, req, comparison, at)
    # sources.json travels in the same journal entry as the unit files it describes.
    changes.append((archive.layout.rel(archive.layout.sources_json), store.render(registry)))
    ArchiveEditor(archive).apply_changes(
        "decide",
        req.actor,
        changes,
        dict(comparison.affected_files),
        staged.to_json(),
        event="decided",
        source_id=sid,
        decision=req.decision.value,
        revision=req.revision,
    )
    return changes, decision


def decide(
    archive: LocalEvidenceArchive,
    sid: str,
    revision: str,
    decision: str,
    actor: str,
    activate: Activate | None,
    *,
    allow_mass_retire: bool = False,
    exclude: tuple[str, ...] = (),
    overwrite_manual: bool = False,
    catalog: CatalogHook | None = None,
) -> DecideResult:
    """Keep or replace one source's pending comparison, then consolidate and activate
    (the documented face: the arguments become one ``DecisionRequest``)."""
    return decide_on(
        archive,
        _request(sid, revision, decision, actor, allow_mass_retire, exclude, overwrite_manual),
        activate,
        catalog,
    )


def _request(
    sid: str,
    revision: str,
    decision: str,
    actor: str,
    allow_mass_retire: bool,
    exclude: tuple[str, ...],
    overwrite_manual: bool,
) -> DecisionRequest:
    if decision not in tuple(DecisionValue):
        raise UsageError("--decision is keep or replace")
    if exclude and decision != DecisionValue.REPLACE:
        raise UsageError("--exclude applies to replace (keep changes no unit file)")
    return DecisionRequest(
        sid,
        revision,
        DecisionValue(decision),
        actor,
        allow_mass_retire,
        tuple(dict.fromkeys(exclude)),
        overwrite_manual,
    )


def plan(
    archive: LocalEvidenceArchive,
    sid: str,
    revision: str,
    decision: str,
    actor: str,
    *,
    allow_mass_retire: bool = False,
    exclude: tuple[str, ...] = (),
    overwrite_manual: bool = False,
) -> DecidePlan:
    """``decide --dry-run``: the same checks (stale E304, review items E140, mass retire
    E305, unknown --exclude), then what the decision would do; nothing is written and no
    lock is taken. Units fixed by hand are listed rather than refused (E306)."""
    req = _request(sid, revision, decision, actor, allow_mass_retire, exclude, overwrite_manual)
    registry = store.read(archive.layout)
    sid = resolve_id(locators(registry), req.source_id)
    known = registry.sources.get(sid)
    req = dataclasses.replace(req, revision=full_revision(known, req.revision))
    comparison = _comparison(archive, known, sid, req.revision)
    changes = comparison.changes()
    if req.decision == DecisionValue.KEEP:
        return DecidePlan(
            source_id=sid, decision=req.decision, revision=req.revision, changes=changes
        )
    _check_replace(comparison, req.allow_mass_retire, req.exclude)
    current = {c.id: c for c in comparison.current}
    write = tuple(p.path for p in comparison.proposed if p.id not in req.exclude)
    remove = tuple(
        current[uid].path for uid in comparison.retire if uid not in req.exclude
    ) + tuple(
        current[p.id].path
        for p in comparison.proposed
        if p.id in current and current[p.id].path != p.path and p.id not in req.exclude
    )
    return DecidePlan(
        source_id=sid,
        decision=req.decision,
        revision=req.revision,
        changes=changes,
        excluded=req.exclude,
        overwrites_manual=_manual_overwrites(comparison, req),
        write=write,
        remove=remove,
    )


def decide_on(
    archive: LocalEvidenceArchive,
    req: DecisionRequest,
    activate: Activate | None,
    catalog: CatalogHook | None = None,
) -> DecideResult:
    """``decide`` with its parameters together: saved once, finished by any re-run."""
    with archive.locked("decide"):
        if not archive.state().initialized:
            # Without a baseline, provenance cannot be derived against anything.
            raise NotReadyError("the archive is not initialized: run 'tht workspace evidence init'")
        registry = store.read(archive.layout)
        sid = resolve_id(locators(registry), req.source_id)
        known = registry.sources.get(sid)
        req = dataclasses.replace(req, revision=full_revision(known, req.revision))
        saved = known.decision if known else None
        if saved and saved.revision == req.revision and saved.decision == req.decision:
            # The same decision, already saved by a run that was interrupted (or that
            # raced us to the lock): finish it instead of refusing a consumed comparison.
            result = _finish(archive, sid, req.actor, activate, catalog)
            return DecideResult(
                sid,
                saved.decision,
                saved.revision,
                result,
                retired=saved.retired,
                already_saved=True,
            )
        overwrote: tuple[str, ...] = ()
        if known and known.comparison and req.decision == DecisionValue.REPLACE:
            overwrote = _manual_overwrites(known.comparison, req)
        changes, decision = _apply_decision(archive, registry, sid, req)
        result = _finish(archive, sid, req.actor, activate, catalog)
    return DecideResult(
        sid,
        req.decision,
        req.revision,
        result,
        written=tuple(p for p, data in changes if data is not None),
        removed=tuple(p for p, data in changes if data is None),
        retired=decision.retired,
        excluded=decision.excluded,
        overwrote_manual=overwrote,
    )


def retry(
    archive: LocalEvidenceArchive,
    sid: str,
    actor: str,
    activate: Activate | None,
    catalog: CatalogHook | None = None,
) -> DecideResult:
    """Re-activate a saved decision: no source is read, only the archive."""
    with archive.locked("decide --retry"):
        registry = store.read(archive.layout)
        sid = resolve_id(locators(registry), sid)
        record = registry.sources.get(sid)
        if not record or not record.decision:
            raise NotReadyError(
                f"source {sid[:12]}… has no saved decision to retry: run 'tht workspace "
                "evidence decide' with --revision and --decision first"
            )
        result = _finish(archive, sid, actor, activate, catalog)
    return DecideResult(sid, record.decision.decision, record.decision.revision, result, retry=True)
