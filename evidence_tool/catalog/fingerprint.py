"""The catalog's fingerprint: what a consolidation was checked against, kept to show drift.

A fingerprint is canonical JSON: the catalog kind, the search path, and per relation
(by qualified name, sorted) its kind, its columns and types in order, and the sha256
of those.  It holds the columns themselves, not only their hashes, so that a later
``catalog diff`` can say which column went or changed type.  Its own sha256 is the
whole-catalog hash; the archive stores it as a content-addressed object.
"""

from __future__ import annotations

import hashlib
import json
from functools import cached_property

from evidence_tool.catalog.model import Catalog, Column, Relation, split_name
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.record import Record
from evidence_tool.unit.hashing import canonical_json

FORMAT = 1


class RelationPrint(Record, frozen=True, omit_defaults=True, kw_only=True):
    """One relation as a fingerprint records it; ``schema`` and ``name`` are None (left
    out) in a fingerprint written before they were recorded (the qualified name says
    them)."""

    schema: str | None = None
    name: str | None = None
    kind: str
    columns: tuple[tuple[str, str], ...]  # (name, type) in order
    hash: str

    @classmethod
    def of(cls, r: Relation) -> RelationPrint:
        columns = tuple((c.name, c.type) for c in r.columns)
        return cls(schema=r.schema, name=r.name, kind=r.kind, columns=columns, hash=r.fingerprint)

    def names(self, qualified: str) -> tuple[str, str]:
        """(schema, name): recorded, else split from the qualified name."""
        if self.schema is not None and self.name is not None:
            return self.schema, self.name
        parts = split_name(qualified) or ["", qualified]
        return parts[0], parts[-1]


class Fingerprint(Record, frozen=True, kw_only=True, dict=True):
    """The fingerprint's JSON, ``format`` first; ``dict=True`` lets it cache its bytes
    and digest."""

    format: int = FORMAT
    kind: str
    search_path: tuple[str, ...] = ("public",)
    fold_case: bool = False
    relations: dict[str, RelationPrint]  # by qualified name, sorted

    @classmethod
    def of(cls, catalog: Catalog) -> Fingerprint:
        rels = {
            r.qualified: RelationPrint.of(r)
            for r in sorted(catalog.relations, key=lambda r: (r.schema, r.name))
        }
        return cls(
            kind=catalog.kind,
            search_path=tuple(catalog.search_path),
            fold_case=catalog.fold_case,
            relations=rels,
        )

    @cached_property
    def data(self) -> bytes:
        """The canonical bytes, as the archive stores them."""
        return canonical_json(self.to_json())

    @cached_property
    def digest(self) -> str:
        """The whole-catalog hash: sha256 of the canonical bytes."""
        return hashlib.sha256(self.data).hexdigest()

    def record(self) -> JsonObject:
        """What a snapshot manifest says about the catalog it was checked against (the
        manifest's catalog object, written by the archive as it is)."""
        return {"fingerprint": self.digest, "kind": self.kind, "relations": len(self.relations)}

    def catalog(self, model: type[Catalog] = Catalog) -> Catalog:
        """The recorded catalog as a model again, to resolve names as they were."""
        rels = []
        for qualified, r in self.relations.items():
            schema, name = r.names(qualified)
            cols = tuple(Column(n, t) for n, t in r.columns)
            rels.append(Relation(schema, name, r.kind, cols))
        return model(self.kind, tuple(rels), self.search_path, self.fold_case)


def parse_fingerprint(data: bytes) -> Fingerprint:
    """A stored fingerprint; ValueError (naming the key) when the bytes are not one."""
    fp = Fingerprint.from_json(json.loads(data))
    if fp.format != FORMAT:
        raise ValueError(f"not a catalog fingerprint of format {FORMAT}")
    return fp
