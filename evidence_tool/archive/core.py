"""The archive as every verb sees it: its files, reading (no lock), and the lock.

``ArchiveCore`` holds a workspace's layout, object store and journal; its writing
methods run inside ``locked``, which finishes what a killed run left and undoes an
unfinished step on failure.  The verbs (initialize.py, consolidate.py, edits.py) work
on it; ``LocalEvidenceArchive`` (local.py) is their one face.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from evidence_tool import fsio
from evidence_tool.archive import eventlog
from evidence_tool.archive import staged as staging
from evidence_tool.archive.journal import Journal
from evidence_tool.archive.lock import ArchiveLock
from evidence_tool.archive.objects import ObjectStore
from evidence_tool.archive.snapshot import Snapshot, load_snapshot
from evidence_tool.archive.state import State, read_state
from evidence_tool.errors import AvailabilityError, IntegrityError
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.workspace._speed.statcache import StatCache
from evidence_tool.workspace.layout import Layout
from evidence_tool.workspace.scan import Progress, ValidationReport, scan_curated


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


class ArchiveCore:
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
                # Finish interrupted operator-file writes, or stop with E302 if a file
                # was edited.
                for path, entry in self.journal.pending():
                    self.journal.apply(path, entry, self.merge_staged)
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

    def merge_staged(self, change: JsonObject) -> None:
        if change:
            path = self.layout.local / "staged.json"
            staging.write(path, staging.merge(staging.read(path), change))
