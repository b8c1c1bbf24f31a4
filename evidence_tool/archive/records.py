"""Typed records of a manifest's declarations and deletions (SPEC.md 5.1, 5.2).

Manifests stay plain JSON objects (their bytes are spliced line by line and
compared by identity in derive.py); these records are how code builds and reads
one entry's parts. Each has one ``to_json`` / ``from_json`` pair, checked
against ``schemas/manifest-records.schema.json`` by tests/archive/test_records.py.
``to_json`` writes plain ``str`` values, never enum members, so the bytes and
the YAML mirror's fast path are those of a hand-built dict.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from evidence_tool.jsonvalue import JsonObject, JsonValue


class DeclarationKind(StrEnum):
    MANUAL = "manual"
    DOCUMENT = "document"


class DeletionReason(StrEnum):
    REMOVED = "removed"  # the file was deleted (or `tht ... remove`)
    RETIRED = "retired-by-replace"  # a `decide replace` retired the unit


# Plain strings read once: an enum's .value costs microseconds, and manual() runs for
# every new unit of a 50,000-unit initialize.
_MANUAL, _DOCUMENT = DeclarationKind.MANUAL.value, DeclarationKind.DOCUMENT.value
_REASON_TEXT = {reason: reason.value for reason in DeletionReason}


def text(value: JsonObject, key: str) -> str:
    """A required string field of a record read from JSON (a reader narrows, never trusts)."""
    found = value[key]
    if not isinstance(found, str):
        raise ValueError(f"{key!r} must be a string, not {type(found).__name__}")
    return found


def optional_text(value: JsonObject, key: str) -> str | None:
    found = value.get(key)
    if found is not None and not isinstance(found, str):
        raise ValueError(f"{key!r} must be a string or null, not {type(found).__name__}")
    return found


def texts(value: JsonValue) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("expected an array of strings")
    return tuple(v for v in value if isinstance(v, str))


def json_object(value: JsonValue) -> JsonObject:
    if not isinstance(value, dict):
        raise ValueError(f"expected an object, not {type(value).__name__}")
    return value


@dataclass(frozen=True, slots=True)
class DocumentDeclaration:
    """The unit says what excerpts of an acquired source say (or did: as ``original``).

    ``declared_at`` and ``actor`` are set only on declarations migrated from v3 files.
    """

    source_id: str
    source_path: str
    source_hash: str
    excerpts: tuple[str, ...]
    declared_at: str | None = None
    actor: str | None = None

    def to_json(self) -> JsonObject:  # JSON boundary: a manifest object
        out: JsonObject = {
            "kind": _DOCUMENT,
            "source_id": self.source_id,
            "source_path": self.source_path,
            "source_hash": self.source_hash,
            "excerpts": list[JsonValue](self.excerpts),
        }
        if self.declared_at is not None:
            out["declared_at"] = self.declared_at
        if self.actor is not None:
            out["actor"] = self.actor
        return out

    @classmethod
    def from_json(cls, value: JsonObject) -> DocumentDeclaration:  # JSON boundary
        return cls(
            source_id=text(value, "source_id"),
            source_path=text(value, "source_path"),
            source_hash=text(value, "source_hash"),
            excerpts=texts(value["excerpts"]),
            declared_at=optional_text(value, "declared_at"),
            actor=optional_text(value, "actor"),
        )

    def lineage(self) -> DocumentDeclaration:
        """What is kept under ``original`` when the unit's wording changes: no who/when."""
        return DocumentDeclaration(
            self.source_id, self.source_path, self.source_hash, self.excerpts
        )


@dataclass(frozen=True, slots=True)
class ManualDeclaration:
    """A person vouches for the unit; ``original`` keeps the document it came from."""

    curator: str
    declared_at: str
    original: DocumentDeclaration | None = None

    def to_json(self) -> JsonObject:  # JSON boundary: a manifest object
        out: JsonObject = {
            "kind": _MANUAL,
            "curator": self.curator,
            "declared_at": self.declared_at,
        }
        if self.original is not None:
            out["original"] = self.original.to_json()
        return out

    @classmethod
    def from_json(cls, value: JsonObject) -> ManualDeclaration:  # JSON boundary
        original = value.get("original")
        return cls(
            curator=text(value, "curator"),
            declared_at=text(value, "declared_at"),
            original=DocumentDeclaration.from_json(json_object(original)) if original else None,
        )


Declaration = ManualDeclaration | DocumentDeclaration


def declaration_from_json(value: JsonObject) -> Declaration:  # JSON boundary
    """The record of a manifest's ``provenance`` object, by its ``kind``."""
    if value["kind"] == _DOCUMENT:
        return DocumentDeclaration.from_json(value)
    if value["kind"] == _MANUAL:
        return ManualDeclaration.from_json(value)
    raise ValueError(f"unknown declaration kind {value['kind']!r}")


@dataclass(frozen=True, slots=True)
class CitedSources:
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


@dataclass(frozen=True, slots=True)
class Deletion:
    """An id that left the curated tree; it stays reserved (SPEC.md 5.2)."""

    id: str
    deleted_at: str
    last_revision: str
    actor: str
    reason: DeletionReason
    last_content_hash: str
    source_id: str | None

    def to_json(self) -> JsonObject:  # JSON boundary: a manifest object
        return {
            "id": self.id,
            "deleted_at": self.deleted_at,
            "last_revision": self.last_revision,
            "actor": self.actor,
            "reason": _REASON_TEXT[self.reason],
            "last_content_hash": self.last_content_hash,
            "source_id": self.source_id,
        }

    @classmethod
    def from_json(cls, value: JsonObject) -> Deletion:  # JSON boundary
        return cls(
            id=text(value, "id"),
            deleted_at=text(value, "deleted_at"),
            last_revision=text(value, "last_revision"),
            actor=text(value, "actor"),
            reason=DeletionReason(text(value, "reason")),
            last_content_hash=text(value, "last_content_hash"),
            source_id=optional_text(value, "source_id"),
        )


class ClosedBy(StrEnum):
    """Why a review item closed at a consolidation."""

    RETIREMENT = "retirement"  # its unit was deleted or retired
    VISIBLE_CHANGE = "visible change"  # its unit's content changed
    RESOLVED = "resolved"  # 'review resolve' closed it with a note


@dataclass(frozen=True, slots=True)
class ClosedItem:
    """A review item a consolidation closed (recorded in the event log and its result).

    ``item`` is the review item as recorded (a JSON object: it is shown as written)."""

    id: str
    item: JsonObject
    closed_by: ClosedBy
    note: str | None = None

    def to_json(self) -> JsonObject:  # JSON boundary: the event log, --json
        out: JsonObject = {"id": self.id, "item": self.item, "closed_by": self.closed_by.value}
        if self.closed_by is ClosedBy.RESOLVED:
            out["note"] = self.note
        return out

    @classmethod
    def from_json(cls, value: JsonObject) -> ClosedItem:  # JSON boundary
        return cls(
            id=text(value, "id"),
            item=json_object(value["item"]),
            closed_by=ClosedBy(text(value, "closed_by")),
            note=optional_text(value, "note"),
        )
