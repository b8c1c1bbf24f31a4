"""consolidate: validate, derive provenance, snapshot, then activate (SPEC.md 5, steps 1-5)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from typing import TYPE_CHECKING

from evidence_tool.archive import eventlog
from evidence_tool.archive import staged as staging
from evidence_tool.archive._speed import unitrecords
from evidence_tool.archive.clock import changed_at
from evidence_tool.archive.core import ArchiveCore
from evidence_tool.archive.derive import Derivation, DeriveRequest, changes_json, derive
from evidence_tool.archive.idchange import IdChange, likely_id_changes
from evidence_tool.archive.manifest import Manifest
from evidence_tool.archive.mirror import CURRENT, MirrorCheck
from evidence_tool.archive.port import ActivationPort
from evidence_tool.archive.results import CatalogRecord, ConsolidateResult, ConsolidateStatus
from evidence_tool.archive.snapshot import Snapshot
from evidence_tool.archive.state import State, write_state
from evidence_tool.archive.writing import (
    ENCODER,
    read_mirror,
    seal,
    write_mirror,
    write_seal,
    write_snapshot,
)
from evidence_tool.errors import (
    ConflictError,
    EvidenceError,
    EvidenceWarning,
    IntegrityError,
    InvalidFilesError,
    refuse_warnings,
)
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.workspace._speed import gcpause
from evidence_tool.workspace._speed.statcache import StatCache
from evidence_tool.workspace.curated import CuratedFile
from evidence_tool.workspace.scan import ValidationReport, scan_curated

if TYPE_CHECKING:
    from evidence_tool.unit import Unit


def consolidate(
    core: ArchiveCore,
    actor: str,
    activate: ActivationPort | None,
    dry_run: bool = False,
    *,
    refuse: list[EvidenceWarning] | None = None,
    catalog: CatalogRecord | None = None,
) -> ConsolidateResult:
    """Validate, derive provenance, snapshot, then activate; a dry run takes no lock and
    writes nothing.  ``refuse``: None, or warnings found above to refuse with the files'
    (E190); ``catalog``: the catalog step ran, the snapshot records what it checked."""
    # A dry run: activate is only asked what a real run would do, never called.
    with gcpause.paused(), nullcontext() if dry_run else core.locked("consolidate"):
        return Consolidation(core).run(
            actor, activate, dry_run=dry_run, refuse=refuse, catalog=catalog
        )


def consolidate_locked(
    core: ArchiveCore,
    actor: str,
    activate: ActivationPort | None,
    catalog: CatalogRecord | None = None,
) -> ConsolidateResult:
    """Consolidate while the caller already holds the lock (decide, restore)."""
    return Consolidation(core).run(actor, activate, dry_run=False, catalog=catalog)


def _compared(prev: JsonObject, catalog: CatalogRecord | None) -> JsonObject:
    """The previous manifest as a new one is compared with it.  A run without the catalog
    step checked nothing: the same units keep the snapshot they have, fingerprint
    included (a changed unit gets a snapshot that records none)."""
    if catalog is not None or "catalog" not in prev:
        return prev
    return {k: v for k, v in prev.items() if k != "catalog"}


def _as_checked(manifest: JsonObject, checked: dict[str, str]) -> None:
    """The catalog step checks the units before the lock is taken: a unit edited, added
    or removed in that gap would be recorded with a fingerprint its text was never
    checked against.  Refused (E301) before any write; a new run checks the new text."""
    units = {e.id: e.content_hash for e in Manifest(manifest).units()}
    changed = sorted(u for u in units.keys() | checked.keys() if units.get(u) != checked.get(u))
    if changed:
        shown = ", ".join(changed[:5]) + (
            f" and {len(changed) - 5} more" if len(changed) > 5 else ""
        )
        raise ConflictError(
            f"{shown} changed while the catalog step was checking the units, so the snapshot "
            "would record a catalog its text was not checked against; nothing was "
            "consolidated: run 'tht workspace evidence consolidate' again"
        )


@contextmanager
def _ahead(activate: ActivationPort, candidate: Snapshot) -> Iterator[None]:
    """Let the backend start the candidate's activation work that needs no write (the
    sqlite index's full build, in a child) while the snapshot is written; it is joined
    by the activation, and stopped if the run fails before it (issue 20)."""
    ahead = activate.capabilities.ahead
    if ahead is None:
        yield
        return
    ahead.begin(candidate)
    try:
        yield
    except BaseException:
        ahead.cancel()
        raise


def derive_files(
    core: ArchiveCore,
    actor: str,
    *,
    newest: str | None = None,
    dry_run: bool = False,
    refuse: list[EvidenceWarning] | None = None,
    carried: JsonObject | None = None,
    baseline: bool = False,
) -> tuple[ValidationReport, Snapshot | None, Derivation]:
    """Whether the files may be recorded (E1xx, E190 refused warnings), and the candidate
    manifest they make against snapshot ``newest``.  ``baseline`` (init): open review
    items do not block, and ``carried`` (migration's declarations) is staged too.  A real
    run saves the stat cache: the next run reads no file this one read."""
    cache = StatCache.load(core.layout)
    report = scan_curated(core.layout, stat_cache=cache, progress=core.progress)
    if report.errors:
        raise InvalidFilesError(report.errors)
    prev = core.snapshot(newest) if newest else None
    # The previous manifest lends its lines only if this very encoder wrote it (the
    # seal says so): lines from another writer could be valid JSON, yet not canonical.
    sealed = prev is not None and seal(core)[1:] == [prev.revision, ENCODER]
    staged = staging.merge(core.staged(), carried) if carried else core.staged()
    request = DeriveRequest(
        report.files,
        staged,
        actor,
        changed_at(core.layout.root),
        core.layout,
        previous=prev,
        sealed=sealed,
        block_on_review=not baseline,
    )
    d = derive(request)
    if d.errors:
        raise InvalidFilesError(d.errors)
    refused = refuse_warnings([*report.warnings, *refuse])[0] if refuse is not None else []
    if refused:
        raise InvalidFilesError(refused)
    if not dry_run:
        cache.save()  # derived data: only what changed since the last scan is recorded
        if (unsaved := cache.unsaved_warning()) is not None:
            report.warnings.append(unsaved)
    return report, prev, d


class Consolidation:
    """One consolidate run on ``core``: what it found of local-manifest.yaml is its own."""

    def __init__(self, core: ArchiveCore) -> None:
        self.core = core
        self.layout = core.layout
        self.mirror = MirrorCheck(CURRENT)  # local-manifest.yaml as this run found it

    def run(
        self,
        actor: str,
        activate: ActivationPort | None,
        *,
        dry_run: bool,
        refuse: list[EvidenceWarning] | None = None,
        catalog: CatalogRecord | None = None,
    ) -> ConsolidateResult:
        """``refuse``: None, or warnings found above to refuse with the files' (E190)."""
        state = self.core.state()
        report, prev, d = derive_files(
            self.core, actor, dry_run=dry_run, refuse=refuse, newest=state.newest
        )
        if catalog is not None:  # a changed warehouse is then a new snapshot
            _as_checked(d.manifest, catalog.checked)
            d.manifest["catalog"] = catalog.entry
            d.blobs[str(catalog.entry["fingerprint"])] = catalog.data
        # An equal manifest has the same canonical bytes: skip serializing and hashing it.
        same = prev is not None and d.manifest == _compared(prev.manifest, catalog)
        revision = state.newest if same and state.newest else d.revision
        result = ConsolidateResult(
            ConsolidateStatus.UNCHANGED,
            revision,
            state.active,
            d.summary(),
            False,
            dry_run,
            closed_review_items=d.closed_items,
            warnings=list(report.warnings),
        )
        result.warnings += [
            c.warning(recorded=not dry_run) for c in id_changes(self.core, d, prev, report)
        ]
        self._mend_mirror(prev, revision, state.newest, result)
        if revision == state.active and state.pending is None:
            return self._keep_active(result, activate, d, prev, report)
        if dry_run:
            result.status = (
                ConsolidateStatus.WOULD_STAY_PENDING
                if activate is None
                else ConsolidateStatus.WOULD_ACTIVATE
            )
            return result
        if activate is None:
            self._record(actor, state, d, report, result)
            result.status = ConsolidateStatus.PENDING_ACTIVATION
            return result
        candidate = build_candidate(self.core, revision, d, prev, report)
        with _ahead(activate, candidate):
            self._record(actor, state, d, report, result)
            return activation(self.core, actor, candidate, activate, result)

    def _keep_active(
        self,
        result: ConsolidateResult,
        activate: ActivationPort | None,
        d: Derivation,
        prev: Snapshot | None,
        report: ValidationReport,
    ) -> ConsolidateResult:
        """The files are the active snapshot's: nothing to record, but the backend's index
        may be missing or older (a fresh clone, a cleared cache): rebuild it, pointers kept."""
        if result.dry_run or activate is None or (index := activate.capabilities.index) is None:
            return result
        candidate = build_candidate(self.core, result.revision, d, prev, report)
        if not index.holds(candidate):
            with gcpause.resumed():
                activate(candidate)
            result.status = ConsolidateStatus.REINDEXED
        return result

    def _record(
        self,
        actor: str,
        state: State,
        d: Derivation,
        report: ValidationReport,
        result: ConsolidateResult,
    ) -> None:
        """Which of snapshot, state and event log this consolidation writes; staged.json
        is emptied (its decisions are now recorded)."""
        revision = result.revision
        if revision != state.newest:
            write_snapshot(self.core, d, report, self.mirror)
            result.wrote = True
        # Without 'init' first, this snapshot is also the baseline: a later 'init' must
        # find the archive initialized rather than reset the pointers.
        baseline = state.baseline or revision
        if state.pending != revision or state.baseline is None:
            write_state(self.layout.state, State(baseline, state.active, revision))
            result.wrote = True
            if state.baseline is None:
                eventlog.append(self.layout.log, "baseline", actor, revision=revision)
        staging.write(self.layout.local / "staged.json", staging.empty())
        if result.wrote:
            eventlog.append(
                self.layout.log,
                "consolidated",
                actor,
                revision=revision,
                changes=changes_json(d.summary()),
                closed_review_items=[c.to_json() for c in d.closed_items],
            )

    def _mend_mirror(
        self, prev: Snapshot | None, revision: str, newest: str | None, result: ConsolidateResult
    ) -> None:
        """local-manifest.yaml is derived: missing, stale or hand-edited, it is written again
        from the snapshot (here, or with the new snapshot), and W701 shows what was discarded."""
        self.mirror = mirror = read_mirror(self.core, prev)
        if prev is None:
            return
        if mirror.status != CURRENT and mirror.named != revision:
            rel = self.layout.rel(self.layout.local_manifest)
            result.warnings.append(
                mirror.warning(prev.revision, revision, rel, dry_run=result.dry_run)
            )
        if result.dry_run:
            return
        if mirror.reseal:
            # A fresh clone has no seal: prove the file once, not at every run.
            write_seal(self.core, mirror.reseal, prev.revision)
        if mirror.status != CURRENT and revision == newest:
            write_mirror(self.core, prev.manifest, prev.revision, None)
            result.wrote = True


def build_candidate(
    core: ArchiveCore, revision: str, d: Derivation, prev: Snapshot | None, report: ValidationReport
) -> Snapshot:
    """Snapshot ``revision`` as this consolidation holds it, with the units its scan
    parsed: activation neither reloads the manifest nor parses a unit a second time."""
    if prev is not None and prev.revision == revision:
        snap = prev
    elif d.revision == revision:  # the manifest just written: its bytes hash to revision
        snap = Snapshot(revision, d.manifest, core.objects, d.manifest_bytes)
    else:
        snap = core.snapshot(revision)
    parsed = parsed_units(report)
    known = unitrecords.KnownRecords(core.layout)
    changed = None
    if prev is not None and snap.manifest is d.manifest and d.prev_revision == prev.revision:
        # derive keeps every other entry of prev as the same object (derive.py).
        changed = frozenset(e.id for e in d.fresh) | frozenset(d.classes["deleted"])
    return replace(snap, parsed=parsed, known=known, previous=prev, changed=changed)


def parsed_units(report: ValidationReport) -> dict[str, Unit]:
    """The units this scan parsed (not those the stat cache vouched for), by file hash:
    typed here, or built from a parse worker's flat result (never parsed again)."""
    return {
        f.file_hash: unit
        for f in report.files
        if (f.parsed is not None or f.flat is not None) and (unit := f.unit) is not None
    }


def activation(
    core: ArchiveCore,
    actor: str,
    candidate: Snapshot,
    activate: ActivationPort,
    result: ConsolidateResult,
) -> ConsolidateResult:
    """Activate the recorded candidate; a failing backend leaves it pending (the reason in
    the result and the event log), a damaged archive is E701."""
    layout = core.layout
    result.status = ConsolidateStatus.PENDING_ACTIVATION
    revision = candidate.revision
    try:
        with gcpause.resumed():
            activate(candidate)
    except IntegrityError as exc:
        # A damaged archive (a corrupted object), not a failing backend: report it as
        # E701 naming the file to restore, not as a retryable activation failure.
        path = exc.path
        if path and os.path.isabs(path) and layout.inside(path):
            path = layout.rel(path)
        raise IntegrityError(exc.message, path=path) from None
    except Exception as exc:  # the callback's contract: raising means failure
        result.activation_error = f"{type(exc).__name__}: {exc}" if not str(exc) else str(exc)
        eventlog.append(
            layout.log,
            "activation failed",
            actor,
            revision=revision,
            reason=result.activation_error,
        )
        return result
    state = core.state()
    write_state(layout.state, State(state.baseline, revision, None))
    eventlog.append(layout.log, "activated", actor, revision=revision, previous=state.active)
    result.status = ConsolidateStatus.ACTIVATED
    result.wrote = True
    return result


def id_changes(
    core: ArchiveCore, d: Derivation, prev: Snapshot | None, report: ValidationReport
) -> list[IdChange]:
    """W122: a deleted id and an added one that are likely the same unit."""
    if prev is None or not d.classes["deleted"] or not d.classes["added"]:
        return []

    files = {f.unit_id: f for f in report.files if f.unit_id is not None}
    return _likely(core, prev, d.classes["deleted"], d.classes["added"], files)


def id_changes_since(core: ArchiveCore, prev: Snapshot) -> list[IdChange]:
    """W122 for the working files against ``prev``, before anything is recorded."""
    files = {f.unit_id: f for f in core.scan().files if f.unit_id is not None and f.valid}
    old = set(prev.by_id())
    return _likely(core, prev, sorted(old - files.keys()), sorted(files.keys() - old), files)


def _likely(
    core: ArchiveCore,
    prev: Snapshot,
    deleted: list[str],
    added: list[str],
    files: dict[str, CuratedFile],
) -> list[IdChange]:
    def blob(digest: str) -> bytes | None:
        try:
            return core.objects.get(digest)
        except (EvidenceError, ValueError):
            return None  # a damaged archive is verify's finding, not this warning's

    if not deleted or not added:
        return []
    prev_units = {e.id: e for e in prev.entries_of(set(deleted))}  # only those looked up
    return likely_id_changes(deleted, added, prev_units, files, blob)
