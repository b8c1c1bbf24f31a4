"""get / save / remove: revision-checked edits of curated files (SPEC.md 5, 5.2-5.4)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from evidence_tool.archive import staged as staging
from evidence_tool.archive.change import change_files
from evidence_tool.archive.clock import now
from evidence_tool.archive.core import ArchiveCore
from evidence_tool.archive.derive import lineage_of, manual
from evidence_tool.archive.journal import FileChange, Interrupted, current_hash
from evidence_tool.archive.port import Activation
from evidence_tool.archive.records import Declaration, DeletionReason
from evidence_tool.archive.recover import recover
from evidence_tool.archive.restore import restore
from evidence_tool.archive.results import ConsolidateResult
from evidence_tool.archive.review import resolve_review
from evidence_tool.errors import (
    InvalidFilesError,
    PathOutsideError,
    UnknownNameError,
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
    """get / save / remove on one archive; restore, review resolve and recover are their
    own modules, reached from here too."""

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
        """``change_files`` on this archive (change.py), also for layers above it (a source
        ``decide``); the caller holds the lock.  E301 on a changed file, journal first, then
        the writes."""
        return change_files(self.archive, op, actor, changes, expected, staged, **event)

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
        """Bring a deleted unit back from its last snapshot, then consolidate (restore.py)."""
        return restore(self.archive, unit_id, actor, activate)

    def resolve_review(self, unit_id: str, note: str, actor: str) -> list[JsonObject]:
        """Close the open review items of a unit with a note (review.py)."""
        return resolve_review(self.archive, unit_id, note, actor)

    def recover(self, abandon: bool, actor: str) -> list[Interrupted]:
        """Show interrupted journal entries; abandon them on request (recover.py)."""
        return recover(self.archive, abandon, actor)
