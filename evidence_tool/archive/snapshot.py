"""Immutable snapshots: ``snapshots/<revision>/manifest.json`` plus blobs in ``objects/``."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from evidence_tool.archive._speed.unitrecords import fields_of
from evidence_tool.archive.manifest import Manifest, UnitEntry, parse_manifest
from evidence_tool.archive.objects import HEX64, ObjectStore
from evidence_tool.archive.records import Deletion
from evidence_tool.errors import IntegrityError
from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.workspace._speed import gcpause

if TYPE_CHECKING:
    from evidence_tool.archive._speed.unitrecords import Fields, KnownRecords
    from evidence_tool.unit.model import Unit


@dataclass(frozen=True)
class Snapshot:
    revision: str
    manifest: JsonObject  # JSON boundary: the parsed manifest.json; read it through ``view``
    objects: ObjectStore
    data: bytes = b""  # the manifest's bytes: the next snapshot reuses their unchanged lines
    # Units this process already parsed, by file hash (a blob is named by its hash, so the
    # unit parsed from the same bytes is the same): activation takes them, never a reparse.
    parsed: dict[str, Unit] = field(default_factory=dict, compare=False, repr=False)
    # Unit fields recorded by 'init' (archive._speed.unitrecords), by file hash: a lookup, no parse.
    known: KnownRecords | None = field(default=None, compare=False, repr=False)
    # The newest snapshot before this one, when the consolidation that made it had it
    # loaded: an index update starts from it without loading its manifest again.
    previous: Snapshot | None = field(default=None, compare=False, repr=False)
    # The ids whose entries differ from ``previous``'s (entries built afresh, units deleted),
    # when the consolidation that derived this snapshot knows them: an index update takes
    # them instead of comparing every entry of both manifests.
    changed: frozenset[str] | None = field(default=None, compare=False, repr=False)

    @property
    def view(self) -> Manifest:
        """The manifest's typed view: how code outside the archive reads its keys."""
        return Manifest(self.manifest)

    def entries(self) -> tuple[UnitEntry, ...]:
        return self._entries

    @cached_property
    def _entries(self) -> tuple[UnitEntry, ...]:
        # Viewed once per snapshot: a one-unit edit asked for them four times, 50,000
        # view objects each (issue 20).  A tuple: callers share it and cannot change it.
        return tuple(self.view.units())

    def entry(self, unit_id: str) -> UnitEntry | None:
        return self._by_id.get(unit_id)

    def by_id(self) -> dict[str, UnitEntry]:
        """Every entry by id; shared by the callers, which only read it."""
        return self._by_id

    @cached_property
    def _by_id(self) -> dict[str, UnitEntry]:
        # Built on the first lookup: callers that look up every unit (migration's finish
        # mode) stay linear.
        return {e.id: e for e in self._entries}

    def unit_bytes(self, entry: UnitEntry) -> bytes:
        return self.objects.get(entry.file_hash)

    def unit(self, entry: UnitEntry) -> Unit:
        """The entry's unit: parsed already by this process, or now from its blob."""
        known = self.parsed.get(entry.file_hash)
        if known is not None:
            return known
        from evidence_tool.unit.parse import parse  # not loaded by a no-op (start-up)

        return parse(self.unit_bytes(entry), path=entry.path)

    def units(self) -> Iterator[tuple[UnitEntry, Unit]]:
        """Each unit of the snapshot, parsed from its blob."""
        for entry in self.entries():
            yield entry, self.unit(entry)

    def records(self, ids: set[str] | None = None) -> Iterator[JsonObject]:
        """Export records: the typed unit with its provenance and review items (of the
        units ``ids`` names, if given: only their blobs are read and parsed)."""
        for entry in self.entries() if ids is None else self.entries_of(ids):
            uid, kind, language, title, metadata, payload = self._fields(entry)
            yield {
                "revision": self.revision,
                "id": uid,
                "path": entry.path,
                "kind": kind,
                "language": language,
                "title": title,
                "metadata": metadata,
                "payload": payload,
                "content_hash": entry.content_hash,
                "file_hash": entry.file_hash,
                "provenance": entry.provenance,
                "provenance_kind": entry.provenance_kind.value,
                "review_items": list[JsonValue](entry.review_items),
            }

    def entries_of(self, ids: set[str]) -> list[UnitEntry]:
        """The entries of ``ids`` in manifest order, viewing only those (an index update of
        one unit needs one entry of 50,000); ids the snapshot lacks are skipped."""
        if "_entries" in self.__dict__:  # viewed already
            return [e for e in self._entries if e.id in ids]
        return [UnitEntry(raw) for raw in self.view.unit_objects() if raw.get("id") in ids]

    def _fields(self, entry: UnitEntry) -> Fields:
        """(id, kind, language, title, metadata JSON, payload JSON) of the entry's unit."""
        if entry.file_hash not in self.parsed and self.known is not None:
            found = self.known.get(entry.file_hash)
            if found is not None:
                return found
        return fields_of(self.unit(entry))

    @property
    def deletions(self) -> list[Deletion]:
        return self.view.deletions()

    def deletion(self, unit_id: str) -> Deletion | None:
        """The deletion record that reserves ``unit_id``, if any."""
        return next((d for d in self.deletions if d.id == unit_id), None)


def snapshot_path(folder: Path, revision: str) -> Path:
    if not HEX64.fullmatch(revision):
        raise ValueError(f"not a revision: {revision!r}")
    return folder / revision / "manifest.json"


def load_snapshot(folder: Path, objects: ObjectStore, revision: str) -> Snapshot:
    """Load and check a snapshot: its manifest must hash to its name."""
    path = snapshot_path(folder, revision)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise IntegrityError(
            f"snapshot {revision[:12]}… is missing; restore {path.parent.name}/ from Git",
            path=str(path),
        ) from None
    if hashlib.sha256(data).hexdigest() != revision:
        raise IntegrityError(
            f"snapshot {revision[:12]}… does not match its revision "
            "(corrupted manifest); restore it from Git",
            path=str(path),
        )
    try:
        with gcpause.paused():  # 10 objects per unit, none cyclic: see gcpause
            manifest = parse_manifest(data)
    except ValueError as exc:
        raise IntegrityError(f"snapshot {revision[:12]}…: {exc}", path=str(path)) from None
    return Snapshot(revision, manifest, objects, data)
