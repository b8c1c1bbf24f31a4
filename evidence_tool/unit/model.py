"""Typed units: metadata, one payload class per kind, and the unit itself.

Instances are immutable and compare by value, so ``parse(render(u)) == u`` is a
plain equality.  ``to_json`` gives the canonical JSON shape hashed into
``content_hash``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import ClassVar

from evidence_tool.jsonvalue import JsonObject


@dataclass(frozen=True)
class AppliesTo:
    concepts: tuple[str, ...] = ()
    tables: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()

    def is_empty(self) -> bool:
        return not (self.concepts or self.tables or self.columns)

    def parts(self) -> list[tuple[str, tuple[str, ...]]]:
        """The lists given (none empty), by key, in the order they are written."""
        keyed = (("concepts", self.concepts), ("tables", self.tables), ("columns", self.columns))
        return [(k, v) for k, v in keyed if v]

    def to_json(self) -> JsonObject:
        return {k: [*v] for k, v in self.parts()}


@dataclass(frozen=True)
class Metadata:
    id: str
    kind: str
    language: str
    purposes: tuple[str, ...]
    applies_to: AppliesTo = field(default_factory=AppliesTo)
    schema_version: int = 4

    def to_json(self) -> JsonObject:
        out: JsonObject = {
            "schema_version": self.schema_version,
            "id": self.id,
            "kind": self.kind,
            "language": self.language,
            "purposes": list(self.purposes),
        }
        if not self.applies_to.is_empty():
            out["applies_to"] = self.applies_to.to_json()
        return out


class Payload:
    """Base of the eight payload classes; field names follow ``fields.FIELDS``."""

    kind: ClassVar[str]

    def to_json(self) -> JsonObject:
        out: JsonObject = {}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if isinstance(value, tuple):
                value = [v.to_json() if isinstance(v, EnumValue) else v for v in value]
            out[f.name] = value
        return out


@dataclass(frozen=True)
class DomainPayload(Payload):
    kind: ClassVar[str] = "domain"
    rule: str


@dataclass(frozen=True)
class GlossaryPayload(Payload):
    kind: ClassVar[str] = "glossary"
    definition: str
    synonyms: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()


@dataclass(frozen=True)
class EnumValue:
    value: str
    meaning: str = ""

    def to_json(self) -> dict[str, str]:
        return {"value": self.value, "meaning": self.meaning}


@dataclass(frozen=True)
class EnumPayload(Payload):
    kind: ClassVar[str] = "enum"
    column: str
    values: tuple[EnumValue, ...]


@dataclass(frozen=True)
class ExamplePayload(Payload):
    kind: ClassVar[str] = "example"
    question: str
    interpretation: str


@dataclass(frozen=True)
class MappingPayload(Payload):
    kind: ClassVar[str] = "mapping"
    concept: str
    tables: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class NormalizationPayload(Payload):
    kind: ClassVar[str] = "normalization"
    input: str
    output: str
    rule: str


@dataclass(frozen=True)
class FormulaPayload(Payload):
    kind: ClassVar[str] = "formula"
    concept: str
    sql: str
    columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReferencePayload(Payload):
    kind: ClassVar[str] = "reference"
    url: str
    label: str
    description: str


# Each kind's class, in the order of KINDS (the order they are declared above).
PAYLOAD_CLASSES: dict[str, type[Payload]] = {cls.kind: cls for cls in Payload.__subclasses__()}


@dataclass(frozen=True)
class Unit:
    metadata: Metadata
    title: str
    payload: Payload

    @property
    def id(self) -> str:
        return self.metadata.id

    @property
    def kind(self) -> str:
        return self.metadata.kind

    @property
    def language(self) -> str:
        return self.metadata.language

    def to_json(self) -> JsonObject:
        """The canonical JSON shape: what a unit says, independent of formatting."""
        return {
            "metadata": self.metadata.to_json(),
            "title": self.title,
            "payload": self.payload.to_json(),
        }

    @cached_property
    def content_hash(self) -> str:
        # Cached (outside the frozen fields, so equality ignores it): scan and derive both ask.
        from evidence_tool.unit.hashing import content_hash

        return content_hash(self)
