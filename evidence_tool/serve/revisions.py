"""The active revision of a workspace, pinned per request and re-read only when it moves.

A request takes one ``RevisionView`` and answers from it alone: a view is built from an
immutable snapshot, so an activation by another process meanwhile cannot change what the
request sees.  Whether the active revision moved is told by a ``stat`` of
``evidence/.local/state.yaml`` (written by replacing the file, so a new inode and times):
a few microseconds per request, and the next request after an activation serves it.
Nothing is written and no lock is taken (SPEC.md 5.4).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from evidence_tool.activation.citations import CitationContext, retracted_sources
from evidence_tool.activation.records import IndexRecord
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.archive.manifest import UnitEntry
from evidence_tool.archive.records import Deletion
from evidence_tool.archive.snapshot import Snapshot
from evidence_tool.archive.state import read_state
from evidence_tool.errors import EvidenceError
from evidence_tool.jsonvalue import JsonObject, JsonValue

if TYPE_CHECKING:
    from evidence_tool.activation._speed.postings import Packed

StatKey = tuple[int, int, int, int]
V = TypeVar("V")
# Units are parsed one at a time: the parser's first use quiets markdown-it's loggers by
# walking sys.modules, which another thread's import may change under it (RuntimeError).
_PARSING = threading.Lock()


def _stat_key(path: Path) -> StatKey | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


@dataclass
class RevisionView:
    """One active revision: its entries, deletions and (read on demand) unit records."""

    revision: str
    snapshot: Snapshot
    archive: LocalEvidenceArchive
    entries: dict[str, UnitEntry]
    deletions: dict[str, Deletion]
    # What a blob parses to, by file hash, shared with the views after this one: a unit
    # unchanged by an activation is not parsed again (evidence_for reads every unit).
    parsed: dict[str, JsonObject] = field(default_factory=dict)
    _records: dict[str, IndexRecord] = field(default_factory=dict)
    # Unit bodies by file hash, shared with the views after this one like ``parsed``,
    # until all are read (``warm_texts``): then, per unit id, its content hash, body and
    # whether it may cite an import ("1" or "") are in one buffer (postings.Packed),
    # which forked workers read without copying the manifest's or the bodies' objects.
    _texts: dict[str, str] = field(default_factory=dict)
    _packed: Packed | None = None
    _spans: dict[str, list[str]] = field(default_factory=dict)
    _all: list[IndexRecord] | None = None
    _citations: CitationContext | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _warming: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def load(
        cls, archive: LocalEvidenceArchive, revision: str, before: RevisionView | None = None
    ) -> RevisionView:
        snap = archive.snapshot(revision)
        entries = snap.by_id()
        parsed: dict[str, JsonObject] = {}
        texts: dict[str, str] = {}
        if before is not None:  # only what this revision still holds: memory stays bounded
            held = {e.file_hash for e in entries.values()}
            parsed = carried(before.parsed, held)
            texts = carried({**before.unpacked(), **before._texts}, held)
        deletions = {d.id: d for d in snap.deletions}
        return cls(revision, snap, archive, entries, deletions, parsed, _texts=texts)

    def record(self, unit_id: str) -> IndexRecord | None:
        """The active unit's export record (parsed from its blob once per revision)."""
        found = self._records.get(unit_id)
        entry = self.entries.get(unit_id)
        if found is None and entry is not None:
            with _PARSING:
                found = export_record(self.snapshot, entry, self.parsed)
            self._records[unit_id] = found
        return found

    def records(self) -> list[IndexRecord]:
        """Every active unit's record, parsed once per revision (``evidence_for``)."""
        with self._lock, _PARSING:
            if self._all is None:
                self._all = [
                    export_record(self.snapshot, e, self.parsed) for e in self.entries.values()
                ]
                self._records.update((r.id, r) for r in self._all)
            return self._all

    def text(self, unit_id: str) -> str:
        """The unit's Markdown body (the file without its frontmatter) as curated."""
        found = self._held(unit_id, 1)
        if found is not None:
            return found
        entry = self.entries[unit_id]
        found = self._texts.get(entry.file_hash)
        if found is None:
            found = body_of(self.snapshot.unit_bytes(entry).decode("utf-8"))
            self._texts[entry.file_hash] = found
        return found

    def warm_texts(self) -> None:
        """Read every unit's body now (``ActiveReader`` does it in the background when a
        revision is loaded): a hit shows its unit's text, and reading the blob on the
        first search that shows it was a quarter of a search's time with eight clients.
        A blob that does not read is left to the request that shows it (coded error)."""
        with self._warming:
            for unit_id in list(self.entries):
                try:
                    self.text(unit_id)
                except (EvidenceError, OSError, UnicodeDecodeError):
                    continue
            try:  # one buffer, not a string a unit: forked workers keep sharing its pages
                from evidence_tool.activation._speed.postings import Packed
            except ImportError:  # pragma: no cover - the serve extra brings numpy
                return
            if self._packed is None:
                texts, entries = self._texts.copy(), self.entries
                ids = sorted(uid for uid, e in entries.items() if e.file_hash in texts)
                rows = [
                    (e.content_hash, texts[e.file_hash], "1" if _may_import(e) else "")
                    for e in map(entries.__getitem__, ids)
                ]
                self._packed = Packed(rows, ids)
                self._texts = {}

    def content_hash(self, unit_id: str) -> str | None:
        """The active unit's content hash (None: no such unit)."""
        found = self._held(unit_id, 0)
        if found is not None:
            return found
        entry = self.entries.get(unit_id)
        return entry.content_hash if entry is not None else None

    def _held(self, unit_id: str, field: int) -> str | None:
        """``field`` of the unit's packed row (None: not packed)."""
        packed = self._packed
        at = packed.find(unit_id) if packed is not None else None
        return packed.get(at, field) if packed is not None and at is not None else None

    def unpacked(self) -> dict[str, str]:
        """The packed unit bodies, by file hash."""
        packed = self._packed
        if packed is None:
            return {}
        ids = packed.keys.tolist()
        return {self.entries[uid].file_hash: packed.get(n, 1) for n, uid in enumerate(ids)}

    def imported_from(self, unit_id: str) -> list[str]:
        """Where an imported unit's excerpts sit in its import record ([] for any other
        unit); read once per revision."""
        if self._held(unit_id, 2) == "":
            return []  # kept nowhere: a forked worker holds no list a unit it showed
        found = self._spans.get(unit_id)
        if found is None:
            entry = self.entries[unit_id]
            found = []
            if _may_import(entry):
                from evidence_tool.archive.records import declaration_from_json
                from evidence_tool.sources import imported_from

                declaration = declaration_from_json(entry.provenance_json)
                found = imported_from(self.archive.layout, declaration)
            self._spans[unit_id] = found
        return found

    def citation_context(self) -> CitationContext:
        if self._citations is None:
            self._citations = CitationContext(
                self.revision,
                dict(self.entries),
                self.deletions,
                retracted_sources(self.archive),
            )
        return self._citations


def _may_import(entry: UnitEntry) -> bool:
    """Can the unit's excerpts sit in an import record (a document, or ``original``)?"""
    return entry.provenance_kind.value == "document" or "original" in entry.provenance_json


def export_record(
    snapshot: Snapshot, entry: UnitEntry, parsed: dict[str, JsonObject] | None = None
) -> IndexRecord:
    """``Snapshot.records``' record of one entry, without its scan of every entry for the
    id (1.2 ms of a 2.2 ms ``get_evidence`` at 10,000 units); tests compare the two.
    ``parsed`` keeps what each blob parsed to, by file hash (a blob never changes)."""
    fields = parsed.get(entry.file_hash) if parsed is not None else None
    if fields is None:
        unit = snapshot.unit(entry)
        fields = {
            "id": unit.id,
            "kind": unit.kind,
            "language": unit.language,
            "title": unit.title,
            "metadata": unit.metadata.to_json(),
            "payload": unit.payload.to_json(),
        }
        if parsed is not None:
            parsed[entry.file_hash] = fields
    return IndexRecord(
        {
            "revision": snapshot.revision,
            "id": fields["id"],
            "path": entry.path,
            "kind": fields["kind"],
            "language": fields["language"],
            "title": fields["title"],
            "metadata": fields["metadata"],
            "payload": fields["payload"],
            "content_hash": entry.content_hash,
            "file_hash": entry.file_hash,
            "provenance": entry.provenance,
            "provenance_kind": entry.provenance_kind.value,
            "review_items": list[JsonValue](entry.review_items),
        }
    )


def carried(before: dict[str, V], held: set[str]) -> dict[str, V]:
    """``before``'s entries for the file hashes ``held``.  The old view's request threads
    and its background text reader still add to ``before`` meanwhile: iterating it would
    raise (its size changed), so it is copied first (one step under the interpreter lock)."""
    return {h: v for h, v in before.copy().items() if h in held}


def body_of(text: str) -> str:
    """The text after a leading ``---`` frontmatter block (all of it if there is none)."""
    if text.startswith("---"):
        end = text.find("\n---", 3)
        if end >= 0:
            rest = text[end + 4 :]
            return rest[rest.find("\n") + 1 :].lstrip("\n") if "\n" in rest else ""
    return text


class ActiveReader:
    """The active revision of one workspace, as of the request that asks."""

    def __init__(self, root: Path) -> None:
        self.archive = LocalEvidenceArchive(root)
        self.state_path = self.archive.layout.state
        self._key: StatKey | None = None
        self._view: RevisionView | None = None
        self._active: str | None = None
        self._lock = threading.Lock()
        self.loads = 0  # how many revisions were loaded (tests count switches)
        self.background = True  # read a new revision's texts in a thread of their own

    def settled(self) -> RevisionView | None:
        """The view already read if the active revision has not moved since (None: the
        next ``current`` loads one, or nothing is active)."""
        key = _stat_key(self.state_path)
        return self._view if key is not None and key == self._key else None

    def current(self) -> RevisionView | None:
        """The view of the active revision now (None: nothing active yet)."""
        key = _stat_key(self.state_path)
        if key is not None and key == self._key:
            return self._view
        with self._lock:  # one loader per switch; the others wait and share its view
            key = _stat_key(self.state_path)
            if key is not None and key == self._key:
                return self._view
            active = read_state(self.state_path).active if key is not None else None
            if active is None:
                view = None
            elif self._view is not None and self._view.revision == active:
                view = self._view
            else:
                view = RevisionView.load(self.archive, active, self._view)
                self.loads += 1
                if self.background:
                    threading.Thread(target=view.warm_texts, daemon=True).start()
            self._view, self._key = view, key
            return view
