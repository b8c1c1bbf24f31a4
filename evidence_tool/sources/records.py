"""The source registry's records (``.local/sources.json``, SPEC 6): typed, frozen, one
``to_json`` / ``from_json`` pair each.

Inside the package a source, its comparison and its decision are these records; they
meet JSON only here.  ``to_json`` writes exactly the keys the registry always held (the
file is rendered with sorted keys, so the bytes are unchanged), and ``from_json``
narrows what a hand-edited file may hold, raising ``RecordError`` for anything else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeVar

from evidence_tool.archive.local import ConsolidateStatus
from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.record import AnyObject, Record, field_of, from_json

E = TypeVar("E", bound=StrEnum)
R = TypeVar("R", bound=Record)


class RecordError(ValueError):
    """A registry value that is not what the record holds (a hand-edited sources.json)."""


class SourceKind(StrEnum):
    FS = "fs"
    HTTP = "http"
    S3 = "s3"
    IMPORT = "import"


class SourceStatus(StrEnum):
    ACTIVE = "active"
    MISSING = "missing"  # the last refresh did not find it
    RETRACTED = "retracted"  # shown by 'sources list' only; the record keeps its status


class DecisionValue(StrEnum):
    KEEP = "keep"
    REPLACE = "replace"


class DecisionProgress(StrEnum):
    """A decision written but not yet consolidated; afterwards its status is the
    consolidation's (a ``ConsolidateStatus``)."""

    SAVED = "saved"


class LineStatus(StrEnum):
    """What refresh did with one source (its per-source line)."""

    UNCHANGED = "unchanged"
    COMPARED = "compared"
    MISSING = "missing"
    FAILED = "failed"  # an import whose input is missing; the other sources went on


class DropReason(StrEnum):
    RESERVED = "reserved by a deletion record"
    SUPPRESSED = "suppressed: the source had a curated deletion"
    RETIRED_CONTENT = "suppressed: the content of a deleted unit"


class ReviewCode(StrEnum):
    """The review item codes of the sources core; importers add their own (a plain str)."""

    DOCUMENT_METADATA = "document-metadata"
    SOURCE_RETRACTED = "source-retracted"
    DUPLICATE_ID = "duplicate-id"
    OWNERSHIP_CONFLICT = "ownership-conflict"
    PATH_TAKEN = "path-taken"
    INVALID_UNIT = "invalid-unit"
    EXCERPT_NOT_FOUND = "excerpt-not-found"
    REFINER = "refiner"


# -- narrowing helpers: what a JSON value must be, else RecordError -------------------


def _obj(value: JsonValue, what: str) -> JsonObject:
    if not isinstance(value, dict):
        raise RecordError(f"{what} is not an object")
    return value


def _str(obj: JsonObject, key: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise RecordError(f"{key!r} is not a string")
    return value


def _opt_str(obj: JsonObject, key: str) -> str | None:
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        raise RecordError(f"{key!r} is not a string or null")
    return value


def _enum(cls: type[E], obj: JsonObject, key: str) -> E:
    value = _str(obj, key)
    try:
        return cls(value)
    except ValueError:
        raise RecordError(f"{key!r} is not one of {', '.join(cls)}") from None


def _maybe(kind: type[R], value: JsonValue) -> R | None:
    """An optional nested record: None where the key is missing, null or empty."""
    return from_json(kind, value, RecordError) if value else None


def as_stored(value: JsonValue) -> JsonValue:
    """``value`` with every object's keys sorted, as sources.json holds it: what a
    command that read the file has always printed (the envelope keeps key order)."""
    if isinstance(value, dict):
        return {k: as_stored(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [as_stored(v) for v in value]
    return value


# -- the records ---------------------------------------------------------------------


class ReviewItem(Record, frozen=True):
    """Something a curator must look at before ``replace`` (E140 while any is open)."""

    code: str  # a ReviewCode, or an importer's own code
    message: str
    unit_id: str | None = None


class NotImportedItem(Record, frozen=True):
    """An element of an import no unit field holds, and where it is (``file:line``).

    An element the importer could not make complete (values without meanings, a text only
    the source tool renders) is one too, with ``reason`` (the importer's item code),
    ``unit_id`` (the unit it would have been) and ``fix`` (what to write where): it is
    left out of the proposal, so the complete rest is adoptable (docs/importers.md)."""

    element: str
    what: str
    at: str | None
    reason: str | None = None
    unit_id: str | None = None
    fix: str | None = None

    def to_json(self) -> JsonObject:
        out = super().to_json()
        if self.reason is None:  # absent for plain elements: their records stay as they were
            del out["reason"], out["unit_id"], out["fix"]
        return out


class Identifier(Record, frozen=True):
    """A document's first identifier (doi, url, isbn, issn, arxiv, urn)."""

    type: str
    value: str


class DocumentFacts(Record, frozen=True):
    """The document's own metadata as a comparison records it."""

    title: str | None = None
    identifier: Identifier | None = None


class CurrentUnit(Record, frozen=True):
    """A live unit from the source, as the comparison found its file."""

    id: str
    path: str
    file_hash: str
    content_hash: str
    # The manifest's provenance object, kept verbatim: the archive owns its record, and
    # keep turns it into a manual declaration through the archive's own functions.
    provenance: AnyObject

    @property
    def from_document(self) -> bool:
        return self.provenance.get("kind") == "document"


class ProposedEntry(Record, frozen=True):
    """One unit of the proposal, rendered, with the file replace writes it to."""

    id: str
    kind: str
    path: str
    content_hash: str
    markdown: str
    excerpts: tuple[str, ...]


class Dropped(Record, frozen=True):
    """A proposed id replace will not write, and why."""

    id: str
    reason: DropReason


@dataclass(frozen=True, slots=True)
class ImportExtras:
    """What an import did not turn into units (absent for a document source)."""

    not_imported: tuple[NotImportedItem, ...] = ()
    skipped: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Comparison:
    """Local units against one source's proposal; ``revision`` hashes all the rest."""

    revision: str
    created_at: str
    source_id: str
    locator: str
    content_hash: str
    acquisition: str  # sha256 of the acquired bytes
    base_hash: str | None  # the adopted or acknowledged hash it is compared from
    document: DocumentFacts
    current: tuple[CurrentUnit, ...]
    proposed: tuple[ProposedEntry, ...]
    review_items: tuple[ReviewItem, ...]
    retire: tuple[str, ...]
    dropped: tuple[Dropped, ...]
    # path -> the file's hash the comparison depends on (None: the file did not exist)
    affected_files: dict[str, str | None]
    imported: ImportExtras | None = None

    def affected_ids(self) -> set[str]:
        """The ids a decision on this comparison touches: current and proposed."""
        return {c.id for c in self.current} | {p.id for p in self.proposed}

    def changes(self) -> ProposalChanges:
        """What replace would do to each id: derived from the stored fields (never stored,
        so the revision of a comparison does not change with how it is shown)."""
        current = {c.id: c for c in self.current}
        added, changed, identical = [], [], []
        for p in self.proposed:
            old = current.get(p.id)
            if old is None:
                added.append(p.id)
            elif old.content_hash == p.content_hash:
                identical.append(p.id)
            else:
                changed.append(p.id)
        manual = {c.id for c in self.current if c.provenance.get("kind") == "manual"}
        touched = [*changed, *self.retire]
        return ProposalChanges(
            tuple(added),
            tuple(changed),
            tuple(identical),
            tuple(self.retire),
            tuple(uid for uid in touched if uid in manual),
        )

    def body_json(self) -> JsonObject:
        """Everything but ``revision`` and ``created_at``: what the revision hashes."""
        body: JsonObject = {
            "source_id": self.source_id,
            "locator": self.locator,
            "content_hash": self.content_hash,
            "acquisition": self.acquisition,
            "base_hash": self.base_hash,
            "document": self.document.to_json(),
            "current": [c.to_json() for c in self.current],
            "proposed": [p.to_json() for p in self.proposed],
            "review_items": [i.to_json() for i in self.review_items],
            "retire": list(self.retire),
            "dropped": [d.to_json() for d in self.dropped],
            "affected_files": dict(self.affected_files),
        }
        if self.imported is not None:
            body["not_imported"] = [n.to_json() for n in self.imported.not_imported]
            body["skipped"] = dict(self.imported.skipped)
        return body

    def to_json(self) -> JsonObject:
        return {"revision": self.revision, "created_at": self.created_at, **self.body_json()}

    @classmethod
    def from_json(cls, value: JsonValue) -> Comparison:
        obj = _obj(value, "a comparison")
        imported = None
        if "not_imported" in obj:
            imported = ImportExtras(
                field_of(tuple[NotImportedItem, ...], obj, "not_imported", RecordError),
                field_of(dict[str, int], obj, "skipped", RecordError),
            )
        return cls(
            revision=_str(obj, "revision"),
            created_at=_str(obj, "created_at"),
            source_id=_str(obj, "source_id"),
            locator=_str(obj, "locator"),
            content_hash=_str(obj, "content_hash"),
            acquisition=_str(obj, "acquisition"),
            base_hash=_opt_str(obj, "base_hash"),
            document=field_of(DocumentFacts, obj, "document", RecordError),
            current=field_of(tuple[CurrentUnit, ...], obj, "current", RecordError),
            proposed=field_of(tuple[ProposedEntry, ...], obj, "proposed", RecordError),
            review_items=field_of(tuple[ReviewItem, ...], obj, "review_items", RecordError),
            retire=field_of(tuple[str, ...], obj, "retire", RecordError),
            dropped=field_of(tuple[Dropped, ...], obj, "dropped", RecordError),
            affected_files=field_of(dict[str, str | None], obj, "affected_files", RecordError),
            imported=imported,
        )


@dataclass(frozen=True, slots=True)
class Outcome:
    """How far a saved decision got: the snapshot it consolidated to, and whether
    activating it failed."""

    snapshot: str
    activation_error: str | None = None


class ProposalChanges(Record, frozen=True):
    """A comparison's proposal by what replace would do with each id; ``manual`` names the
    changed or retired ids whose unit a curator fixed by hand (provenance ``manual``)."""

    added: tuple[str, ...]
    changed: tuple[str, ...]
    identical: tuple[str, ...]
    retired: tuple[str, ...]
    manual: tuple[str, ...]

    def counts(self) -> JsonObject:
        return {
            "added": len(self.added),
            "changed": len(self.changed),
            "identical": len(self.identical),
            "retired": len(self.retired),
        }


@dataclass(frozen=True, slots=True)
class Decision:
    """The last decision on a source (keep or replace one comparison)."""

    decision: DecisionValue
    revision: str
    content_hash: str
    actor: str
    at: str
    status: DecisionProgress | ConsolidateStatus
    retired: tuple[str, ...]
    outcome: Outcome | None = None  # None until the decision was consolidated
    excluded: tuple[str, ...] = ()  # ids replace left as they were (--exclude)

    def to_json(self) -> JsonObject:
        out: JsonObject = {
            "decision": self.decision.value,
            "revision": self.revision,
            "content_hash": self.content_hash,
            "actor": self.actor,
            "at": self.at,
            "status": self.status.value,
            "retired": list(self.retired),
        }
        if self.excluded:  # absent otherwise: earlier records keep their bytes
            out["excluded"] = list(self.excluded)
        if self.outcome is not None:
            out["snapshot"] = self.outcome.snapshot
            out["activation_error"] = self.outcome.activation_error
        return out

    @classmethod
    def from_json(cls, value: JsonValue) -> Decision:
        obj = _obj(value, "a decision")
        status = _str(obj, "status")
        progress = (
            DecisionProgress.SAVED
            if status == DecisionProgress.SAVED
            else _enum(ConsolidateStatus, obj, "status")
        )
        snapshot = _opt_str(obj, "snapshot")
        return cls(
            decision=_enum(DecisionValue, obj, "decision"),
            revision=_str(obj, "revision"),
            content_hash=_str(obj, "content_hash"),
            actor=_str(obj, "actor"),
            at=_str(obj, "at"),
            status=progress,
            retired=field_of(tuple[str, ...], obj, "retired", RecordError)
            if "retired" in obj
            else (),
            outcome=Outcome(snapshot, _opt_str(obj, "activation_error")) if snapshot else None,
            excluded=field_of(tuple[str, ...], obj, "excluded", RecordError)
            if "excluded" in obj
            else (),
        )


class Retraction(Record, frozen=True):
    note: str
    actor: str
    at: str


@dataclass(frozen=True, slots=True)
class SourceRecord:
    """One source in the registry: identity, what was decided, what is pending."""

    source_id: str
    locator: str
    kind: SourceKind
    first_seen_at: str
    status: SourceStatus = SourceStatus.ACTIVE
    last_hash: str | None = None
    title: str | None = None
    identifier: Identifier | None = None
    adopted_hash: str | None = None
    acknowledged_hash: str | None = None
    comparison: Comparison | None = None
    decision: Decision | None = None
    retraction: Retraction | None = None
    missing_since: str | None = None  # only while status is missing

    @property
    def decided_hashes(self) -> tuple[str | None, str | None]:
        return self.adopted_hash, self.acknowledged_hash

    def to_json(self) -> JsonObject:
        out: JsonObject = {
            "source_id": self.source_id,
            "locator": self.locator,
            "kind": self.kind.value,
            "first_seen_at": self.first_seen_at,
            "status": self.status.value,
            "last_hash": self.last_hash,
            "title": self.title,
            "identifier": self.identifier.to_json() if self.identifier else None,
            "adopted_hash": self.adopted_hash,
            "acknowledged_hash": self.acknowledged_hash,
            "comparison": self.comparison.to_json() if self.comparison else None,
            "decision": self.decision.to_json() if self.decision else None,
            "retraction": self.retraction.to_json() if self.retraction else None,
        }
        if self.missing_since is not None:
            out["missing_since"] = self.missing_since
        return out

    @classmethod
    def from_json(cls, value: JsonValue) -> SourceRecord:
        obj = _obj(value, "a source")
        comparison, decision = obj.get("comparison"), obj.get("decision")
        return cls(
            source_id=_str(obj, "source_id"),
            locator=_str(obj, "locator"),
            kind=_enum(SourceKind, obj, "kind"),
            first_seen_at=_str(obj, "first_seen_at"),
            status=_enum(SourceStatus, obj, "status") if "status" in obj else SourceStatus.ACTIVE,
            last_hash=_opt_str(obj, "last_hash"),
            title=_opt_str(obj, "title"),
            identifier=_maybe(Identifier, obj.get("identifier")),
            adopted_hash=_opt_str(obj, "adopted_hash"),
            acknowledged_hash=_opt_str(obj, "acknowledged_hash"),
            comparison=Comparison.from_json(comparison) if comparison else None,
            decision=Decision.from_json(decision) if decision else None,
            retraction=_maybe(Retraction, obj.get("retraction")),
            missing_since=_opt_str(obj, "missing_since"),
        )


FORMAT = 1


@dataclass(frozen=True, slots=True)
class Registry:
    """sources.json: every source by id.  The map is updated in place with new records
    (each record stays frozen), then written whole."""

    sources: dict[str, SourceRecord] = field(default_factory=dict)

    def to_json(self) -> JsonObject:
        return {"format": FORMAT, "sources": {s: r.to_json() for s, r in self.sources.items()}}

    @classmethod
    def from_json(cls, value: JsonValue) -> Registry:
        obj = _obj(value, "the registry")
        if obj.get("format") != FORMAT:
            raise RecordError("it is not a format-1 source registry")
        sources = _obj(obj.get("sources", {}), "'sources'")
        return cls({sid: SourceRecord.from_json(r) for sid, r in sources.items()})
