"""get / save / remove / restore, review resolve and recover: revision-checked edits of
curated files through the journal (SPEC.md 5, 5.2-5.4)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from evidence_tool import fsio
from evidence_tool.archive import eventlog
from evidence_tool.archive import staged as staging
from evidence_tool.archive.clock import now
from evidence_tool.archive.core import ArchiveCore
from evidence_tool.archive.derive import item_key, lineage_of, manual
from evidence_tool.archive.journal import FileChange, Interrupted, current_hash
from evidence_tool.archive.lock import ArchiveLock
from evidence_tool.archive.port import Activation, as_port
from evidence_tool.archive.records import Declaration, DeletionReason
from evidence_tool.archive.results import ConsolidateResult
from evidence_tool.errors import (
    ConflictError,
    EvidenceError,
    InvalidFilesError,
    PathOutsideError,
    UnknownNameError,
    UsageError,
)
from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.unit import Unit, parse_unit, render, validate
from evidence_tool.unit.suggest import did_you_mean


@dataclass(frozen=True)
class WorkingUnit:
    """A unit as it is on disk now, with the hash to pass back to ``save``/``remove``."""

    unit: Unit | None
    path: str
    file_hash: str
    declaration: Declaration | None
    review_items: list[JsonObject]  # as recorded (JSON objects: shown as written)


def _slug(unit_id: str) -> str:
    tail = unit_id.split(":", 1)[1].replace(":", "-")
    return re.sub(r"[^a-z0-9._-]", "-", tail).strip(".-") or "unit"


class ArchiveEditor:
    """The revision-checked edits of one archive, each under the archive lock."""

    def __init__(self, archive: ArchiveCore) -> None:
        self.archive = archive
        self.layout = archive.layout

    def _find(self, unit_id: str) -> str | None:
        newest = self.archive.newest_snapshot()
        entry = newest.entry(unit_id) if newest else None
        if entry is not None:
            path = self.layout.resolve_inside(entry.path)
            try:
                # Never read through a link leaving the workspace (SPEC 11).
                data = path.read_bytes() if self.layout.inside(path) else None
            except OSError:
                data = None
            if data is not None and parse_unit(data).unit_id == unit_id:
                return entry.path
        for f in self.archive.scan().files:
            if f.unit_id == unit_id:
                return f.rel
        return None

    def _no_file(self, unit_id: str) -> UnknownNameError:
        held = {f.unit_id for f in self.archive.scan().files if f.unit_id}
        return UnknownNameError(
            f"no curated file holds id '{unit_id}'{did_you_mean(unit_id, held)}"
        )

    def get(self, unit_id: str) -> WorkingUnit:
        rel = self._find(unit_id)
        if rel is None:
            raise self._no_file(unit_id)
        path = self.layout.resolve_inside(rel)
        if not self.layout.inside(path):
            raise PathOutsideError(f"{rel} is a symbolic link leaving the workspace; refused")
        data = path.read_bytes()
        newest = self.archive.newest_snapshot()
        entry = newest.entry(unit_id) if newest else None
        return WorkingUnit(
            parse_unit(data, path=rel).unit,
            rel,
            hashlib.sha256(data).hexdigest(),
            entry.declaration if entry else None,
            entry.review_items if entry else [],
        )

    def apply_changes(
        self,
        op: str,
        actor: str,
        changes: list[tuple[str, bytes | None]],
        expected: dict[str, str | None],
        staged: JsonObject,
        **event: JsonValue,
    ) -> list[FileChange]:
        """Check every path against its expected hash, journal, then write (E301 on
        mismatch): the one way save, remove, restore and a source's ``decide`` (a layer
        above) write curated files; the caller holds the lock.

        The post-image objects and the journal entry are one step: a failure before the
        entry lands undoes the objects; after it, the next run rolls the change forward.
        """
        core, layout = self.archive, self.layout
        fsio.begin_step()
        planned = []
        for rel, data in changes:
            target = layout.resolve_inside(rel)
            if not layout.inside(target.parent):
                raise EvidenceError(f"{rel} leaves the workspace", code="E108", path=rel)
            cur = current_hash(target)
            if rel in expected and cur != expected[rel]:
                raise ConflictError(
                    f"{rel} changed since it was read (expected "
                    f"{(expected[rel] or 'absent')[:12]}, found {(cur or 'absent')[:12]}); "
                    "the other edit was kept: read the file again and re-apply your change",
                    path=rel,
                )
            post = core.objects.put(data) if data is not None else None
            planned.append(FileChange(rel, cur, post))
        entry_path, entry = core.journal.begin(op, actor, planned, staged)
        core.journal.apply(entry_path, entry, core.merge_staged)
        name = event.pop("event", op)
        eventlog.append(layout.log, str(name), actor, **event)
        return planned

    def save(self, unit: Unit, expected_file_hash: str | None, actor: str) -> WorkingUnit:
        """Write ``unit`` canonically if its file still has ``expected_file_hash`` (None: new)."""
        problems = validate(unit)
        if problems:
            raise InvalidFilesError(problems)
        with self.archive.locked("save"):
            rel = self._find(unit.id) or f"evidence/curated/{unit.kind}/{_slug(unit.id)}.md"
            changes: list[tuple[str, bytes | None]] = []
            expected: dict[str, str | None] = {rel: expected_file_hash}
            if not rel.startswith(f"evidence/curated/{unit.kind}/"):
                new_rel = f"evidence/curated/{unit.kind}/{rel.rsplit('/', 1)[-1]}"
                changes.append((rel, None))
                expected[new_rel] = None
                rel = new_rel
            data = render(unit).encode("utf-8")
            digest = hashlib.sha256(data).hexdigest()
            if not changes and current_hash(self.layout.resolve_inside(rel)) == digest:
                # An interrupted run of this very save already wrote it (its journal was
                # replayed on taking the lock): succeed instead of reporting E301.
                return self.get(unit.id)
            changes.append((rel, data))
            staged = self._save_declaration(unit, actor)
            self.apply_changes(
                "save", actor, changes, expected, staged, event="saved", id=unit.id, path=rel
            )
        return self.get(unit.id)

    def _save_declaration(self, unit: Unit, actor: str) -> JsonObject:
        """The declaration a save stages: none without a visible change (the declaration
        carries over), else a manual one by the saver that keeps any documentary lineage."""
        newest = self.archive.newest_snapshot()
        entry = newest.entry(unit.id) if newest else None
        if entry is not None and entry.content_hash == unit.content_hash:
            return {}
        lineage = lineage_of(entry.provenance_json) if entry is not None else None
        return staging.declaration_change(unit.id, unit.content_hash, manual(actor, now(), lineage))

    def remove(self, unit_id: str, expected_file_hash: str, actor: str) -> None:
        with self.archive.locked("remove"):
            rel = self._find(unit_id)
            if rel is None and staging.is_retiring(self.archive.staged(), unit_id):
                return  # an interrupted run of this remove finished it (journal replay)
            if rel is None:
                raise self._no_file(unit_id)
            self.apply_changes(
                "remove",
                actor,
                [(rel, None)],
                {rel: expected_file_hash},
                staging.retirement_change(unit_id, DeletionReason.REMOVED.value, actor),
                event="removed",
                id=unit_id,
                path=rel,
            )

    def restore(self, unit_id: str, actor: str, activate: Activation | None) -> ConsolidateResult:
        """Bring a deleted unit back from its last snapshot, then consolidate (SPEC.md 5.3)."""
        from evidence_tool.archive.consolidate import consolidate_locked

        core, port = self.archive, as_port(activate)
        with core.locked("restore"):
            newest = core.newest_snapshot()
            record = newest.deletion(unit_id) if newest else None
            if record is None and self._restore_pending(unit_id):
                # An interrupted run of this restore got as far as the pending candidate:
                # only its activation is left to do.
                return consolidate_locked(core, actor, port)
            if record is None:
                deleted = newest.view.deleted_ids() if newest else set()
                raise UnknownNameError(
                    f"'{unit_id}' has no deletion record{did_you_mean(unit_id, deleted)}; "
                    "'tht workspace evidence log' lists deletions"
                )
            holder = next((f for f in core.scan().files if f.unit_id == unit_id), None)
            last = core.snapshot(record.last_revision).entry(unit_id)
            assert last is not None
            restoring = staging.restoration(core.staged(), unit_id)
            if holder is not None and restoring and holder.file_hash == last.file_hash:
                # An interrupted run of this restore wrote the file and staged it (journal
                # replay): only its consolidation is left to do.
                return consolidate_locked(core, actor, port)
            staged = staging.restoration_change(
                unit_id, last.content_hash, last.provenance, record.last_revision
            )
            # A file that holds the id again (the way back from an id changed by mistake,
            # W122, or from E121) is the unit restored: writing the old file next to it would
            # only end in a duplicate id (E120).  Otherwise the last content comes back.
            write: list[tuple[str, bytes | None]] = []
            if holder is None:
                write.append((last.path, core.objects.get(last.file_hash)))
            self.apply_changes(
                "restore",
                actor,
                write,
                {last.path: None} if write else {},
                staged,
                event="restored",
                id=unit_id,
                path=holder.rel if holder is not None else last.path,
            )
            return consolidate_locked(core, actor, port)

    def _restore_pending(self, unit_id: str) -> bool:
        """An earlier run of this restore got past its journal: the newest snapshot holds the
        unit again, and it is the one the last removal or restore event named restored."""
        core = self.archive
        newest = core.newest_snapshot()
        if newest is None or newest.entry(unit_id) is None:
            return False
        state = core.state()
        if state.pending is not None and state.active is not None:
            active = core.snapshot(state.active)
            if active.deletion(unit_id) is not None:
                return True  # the candidate restoring it waits for activation
        events = [
            e["event"]
            for e in core.events()
            if e.get("id") == unit_id and e["event"] in ("removed", "restored")
        ]
        return bool(events) and events[-1] == "restored"

    def resolve_review(self, unit_id: str, note: str, actor: str) -> list[JsonObject]:
        """Close the open review items of a unit with a note (recorded with the actor)."""
        if not note.strip():
            raise UsageError("--note is required: say why the review items are resolved")
        core = self.archive
        with core.locked("review resolve"):
            newest = core.newest_snapshot()
            entry = newest.entry(unit_id) if newest else None
            staged = core.staged()
            items = (entry.review_items if entry else []) + staging.raised_items(staged, unit_id)
            if not items:
                raise UnknownNameError(
                    f"unit '{unit_id}' has no open review items; 'tht workspace evidence "
                    "status' lists the units that have some"
                )
            keys = [item_key(i) for i in items]
            core.merge_staged(staging.resolution_change(unit_id, note, actor, now(), keys))
            eventlog.append(
                self.layout.log,
                "review resolved",
                actor,
                id=unit_id,
                note=note,
                items=list[JsonValue](items),
            )
            return items

    def recover(self, abandon: bool, actor: str) -> list[Interrupted]:
        """Show interrupted journal entries (and their conflicts); abandon them on request."""
        journal = self.archive.journal
        with ArchiveLock(self.layout.lock, "recover", self.archive.wait):
            out = []
            for path, entry in journal.pending():
                conflicts = journal.conflicts(entry)
                out.append(Interrupted(path.name, entry, tuple(conflicts)))
                if abandon:
                    journal.abandon(path)
                    eventlog.append(
                        self.layout.log,
                        "journal abandoned",
                        actor,
                        entry=path.name,
                        op=entry.op,
                        conflicts=list[JsonValue](conflicts),
                    )
            return out
