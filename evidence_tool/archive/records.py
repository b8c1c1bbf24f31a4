"""Typed records of a manifest's declarations and deletions (SPEC.md 5.1, 5.2).

Manifests stay plain JSON objects (their bytes are spliced line by line and
compared by identity in derive.py); these records are how code builds and reads
one entry's parts.  Their JSON comes from their fields (evidence_tool/record.py),
checked against ``schemas/manifest-records.schema.json`` by tests/archive/test_records.py
and against the bytes they wrote before by tests/test_record_golden.py.  A declaration's
``kind`` is its tag (written first); ``to_json`` writes plain ``str`` values, never enum
members, so the bytes and the YAML mirror's fast path are those of a hand-built dict.
"""

from __future__ import annotations

from enum import StrEnum

from msgspec.structs import force_setattr

from evidence_tool.jsonvalue import JsonObject
from evidence_tool.record import UNSET, AnyObject, Record, UnsetType, from_json


class DeclarationKind(StrEnum):
    MANUAL = "manual"
    DOCUMENT = "document"


class DeletionReason(StrEnum):
    REMOVED = "removed"  # the file was deleted (or `tht ... remove`)
    RETIRED = "retired-by-replace"  # a `decide replace` retired the unit


# Plain strings read once: an enum's .value costs microseconds, and cited_sources() runs
# for every unit of a 50,000-unit refresh.
_DOCUMENT = DeclarationKind.DOCUMENT.value


class DocumentDeclaration(Record, frozen=True, omit_defaults=True, tag_field="kind", tag=_DOCUMENT):
    """The unit says what excerpts of an acquired source say (or did: as ``original``).

    ``declared_at`` and ``actor`` are set only on declarations migrated from v3 files.
    """

    source_id: str
    source_path: str
    source_hash: str
    excerpts: tuple[str, ...]
    declared_at: str | None = None
    actor: str | None = None

    def lineage(self) -> DocumentDeclaration:
        """What is kept under ``original`` when the unit's wording changes: no who/when."""
        return DocumentDeclaration(
            self.source_id, self.source_path, self.source_hash, self.excerpts
        )


class ManualDeclaration(
    Record, frozen=True, omit_defaults=True, tag_field="kind", tag=DeclarationKind.MANUAL.value
):
    """A person vouches for the unit; ``original`` keeps the document it came from."""

    curator: str
    declared_at: str
    original: DocumentDeclaration | None = None


Declaration = ManualDeclaration | DocumentDeclaration


def declaration_from_json(value: JsonObject) -> Declaration:  # JSON boundary
    """The record of a manifest's ``provenance`` object, by its ``kind``."""
    return from_json(Declaration, value)  # type: ignore[arg-type]  # a union, not a class


class CitedSources(Record, frozen=True):
    """The sources a declaration names: its document's (``source``) and its lineage's
    (``original``, kept by a manual declaration); None where it names none."""

    source: str | None
    original: str | None


def cited_sources(value: JsonObject) -> CitedSources:  # JSON boundary: a manifest object
    """Read without building the declaration's record: refresh reads every unit's."""
    source = value.get("source_id") if value.get("kind") == _DOCUMENT else None
    original = value.get("original")
    lineage = original.get("source_id") if isinstance(original, dict) else None
    return CitedSources(
        source if isinstance(source, str) and source else None,
        lineage if isinstance(lineage, str) and lineage else None,
    )


class Deletion(Record, frozen=True):
    """An id that left the curated tree; it stays reserved (SPEC.md 5.2)."""

    id: str
    deleted_at: str
    last_revision: str
    actor: str
    reason: DeletionReason
    last_content_hash: str
    source_id: str | None


class ClosedBy(StrEnum):
    """Why a review item closed at a consolidation."""

    RETIREMENT = "retirement"  # its unit was deleted or retired
    VISIBLE_CHANGE = "visible change"  # its unit's content changed
    RESOLVED = "resolved"  # 'review resolve' closed it with a note


class ClosedItem(Record, frozen=True):
    """A review item a consolidation closed (recorded in the event log and its result).

    ``item`` is the review item as recorded (a JSON object: it is shown as written).
    Only a ``resolved`` item has a ``note`` (None where none was given); on the others it
    is ``UNSET`` and its key is not written."""

    id: str
    item: AnyObject
    closed_by: ClosedBy
    note: str | UnsetType | None = UNSET

    def __post_init__(self) -> None:
        resolved = self.closed_by is ClosedBy.RESOLVED
        if resolved and self.note is UNSET:
            force_setattr(self, "note", None)
        elif not resolved and self.note is not UNSET:
            force_setattr(self, "note", UNSET)
