"""The index record of a unit: what an index (sqlite, qdrant, a command's corpus) is
built from.

The archive hands each unit as its export record (``Snapshot.records()``, the JSON of
``tht export``).  An index reads a few fields of 50,000 of them on a full build, so the
record is a typed view over that parsed object (one slot, no copy), not a dataclass
built field by field; ``to_json`` gives the object back unchanged for the files and
payloads that store it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum

from evidence_tool.errors import EvidenceWarning
from evidence_tool.jsonvalue import JsonObject, JsonValue, View, json_value

__all__ = ["Hit", "IndexRecord", "Scoring", "SearchResult", "index_records"]


def _obj(value: JsonValue) -> JsonObject:
    return value if isinstance(value, dict) else {}


def _strs(value: JsonValue) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


class _Str:
    """A string field of the record ("" when absent or not a string)."""

    def __init__(self, key: str) -> None:
        self.key = key

    def __get__(self, record: IndexRecord, owner: object = None) -> str:
        value = record._raw.get(self.key)
        return value if isinstance(value, str) else ""


class IndexRecord:
    """One unit as the index sees it: typed reads over its export record."""

    __slots__ = ("_raw",)

    def __init__(self, raw: JsonObject) -> None:
        self._raw = raw

    def to_json(self) -> JsonObject:  # JSON boundary: the export line, the stored record
        return self._raw

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IndexRecord) and other._raw == self._raw

    __hash__ = None  # type: ignore[assignment]  # a view over a mutable object

    def __repr__(self) -> str:
        return f"IndexRecord({self.id!r})"

    id = _Str("id")
    kind = _Str("kind")
    language = _Str("language")
    title = _Str("title")
    path = _Str("path")
    content_hash = _Str("content_hash")

    @property
    def provenance(self) -> JsonValue:
        """The provenance object as the manifest keeps it (None before initialization)."""
        return self._raw.get("provenance")

    @property
    def provenance_kind(self) -> str | None:
        value = self._raw.get("provenance_kind")
        return value if isinstance(value, str) else None

    @property
    def metadata(self) -> JsonObject:
        """The unit's metadata, as the unit format writes it (indexed as text)."""
        return _obj(self._raw.get("metadata"))

    @property
    def payload(self) -> JsonObject:
        """The unit's kind-specific payload, as the unit format writes it (indexed as text)."""
        return _obj(self._raw.get("payload"))

    @property
    def purposes(self) -> list[str]:
        return _strs(self.metadata.get("purposes"))

    @property
    def applies_to(self) -> JsonObject:
        return _obj(self.metadata.get("applies_to"))

    def stored(self) -> JsonObject:  # JSON boundary: the index's copy holds no revision
        """The record without its revision (the index's meta table holds that)."""
        return {k: v for k, v in self._raw.items() if k != "revision"}


def index_records(records: Iterable[IndexRecord | JsonObject]) -> Iterator[IndexRecord]:
    """Typed records from the archive's export records (or typed ones, passed through)."""
    for r in records:
        yield r if isinstance(r, IndexRecord) else IndexRecord(r)


class Scoring(StrEnum):
    """Which raw scores a hit carries beside its scaled ``score`` (the keys of its JSON)."""

    BM25 = "bm25"  # sqlite, bm25 mode: "bm25"
    FUSED = "fused"  # sqlite, dense or hybrid: "bm25" and "dense" (None where unranked)
    POINT = "point"  # qdrant: neither


@dataclass(frozen=True, slots=True)
class Hit(View):
    """One ranked unit of a search; ``score`` is scaled so the best hit scores 1.  Its
    record rides in its JSON by reference (``IndexRecord.to_json``), not copied."""

    _keys = (
        "id",
        "kind",
        "language",
        "title",
        "score",
        "*_bm25",
        "matched",
        "path",
        "provenance",
        "purposes",
        "record",
        "*_dense",
    )

    id: str
    kind: str
    language: str
    title: str
    score: float
    matched: tuple[str, ...]
    path: str
    provenance: str | None
    purposes: tuple[str, ...]
    record: IndexRecord
    scoring: Scoring = Scoring.POINT
    bm25: float | None = None
    dense: float | None = None

    @classmethod
    def of(
        cls,
        record: IndexRecord,
        score: float,
        matched: Iterable[str],
        scoring: Scoring,
        bm25: float | None,
        dense: float | None = None,
    ) -> Hit:
        """The hit of an index's ``record``: its fields read from the record itself."""
        return cls(
            record.id,
            record.kind,
            record.language,
            record.title,
            score,
            tuple(matched),
            record.path,
            record.provenance_kind,
            tuple(record.purposes),
            record,
            scoring,
            bm25,
            dense,
        )

    @property
    def _bm25(self) -> JsonObject:  # bm25 and fused hits name their BM25 (None: unranked)
        return {} if self.scoring is Scoring.POINT else {"bm25": self.bm25}

    @property
    def _dense(self) -> JsonObject:
        return {"dense": self.dense} if self.scoring is Scoring.FUSED else {}


@dataclass(frozen=True, slots=True)
class SearchResult(View):
    """The answer of a search: the revision searched, the mode and the hits, best first.

    ``rankings`` is None for a backend that does not say which rankings served (qdrant):
    then ``dense_path`` and ``warnings`` are not part of its JSON either."""

    _keys = ("revision", "query", "mode", "*_ranked", "hits", "*_warned")

    revision: str
    query: str
    mode: str
    hits: tuple[Hit, ...]
    rankings: tuple[str, ...] | None = None
    dense_path: str | None = None
    warnings: tuple[EvidenceWarning, ...] = ()

    def ids(self) -> list[str]:
        return [h.id for h in self.hits]

    @property
    def _ranked(self) -> JsonObject:  # a backend that says which rankings served
        if self.rankings is None:
            return {}
        return {"rankings": list(self.rankings), "dense_path": self.dense_path}

    @property
    def _warned(self) -> JsonObject:
        return {} if self.rankings is None else {"warnings": json_value(self.warnings)}
