"""The source registry's records (``.local/sources.json``, SPEC 6): typed, frozen
records (``evidence_tool.record``) whose JSON is their fields.

Inside the package a source, its comparison and its decision are these records; they
meet JSON only at the file.  ``to_json`` writes exactly the keys the registry always
held (the file is rendered with sorted keys, so the bytes are unchanged), and
``Registry.from_json`` checks what a hand-edited file holds, raising ``RecordError``
(naming the field's path) for anything else.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dataclass_field
from enum import StrEnum
from typing import ClassVar

from evidence_tool.archive.local import ConsolidateStatus
from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.record import UNSET, AnyObject, Record, UnsetType, field


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


class NotImportedItem(Record, frozen=True, omit_defaults=True):
    """An element of an import no unit field holds, and where it is (``file:line``).

    An element the importer could not make complete (values without meanings, a text only
    the source tool renders) is one too, with ``reason`` (the importer's item code),
    ``unit_id`` (the unit it would have been) and ``fix`` (what to write where): it is
    left out of the proposal, so the complete rest is adoptable (docs/importers.md)."""

    element: str
    what: str
    at: str | None  # always written, null included
    # Written only for an incomplete element, all three (``unit_id`` and ``fix`` as given,
    # null included): a plain element's record stays as it was.
    reason: str | None = None
    unit_id: str | UnsetType | None = UNSET
    fix: str | UnsetType | None = UNSET


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
    skipped: dict[str, int] = dataclass_field(default_factory=dict)


class Comparison(Record, frozen=True):
    """Local units against one source's proposal; ``revision`` hashes all the rest.  An
    import source also lists what it did not turn into units (``not_imported`` and
    ``skipped``: absent, ``UNSET``, for a document source)."""

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
    not_imported: tuple[NotImportedItem, ...] | UnsetType = UNSET
    skipped: dict[str, int] | UnsetType = UNSET

    @property
    def imported(self) -> ImportExtras | None:
        if isinstance(self.not_imported, UnsetType):
            return None
        return ImportExtras(self.not_imported, self.skipped or {})

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
        body = self.to_json()
        del body["revision"], body["created_at"]
        return body


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
            key: len(getattr(self, key)) for key in ("added", "changed", "identical", "retired")
        }


_STATUSES = frozenset([*DecisionProgress, *ConsolidateStatus])


class Decision(Record, frozen=True, omit_defaults=True):
    """The last decision on a source (keep or replace one comparison).  ``snapshot`` and
    ``activation_error`` say how far it got, set once it was consolidated; ``excluded``
    (ids replace left as they were, --exclude) is written only when it names any, so
    earlier records keep their bytes."""

    decision: DecisionValue
    revision: str
    content_hash: str
    actor: str
    at: str
    # a DecisionProgress until consolidated, then a ConsolidateStatus (msgspec cannot
    # decode a union of two string enums: the value is checked in __post_init__)
    status: str
    retired: tuple[str, ...]
    excluded: tuple[str, ...] = ()
    snapshot: str | UnsetType = UNSET
    activation_error: str | UnsetType | None = UNSET

    def __post_init__(self) -> None:
        if self.status not in _STATUSES:
            raise ValueError(f"'status' is not one of {', '.join(sorted(_STATUSES))}")


class Retraction(Record, frozen=True):
    note: str
    actor: str
    at: str


class SourceRecord(Record, frozen=True):
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
    missing_since: str | UnsetType = UNSET  # only while status is missing

    @property
    def decided_hashes(self) -> tuple[str | None, str | None]:
        return self.adopted_hash, self.acknowledged_hash


FORMAT = 1


class Registry(Record, frozen=True):
    """sources.json: every source by id.  The map is updated in place with new records
    (each record stays frozen), then written whole; ``store.read`` checks the format."""

    sources: dict[str, SourceRecord] = field(default_factory=dict)
    format: int = FORMAT

    _error: ClassVar[type[ValueError]] = (
        RecordError  # a damaged record of sources.json: store.read's E-coded refusal
    )
