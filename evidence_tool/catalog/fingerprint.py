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
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from evidence_tool.catalog.model import Catalog, Column, Relation, split_name
from evidence_tool.unit.hashing import canonical_json

FORMAT = 1


@dataclass(frozen=True)
class Fingerprint:
    kind: str
    search_path: tuple[str, ...]
    fold_case: bool
    relations: dict[str, dict[str, Any]]  # qualified name -> {kind, columns, hash}

    @classmethod
    def of(cls, catalog: Catalog) -> Fingerprint:
        rels = {}
        for r in sorted(catalog.relations, key=lambda r: (r.schema, r.name)):
            rels[r.qualified] = {
                "schema": r.schema,
                "name": r.name,
                "kind": r.kind,
                "columns": [[c.name, c.type] for c in r.columns],
                "hash": r.fingerprint,
            }
        return cls(catalog.kind, tuple(catalog.search_path), catalog.fold_case, rels)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "kind": self.kind,
            "search_path": list(self.search_path),
            "fold_case": self.fold_case,
            "relations": self.relations,
        }

    @cached_property
    def data(self) -> bytes:
        """The canonical bytes, as the archive stores them."""
        return canonical_json(self.to_json())

    @cached_property
    def digest(self) -> str:
        """The whole-catalog hash: sha256 of the canonical bytes."""
        return hashlib.sha256(self.data).hexdigest()

    def record(self) -> dict[str, Any]:
        """What a snapshot manifest says about the catalog it was checked against."""
        return {"fingerprint": self.digest, "kind": self.kind, "relations": len(self.relations)}

    def catalog(self, model: type[Catalog] = Catalog) -> Catalog:
        """The recorded catalog as a model again, to resolve names as they were."""
        rels = []
        for qualified, r in self.relations.items():
            schema, name = _names(qualified, r)
            cols = tuple(Column(str(n), str(t)) for n, t in r["columns"])
            rels.append(Relation(schema, name, str(r["kind"]), cols))
        return model(self.kind, tuple(rels), self.search_path, self.fold_case)


def _names(qualified: str, r: dict[str, Any]) -> tuple[str, str]:
    if "schema" in r and "name" in r:
        return str(r["schema"]), str(r["name"])
    parts = split_name(qualified) or ["", qualified]
    return parts[0], parts[-1]


def parse_fingerprint(data: bytes) -> Fingerprint:
    """A stored fingerprint; ValueError when the bytes are not one."""
    value = json.loads(data)
    if not isinstance(value, dict) or value.get("format") != FORMAT:
        raise ValueError("not a catalog fingerprint of format 1")
    rels = value.get("relations")
    if not isinstance(rels, dict):
        raise ValueError("a catalog fingerprint without relations")
    return Fingerprint(
        str(value["kind"]),
        tuple(str(s) for s in value.get("search_path", ["public"])),
        bool(value.get("fold_case", False)),
        rels,
    )
