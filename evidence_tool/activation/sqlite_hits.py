"""The sqlite index's hits: BM25 rows re-ranked by name, fused with dense ones, and
the fields each matched."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from evidence_tool.activation.analysis import analyse
from evidence_tool.activation.fusion import DEFAULT as DEFAULT_FUSION
from evidence_tool.activation.fusion import Fusion, fuse
from evidence_tool.activation.names import Namer
from evidence_tool.activation.records import (
    Hit,
    IndexRecord,
    Scoring,
)
from evidence_tool.embedding.text import flatten as _flatten


class RowSource(Protocol):
    """Where a row's record, marked columns and matched fields are worked out when first
    asked (postings.py: a search boosts 100 rows and shows 10)."""

    def record(self) -> str: ...

    def marked(self) -> tuple[str, str, str]: ...

    def matched(self, record: IndexRecord) -> list[str]: ...


@dataclass(frozen=True)
class LexicalRow:
    """One BM25 hit: the unit's JSON record, its BM25 (higher is better) and its three
    FTS columns with the matched words marked by ``\x01...\x02``."""

    raw: str  # the record ("" when ``source`` reads it: use ``record``)
    bm25: float
    title: str
    body: str
    applies_to: str
    rank: float = 0.0  # BM25 over the best hit's, plus the name boost (names.py)
    source: RowSource | None = None

    @property
    def record(self) -> str:
        return self.source.record() if self.source is not None else self.raw

    @property
    def marked(self) -> tuple[str, str, str]:
        if self.source is not None:
            return self.source.marked()
        return (self.title, self.body, self.applies_to)

    def matched(self, record: IndexRecord, analyzer: str) -> list[str]:
        """The fields of ``record`` the row matched (``_matched``; the source's own)."""
        if self.source is not None:
            return self.source.matched(record)
        return _matched(record, analyzer, self.title, self.body, self.applies_to)

    def ranked(self, rank: float) -> LexicalRow:
        # Not dataclasses.replace: it inspects the fields on every call (100 rows a search).
        return LexicalRow(
            self.raw, self.bm25, self.title, self.body, self.applies_to, rank, self.source
        )


def _boosted(
    lexical: dict[str, LexicalRow], query: str, boost: float, revision: str
) -> dict[str, LexicalRow]:
    """``lexical`` re-ranked: each row's BM25 over the best one's, plus ``boost`` when the
    question names the unit in full (names.py); best first, ties by id (postings.py's
    rows come ranked alike, ``Postings.lexical``)."""
    best = max((row.bm25 for row in lexical.values()), default=0.0)
    namer = Namer(query, boost)
    out = []
    for uid, row in lexical.items():
        base = row.bm25 / best if best > 0 else 0.0
        bonus = namer.bonus(_record(row.record, revision)) if boost else 0.0
        out.append((uid, row.ranked(base + bonus)))
    out.sort(key=lambda item: (-item[1].rank, item[0]))
    return dict(out)


def _fused_hits(
    lexical: dict[str, LexicalRow],
    dense: list[tuple[str, float]],
    records: dict[str, str],
    limit: int,
    revision: str,
    mode: str,
    analyzer: str = "stem",
    fusion: Fusion = DEFAULT_FUSION,
) -> list[Hit]:
    """Hits of a ``dense`` or ``hybrid`` search, each with its BM25 (None: no query word)
    and cosine similarity.  A dense hit scores its cosine; a hybrid hit its fused score
    (0..1, ``fusion``): scores that say how close, not where in the list."""
    similarity = dict(dense)
    if mode == "dense":
        order = list(dense)
    else:
        order = fuse([(uid, row.rank) for uid, row in lexical.items()], dense, fusion)
    hits = []
    for uid, score in order[:limit]:
        row = lexical.get(uid)
        r = _record(row.record if row else records[uid], revision)
        cosine = round(similarity[uid], 4) if uid in similarity else None
        matched = row.matched(r, analyzer) if row else []
        bm25 = row.bm25 if row else None
        hits.append(Hit.of(r, round(score, 4), matched, Scoring.FUSED, bm25, cosine))
    return hits


def _record(record_json: str, revision: str) -> IndexRecord:
    """The unit's record as the index stores it, with the revision the index serves."""
    return IndexRecord({"revision": revision, **json.loads(record_json)})


def _hit(row: LexicalRow, best: float, revision: str, analyzer: str = "stem") -> Hit:
    r = _record(row.record, revision)
    score = round(row.rank / best, 4) if best > 0 else 0.0
    return Hit.of(r, score, row.matched(r, analyzer), Scoring.BM25, row.bm25)


_MARKED = re.compile("\x01(.*?)\x02", re.S)


def _holds(text: str, words: set[str]) -> bool:
    """Does ``text`` hold one of ``words`` as a whole word (``_`` and ``.`` separate)?"""
    return any(re.search(rf"(?<![^\W_]){re.escape(w)}(?![^\W_])", text, re.I) for w in words if w)


# A server shows the same units' fields again and again: their analysis is kept (bounded).
@functools.lru_cache(maxsize=4096)
def _analysed(text: str, language: str) -> frozenset[str]:
    return frozenset(analyse(text, language).split())


def _matched(
    record: IndexRecord, analyzer: str, title: str, body: str, applies_to: str
) -> list[str]:
    """The fields a hit matched: ``title``, payload fields (``rule``, ``sql``, ...) and
    ``applies_to.*`` lists, named as in the unit's JSON record."""
    out = ["title"] if "\x01" in title else []
    lang = record.language
    holds: Callable[[str, set[str]], bool] = (
        (lambda text, stems: not stems.isdisjoint(_analysed(text, lang)))
        if analyzer == "stem"
        else _holds
    )
    for column, section, prefix in (
        (body, record.payload, ""),
        (applies_to, record.applies_to, "applies_to."),
    ):
        words = set(_MARKED.findall(column))
        out += [
            prefix + key
            for key, value in section.items()
            if words and holds("\n".join(_flatten(value)), words)
        ]
    return out
