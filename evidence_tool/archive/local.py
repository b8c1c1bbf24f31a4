"""``LocalEvidenceArchive``: initialize, consolidate and read the local archive (SPEC.md 5)."""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from evidence_tool import __version__, fsio
from evidence_tool.archive import eventlog, unitrecords
from evidence_tool.archive import staged as staging
from evidence_tool.archive.clock import changed_at
from evidence_tool.archive.derive import Changes, Derivation, DeriveRequest, changes_json, derive
from evidence_tool.archive.idchange import IdChange, likely_id_changes
from evidence_tool.archive.journal import Journal
from evidence_tool.archive.lock import ArchiveLock
from evidence_tool.archive.manifest import Manifest, PreviousYaml, render_local_manifest
from evidence_tool.archive.mirror import CURRENT, MirrorCheck, check_mirror
from evidence_tool.archive.objects import ObjectStore
from evidence_tool.archive.records import ClosedItem
from evidence_tool.archive.snapshot import Snapshot, load_snapshot, snapshot_path
from evidence_tool.archive.state import State, read_state, write_state
from evidence_tool.errors import (
    AvailabilityError,
    ConflictError,
    EvidenceError,
    EvidenceWarning,
    IntegrityError,
    InvalidFilesError,
    refuse_warnings,
)
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.workspace import gcpause
from evidence_tool.workspace.cachedir import ensure_cache
from evidence_tool.workspace.layout import Layout
from evidence_tool.workspace.scan import CuratedFile, Progress, ValidationReport, scan_curated
from evidence_tool.workspace.statcache import StatCache

if TYPE_CHECKING:
    from evidence_tool.archive.edits import ArchiveEditor, WorkingUnit
    from evidence_tool.unit import Unit

Activate = Callable[[Snapshot], None]


class CatalogRecord(NamedTuple):
    """What the catalog step checked against, as a consolidation records it."""

    entry: JsonObject  # the manifest's "catalog" entry: names the fingerprint by its sha256
    data: bytes  # the fingerprint object's bytes
    checked: dict[str, str]  # the units it checked (id -> content hash): those recorded


# Who encoded the last manifest and mirror: another version may encode them otherwise.
_ENCODER = f"evidence-tool-{__version__}"
_YAML_SEAL = "local-manifest.sha256"  # in .evidence-cache: what local-manifest.yaml was


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
def _ahead(activate: Activate, candidate: Snapshot) -> Iterator[None]:
    """Let the backend start the candidate's activation work that needs no write (the
    sqlite index's full build, in a child) while the snapshot is written; it is joined
    by the activation, and stopped if the run fails before it (issue 20)."""
    begin = getattr(activate, "begin", None)
    if begin is None:
        yield
        return
    begin(candidate)
    try:
        yield
    except BaseException:
        activate.cancel()  # type: ignore[attr-defined]  # begin's pair
        raise


def unfinished_snapshots(layout: Layout) -> list[Path]:
    """Snapshot folders holding no manifest, only temp files at most: a consolidation was
    killed between creating the folder and renaming its manifest into it."""
    out = []
    if layout.snapshots.is_dir():
        for folder in sorted(layout.snapshots.iterdir()):
            if folder.is_dir() and not folder.is_symlink():
                names = os.listdir(folder)
                if all(fsio.TEMP_NAME.fullmatch(n) for n in names):
                    out.append(folder)
    return out


def _outside(exc: fsio.Outside, layout: Layout) -> IntegrityError:
    rel = os.path.relpath(exc.path, layout.root)
    return IntegrityError(
        f"{rel} leads outside the workspace (a symbolic link where a folder belongs); nothing "
        "was written there: replace the link with a real folder, or restore it from Git",
        path=rel,
    )


def write_failed(
    exc: OSError, command: str, layout: Layout, undone_failed: list[str]
) -> AvailabilityError:
    """E604 naming the path and the OS reason; no traceback (it is not a defect)."""
    where = exc.filename if isinstance(exc.filename, str) else None
    if where:
        temp = fsio.TEMP_NAME.fullmatch(os.path.basename(where))
        if temp:  # name the file being written, not its temp file
            where = os.path.join(os.path.dirname(where), temp.group(1))
        if layout.inside(os.path.dirname(where) or "."):
            where = layout.rel(where)
    reason = exc.strerror or type(exc).__name__
    message = f"{command}: writing {where or 'the workspace'} failed ({reason})"
    if undone_failed:
        shown = ", ".join(layout.rel(p) if layout.inside(p) else p for p in undone_failed)
        message += f"; these unfinished writes could not be undone: {shown}"
    message += "; the archive keeps its last completed step: fix the cause, then run it again"
    return AvailabilityError(message, code="E604", path=where)


class ConsolidateStatus(StrEnum):
    """What initialize or consolidate did (for a dry run: what it would do)."""

    INITIALIZED = "initialized"
    ALREADY_INITIALIZED = "already_initialized"
    UNCHANGED = "unchanged"
    REINDEXED = "reindexed"  # active revision kept, its missing index rebuilt
    ACTIVATED = "activated"
    PENDING_ACTIVATION = "pending_activation"
    WOULD_ACTIVATE = "would_activate"
    WOULD_STAY_PENDING = "would_stay_pending"
    WOULD_MIGRATE = "would_migrate"  # a legacy workspace's dry run: conversion comes first


@dataclass
class ConsolidateResult:
    status: ConsolidateStatus
    revision: str
    previous: str | None
    changes: Changes
    wrote: bool
    dry_run: bool = False
    activation_error: str | None = None
    closed_review_items: list[ClosedItem] = field(default_factory=list)
    warnings: list[EvidenceWarning] = field(default_factory=list)
    catalog: JsonObject | None = None  # the catalog step's summary, when it ran

    def to_json(self) -> JsonObject:  # JSON boundary: the --json result
        extra = {"catalog": self.catalog} if self.catalog is not None else {}
        return {
            "status": self.status.value,  # a plain str in JSON
            "revision": self.revision,
            "previous": self.previous,
            "changes": changes_json(self.changes),
            "wrote": self.wrote,
            "dry_run": self.dry_run,
            "activation_error": self.activation_error,
            "closed_review_items": [c.to_json() for c in self.closed_review_items],
            **extra,
        }


class LocalEvidenceArchive:
    """The archive of one workspace; every writing method holds the archive lock."""

    def __init__(
        self, root: str | os.PathLike[str], *, wait: float = 0.0, progress: Progress | None = None
    ) -> None:
        self.layout = Layout.at(root)
        self.layout.require_contained()  # E108 before anything is read through a link
        self.objects = ObjectStore(self.layout.objects)
        self.journal = Journal(self.layout, self.objects)
        self.wait = wait
        self.progress = progress  # (label, done, total) for long scans; the CLI draws it
        self._mirror = MirrorCheck(CURRENT)  # local-manifest.yaml as this consolidate found it

    # -- reading (no lock) -------------------------------------------------
    def state(self) -> State:
        return read_state(self.layout.state)

    def snapshot(self, revision: str) -> Snapshot:
        return load_snapshot(self.layout.snapshots, self.objects, revision)

    def active_snapshot(self) -> Snapshot | None:
        """The snapshot retrieval reads (None before the first activation); no lock taken."""
        active = self.state().active
        return self.snapshot(active) if active else None

    def newest_snapshot(self) -> Snapshot | None:
        newest = self.state().newest
        return self.snapshot(newest) if newest else None

    def staged(self) -> JsonObject:  # JSON boundary: staged.json, read through ``staged``
        return staging.read(self.layout.local / "staged.json")

    def events(self) -> list[JsonObject]:  # JSON boundary: the event log's lines
        return eventlog.read(self.layout.log)

    def scan(self, *, cached: bool = True) -> ValidationReport:
        """Every curated file, unchanged ones known by the stat cache without being read
        (its summary: id, kind, hashes); reading commands leave the cache as it is.

        ``cached=False`` reads and parses every file now: for callers that need every
        unit's content anyway (one read serves hash and parse, so an edit racing the
        command cannot pair a cached hash with newer bytes), and for ``verify --strict``,
        which must not take a timestamp's word for a file."""
        stat_cache = StatCache.load(self.layout) if cached else None
        return scan_curated(self.layout, stat_cache=stat_cache)

    # -- locking and the journal -------------------------------------------
    @contextmanager
    def locked(self, command: str) -> Iterator[None]:
        """Hold the lock; finish what a killed run left; undo an unfinished step on failure.

        A write the file system refuses (disk full, read-only, EIO) ends the operation
        with E604: the writes of the step still open are undone first (fsio), so the
        archive is as the last completed step left it.
        """
        root = self.layout.root
        with (
            ArchiveLock(self.layout.lock, command, self.wait) as lock,
            fsio.transaction(root) as tx,
        ):
            try:
                if lock.interrupted:
                    self.sweep_stale_temp_files()
                self.replay_journal()
                yield
            except Exception as exc:
                undone = tx.rollback()
                if isinstance(exc, OSError):
                    raise write_failed(exc, command, self.layout, undone) from None
                if isinstance(exc, fsio.Outside):
                    raise _outside(exc, self.layout) from None
                raise

    def sweep_stale_temp_files(self) -> None:
        """Remove temp files left by a process killed mid-write (they would fail ``verify``
        and end up in the operator's ``git add``).  Only call while holding the lock:
        then no writer is active, so every such file is an orphan.

        A temp file holds bytes the tool wrote: it goes.  A parked file holds bytes a
        swap took out of an operator file (an editor's save, maybe): the journal settles
        it by its bytes, and any it keeps stop the operation (E302) -- operator bytes
        are never deleted."""
        journaled: dict[str, set[str | None]] | None = None  # read at the first parked file
        kept: list[str] = []
        # The derived cache too: its files are written the same way and nobody else
        # would ever remove a temp file left there (os.walk follows no symlink).
        for top in (self.layout.evidence, self.layout.cache):
            for dirpath, _dirs, names in os.walk(top):
                for name in names:
                    if fsio.TEMP_NAME.fullmatch(name):
                        fsio.unlink(os.path.join(dirpath, name), missing_ok=True)
                    elif parked := fsio.PARKED_NAME.fullmatch(name):
                        target = os.path.join(dirpath, parked.group(1))
                        journaled = self.journal.images() if journaled is None else journaled
                        known = journaled.get(target, set())
                        where = self.journal.settle_parked(Path(dirpath, name), Path(target), known)
                        kept += [where] if where else []
        # A snapshot folder created just before the kill, without its manifest.
        for folder in unfinished_snapshots(self.layout):
            fsio.rmdir(folder)
        if kept:
            raise self.journal.kept_conflict(kept)

    def replay_journal(self) -> None:
        """Finish interrupted operator-file writes, or stop with E302 if a file was edited."""
        for path, entry in self.journal.pending():
            self.journal.apply(path, entry, self.merge_staged)

    def merge_staged(self, change: JsonObject) -> None:
        if change:
            path = self.layout.local / "staged.json"
            staging.write(path, staging.merge(staging.read(path), change))

    # -- initialize ----------------------------------------------------------
    def initialize(
        self,
        actor: str,
        *,
        carried: JsonObject | None = None,
        prepare: Activate | None = None,
    ) -> ConsolidateResult:
        """Record the current files as the baseline snapshot, without activation.

        ``carried`` is a staged change (declarations, review items) that migration
        brings from legacy units; otherwise every unit gets a manual declaration.
        ``prepare`` readies the activation of the baseline (the sqlite backend builds its
        index, which the first consolidate adopts): derived, so a failure is ignored.
        """
        with self.locked("init"):
            state = self.state()
            if state.initialized:
                assert state.baseline is not None
                return ConsolidateResult(
                    ConsolidateStatus.ALREADY_INITIALIZED, state.baseline, None, {}, False
                )
            # Recorded as consolidate records it: the first consolidate after init then
            # reads no file init already read.
            cache = StatCache.load(self.layout)
            report = self._valid_files(cache)
            staged = staging.merge(self.staged(), carried or {})
            d = derive(
                DeriveRequest(
                    report.files,
                    staged,
                    actor,
                    changed_at(self.layout.root),
                    self.layout,
                    block_on_review=False,
                )
            )
            if d.errors:
                raise InvalidFilesError(d.errors)
            cache.save()
            if (unsaved := cache.unsaved_warning()) is not None:
                report.warnings.append(unsaved)
            revision = self._write_snapshot(d, report)
            # The first activation indexes every unit: hand it what this scan parsed.
            unitrecords.save(self.layout, self._parsed_units(report).items())
            if prepare is not None:
                self._prepare(prepare, self._candidate(revision, d, None, report))
            write_state(self.layout.state, State(baseline=revision))
            staging.write(self.layout.local / "staged.json", staging.empty())
            eventlog.append(
                self.layout.log,
                "baseline",
                actor,
                revision=revision,
                units=Manifest(d.manifest).unit_count(),
            )
            # init pays for its own writes: the derived caches it wrote without fsync would
            # otherwise be flushed by the first consolidate's first fsync (issue 20).
            with contextlib.suppress(OSError):  # durable writes were fsynced each already
                fsio.sync_filesystem(self.layout.root)
            return ConsolidateResult(
                ConsolidateStatus.INITIALIZED,
                revision,
                None,
                d.summary(),
                True,
                warnings=report.warnings,
            )

    # -- consolidate ---------------------------------------------------------
    def consolidate(
        self,
        actor: str,
        activate: Activate | None = None,
        dry_run: bool = False,
        *,
        warnings_as_errors: bool = False,
        extra_warnings: Sequence[EvidenceWarning] = (),
        catalog: CatalogRecord | None = None,
    ) -> ConsolidateResult:
        """Validate, derive provenance, snapshot, then activate (SPEC.md 5, steps 1-5).

        A dry run follows the same path, takes no lock and writes nothing.
        ``warnings_as_errors`` refuses the files' coded warnings, and ``extra_warnings``
        (found by a layer above, e.g. W151), as E190 before any write.
        ``catalog``: the catalog step ran; the snapshot records what it checked against.
        """
        refuse = list(extra_warnings) if warnings_as_errors else None
        with gcpause.paused():
            if dry_run:  # activate is only asked what a real run would do, never called
                return self._consolidate(
                    actor, activate, dry_run=True, refuse=refuse, catalog=catalog
                )
            with self.locked("consolidate"):
                return self._consolidate(
                    actor, activate, dry_run=False, refuse=refuse, catalog=catalog
                )

    def consolidate_locked(
        self, actor: str, activate: Activate | None, catalog: CatalogRecord | None = None
    ) -> ConsolidateResult:
        """Consolidate while the caller already holds the lock (decide, restore);
        ``catalog`` as for ``consolidate`` (decide runs the catalog step too)."""
        return self._consolidate(actor, activate, dry_run=False, catalog=catalog)

    # -- revision-checked edits (SPEC.md 5): the ArchiveEditor does the work ------
    def get(self, unit_id: str) -> WorkingUnit:
        """The unit as its file holds it now, with the ``file_hash`` to pass to save/remove."""
        return self._editor().get(unit_id)

    def save(self, unit: Unit, expected_file_hash: str | None, actor: str) -> WorkingUnit:
        """Write ``unit`` canonically if its file still has ``expected_file_hash`` (None: a
        new unit), else E301; the next consolidate records it."""
        return self._editor().save(unit, expected_file_hash, actor)

    def remove(self, unit_id: str, expected_file_hash: str, actor: str) -> None:
        """Delete the unit's file if it still has ``expected_file_hash`` (else E301); the next
        consolidate records the deletion and reserves the id."""
        self._editor().remove(unit_id, expected_file_hash, actor)

    def restore(
        self, unit_id: str, actor: str, activate: Activate | None = None
    ) -> ConsolidateResult:
        """Bring a deleted unit back from its last snapshot, then consolidate."""
        return self._editor().restore(unit_id, actor, activate)

    def _editor(self) -> ArchiveEditor:
        from evidence_tool.archive.edits import ArchiveEditor  # it builds on this class

        return ArchiveEditor(self)

    def _valid_files(self, stat_cache: StatCache | None = None) -> ValidationReport:
        report = scan_curated(self.layout, stat_cache=stat_cache, progress=self.progress)
        if report.errors:
            raise InvalidFilesError(report.errors)
        return report

    def _consolidate(
        self,
        actor: str,
        activate: Activate | None,
        *,
        dry_run: bool,
        refuse: list[EvidenceWarning] | None = None,
        catalog: CatalogRecord | None = None,
    ) -> ConsolidateResult:
        """``refuse``: None, or warnings found above to refuse with the files' (E190)."""
        state = self.state()
        report, prev, d = self._derive(actor, dry_run=dry_run, refuse=refuse, newest=state.newest)
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
            c.warning(recorded=not dry_run) for c in self._id_changes(d, prev, report)
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
        candidate = self._candidate(revision, d, prev, report)
        with _ahead(activate, candidate):
            self._record(actor, state, d, report, result)
            return self._activate(actor, candidate, activate, result)

    def _derive(
        self,
        actor: str,
        *,
        dry_run: bool,
        refuse: list[EvidenceWarning] | None,
        newest: str | None,
    ) -> tuple[ValidationReport, Snapshot | None, Derivation]:
        """Whether the files may be consolidated (E1xx, E190 refused warnings), and the
        candidate manifest they make against the newest snapshot."""
        cache = StatCache.load(self.layout)
        report = self._valid_files(cache)
        prev = self.snapshot(newest) if newest else None
        # The previous manifest lends its lines only if this very encoder wrote it (the
        # seal says so): lines from another writer could be valid JSON, yet not canonical.
        sealed = prev is not None and self._seal()[1:] == [prev.revision, _ENCODER]
        request = DeriveRequest(
            report.files,
            self.staged(),
            actor,
            changed_at(self.layout.root),
            self.layout,
            previous=prev,
            sealed=sealed,
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

    def _keep_active(
        self,
        result: ConsolidateResult,
        activate: Activate | None,
        d: Derivation,
        prev: Snapshot | None,
        report: ValidationReport,
    ) -> ConsolidateResult:
        """The files are the active snapshot's: nothing to record, but the backend's index
        may be missing or older (a fresh clone, a cleared cache): rebuild it, pointers kept."""
        holds = getattr(activate, "holds", None)
        if not result.dry_run and activate is not None and holds is not None:
            candidate = self._candidate(result.revision, d, prev, report)
            if not holds(candidate):
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
            self._write_snapshot(d, report)
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
                closed_review_items=d.closed_json(),
            )

    def _candidate(
        self, revision: str, d: Derivation, prev: Snapshot | None, report: ValidationReport
    ) -> Snapshot:
        """Snapshot ``revision`` as this consolidation holds it, with the units its scan
        parsed: activation neither reloads the manifest nor parses a unit a second time."""
        if prev is not None and prev.revision == revision:
            snap = prev
        elif d.revision == revision:  # the manifest just written: its bytes hash to revision
            snap = Snapshot(revision, d.manifest, self.objects, d.manifest_bytes)
        else:
            snap = self.snapshot(revision)
        parsed = self._parsed_units(report)
        known = unitrecords.KnownRecords(self.layout)
        changed = None
        if prev is not None and snap.manifest is d.manifest and d.prev_revision == prev.revision:
            # derive keeps every other entry of prev as the same object (derive.py).
            changed = frozenset(e.id for e in d.fresh) | frozenset(d.classes["deleted"])
        return replace(snap, parsed=parsed, known=known, previous=prev, changed=changed)

    def _mend_mirror(
        self, prev: Snapshot | None, revision: str, newest: str | None, result: ConsolidateResult
    ) -> None:
        """local-manifest.yaml is derived: missing, stale or hand-edited, it is written again
        from the snapshot (here, or with the new snapshot), and W701 shows what was discarded."""
        self._mirror = mirror = self._check_mirror(prev)
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
            self._write_seal(mirror.reseal, prev.revision)
        if mirror.status != CURRENT and revision == newest:
            self._write_mirror(prev.manifest, prev.revision, None)
            result.wrote = True

    def _id_changes(
        self, d: Derivation, prev: Snapshot | None, report: ValidationReport
    ) -> list[IdChange]:
        """W122: a deleted id and an added one that are likely the same unit."""
        if prev is None or not d.classes["deleted"] or not d.classes["added"]:
            return []

        files = {f.unit_id: f for f in report.files if f.unit_id is not None}
        return self._likely(prev, d.classes["deleted"], d.classes["added"], files)

    def id_changes_since(self, prev: Snapshot) -> list[IdChange]:
        """W122 for the working files against ``prev``, before anything is recorded."""
        files = {f.unit_id: f for f in self.scan().files if f.unit_id is not None and f.valid}
        old = set(prev.view.by_id())
        return self._likely(prev, sorted(old - files.keys()), sorted(files.keys() - old), files)

    def _likely(
        self,
        prev: Snapshot,
        deleted: list[str],
        added: list[str],
        files: dict[str, CuratedFile],
    ) -> list[IdChange]:
        def blob(digest: str) -> bytes | None:
            try:
                return self.objects.get(digest)
            except (EvidenceError, ValueError):
                return None  # a damaged archive is verify's finding, not this warning's

        if not deleted or not added:
            return []
        prev_units = {e.id: e for e in prev.entries_of(set(deleted))}  # only those looked up
        return likely_id_changes(deleted, added, prev_units, files, blob)

    @staticmethod
    def _parsed_units(report: ValidationReport) -> dict[str, Unit]:
        """The units this scan parsed (not those the stat cache vouched for), by file hash:
        typed here, or built from a parse worker's flat result (never parsed again)."""
        return {
            f.file_hash: unit
            for f in report.files
            if (f.parsed is not None or f.flat is not None) and (unit := f.unit) is not None
        }

    @staticmethod
    def _prepare(prepare: Activate, baseline: Snapshot) -> None:
        """Ready the baseline's activation; without it the first consolidate does it all."""
        try:
            with gcpause.resumed():
                prepare(baseline)
        except Exception:  # derived: the first activation builds it instead
            pass

    def _activate(
        self, actor: str, candidate: Snapshot, activate: Activate, result: ConsolidateResult
    ) -> ConsolidateResult:
        result.status = ConsolidateStatus.PENDING_ACTIVATION
        revision = candidate.revision
        try:
            with gcpause.resumed():
                activate(candidate)
        except IntegrityError as exc:
            # A damaged archive (a corrupted object), not a failing backend: report it as
            # E701 naming the file to restore, not as a retryable activation failure.
            path = exc.path
            if path and os.path.isabs(path) and self.layout.inside(path):
                path = self.layout.rel(path)
            raise IntegrityError(exc.message, path=path) from None
        except Exception as exc:  # the callback's contract: raising means failure
            result.activation_error = f"{type(exc).__name__}: {exc}" if not str(exc) else str(exc)
            eventlog.append(
                self.layout.log,
                "activation failed",
                actor,
                revision=revision,
                reason=result.activation_error,
            )
            return result
        state = self.state()
        write_state(self.layout.state, State(state.baseline, revision, None))
        eventlog.append(
            self.layout.log, "activated", actor, revision=revision, previous=state.active
        )
        result.status = ConsolidateStatus.ACTIVATED
        result.wrote = True
        return result

    def _write_snapshot(self, d: Derivation, report: ValidationReport) -> str:
        """Objects, then the snapshot manifest, then local-manifest.yaml (SPEC.md 5 step 4).

        These writes are one step, committed by the state.yaml that names the snapshot.
        """
        fsio.begin_step()
        # Only entries written afresh can name a blob the archive lacks: the entries taken
        # over from the previous snapshot name blobs that exist (objects are written
        # before manifests), so k changed units cost k checks and k writes.
        wanted = {e.file_hash for e in d.fresh}
        wanted |= {digest for _, digest in d.source_blobs.values()}
        wanted |= set(d.blobs)
        missing = self.objects.missing(wanted)
        batch: list[tuple[str, bytes, str]] = []
        for f in report.files if missing else ():
            if f.cached is None and f.file_hash in missing:  # read and hashed by this scan
                missing.discard(f.file_hash)
                batch.append((self.objects.name_for(f.file_hash), f.data, f.file_hash))
        for f in report.files if missing else ():  # rare: a recognized file not archived
            if f.file_hash in missing:
                if hashlib.sha256(f.data).hexdigest() != f.file_hash:
                    raise ConflictError(
                        f"{f.rel} changed while consolidate was running; run it again",
                        path=f.rel,
                    )
                missing.discard(f.file_hash)
                batch.append((self.objects.name_for(f.file_hash), f.data, f.file_hash))
        for data, digest in [*d.source_blobs.values(), *((b, h) for h, b in d.blobs.items())]:
            if digest in missing:
                missing.discard(digest)
                batch.append((self.objects.name_for(digest), data, digest))
        fsio.write_batch(batch)
        revision = d.revision
        path = snapshot_path(self.layout.snapshots, revision)
        fsio.write_new(path, d.manifest_bytes, digest=revision)
        self._write_mirror(d.manifest, revision, self._previous_yaml(d))
        return revision

    def _write_mirror(
        self, manifest: JsonObject, revision: str, previous: PreviousYaml | None
    ) -> None:
        """``local-manifest.yaml`` for snapshot ``revision``, and the seal saying so."""
        data = render_local_manifest(manifest, revision, previous)
        self._write_seal(fsio.write_atomic(self.layout.local_manifest, data), revision)

    def _write_seal(self, digest: str, revision: str) -> None:
        # Remember what was written, and by which encoder, so the next snapshot can reuse
        # the unchanged entries of both documents.
        seal = f"{digest} {revision} {_ENCODER}\n".encode()
        fsio.write_atomic(ensure_cache(self.layout) / _YAML_SEAL, seal, durable=False)

    def _check_mirror(self, prev: Snapshot | None) -> MirrorCheck:
        if prev is None:  # nothing to compare with: the first snapshot writes it
            return MirrorCheck(CURRENT)
        seal = self._seal()

        def other(revision: str) -> Snapshot | None:
            try:
                return self.snapshot(revision)
            except (EvidenceError, ValueError):
                return None

        sealed = (seal[0], seal[1]) if seal else None
        return check_mirror(self.layout.local_manifest, prev, other, sealed)

    def _seal(self) -> list[str]:
        """[mirror sha256, revision, encoder] of the last snapshot written here, or []."""
        try:
            seal = (self.layout.cache / _YAML_SEAL).read_text().split()
        except (OSError, UnicodeDecodeError):
            return []
        return seal if len(seal) == 3 else []

    def _previous_yaml(self, d: Derivation) -> PreviousYaml | None:
        """The last local-manifest.yaml, if it is byte for byte what this tool wrote for
        the previous snapshot (hand edits or a lost cache mean: render everything)."""
        seal = self._seal()
        if seal[1:] != [d.prev_revision, _ENCODER] or d.prev_json is None:
            return None
        data = self._mirror.sealed  # read and proven by its sha256 in _check_mirror
        if data is None:
            return None
        return PreviousYaml(data, d.prev_json.manifest)
