"""Schema-aware ranking: a unit whose name the question says in full ranks higher.

BM25 weighs each word on its own; a question that names a unit's concept ("eligible
free rate for K-12", "length of stay"), one of its aliases, a table or column it
applies to ("ward_stays", "research consent") or one of its enum values ("Alameda
County") says more than its words one by one.  Each lexical candidate gains
``NAME_BOOST`` (on the scale where the best BM25 hit scores 1) when every content word
of one of its names is in the question (stemmed, stop words dropped, in the unit's
language).  The levers and what each gained on BIRD's tuning split and on the fixture
set are in docs/retrieval.md ("Schema-aware ranking"); names of fewer than
``MIN_CHARS`` characters (a one-letter code such as ``"N"``) are not names here.
"""

from __future__ import annotations

from collections.abc import Iterator

from evidence_tool.activation.analysis import ANALYSED, analyse
from evidence_tool.activation.records import IndexRecord
from evidence_tool.jsonvalue import JsonValue

NAME_BOOST = 0.25  # chosen on BIRD's tuning split (0.1, 0.25, 0.5, 1.0 measured)
MIN_CHARS = 3


def _strs(value: JsonValue) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def names(record: IndexRecord) -> Iterator[str]:
    """What a unit is called: its title, concepts, aliases (synonyms, variants), the
    tables and columns it applies to (last part of the qualified name), its enum values."""
    applies, payload = record.applies_to, record.payload
    yield record.title
    yield from _strs(applies.get("concepts"))
    for key in ("synonyms", "variants", "aliases"):
        yield from _strs(payload.get(key))
    for qualified in (
        _strs(applies.get("tables"))
        + _strs(applies.get("columns"))
        + _strs(payload.get("tables"))
        + _strs(payload.get("columns"))
    ):
        yield qualified.rsplit(".", 1)[-1]
    column = payload.get("column")
    if isinstance(column, str):
        yield column.rsplit(".", 1)[-1]
    values = payload.get("values")
    if isinstance(values, list):
        for v in values:
            value = v.get("value") if isinstance(v, dict) else None
            if isinstance(value, str):
                yield value


def query_stems(query: str) -> frozenset[str]:
    """The question's content words in every analysed language's stems."""
    return frozenset(t for lang in ANALYSED for t in analyse(query, lang).split())


def named(record: IndexRecord, stems: frozenset[str]) -> bool:
    """Does the question (``stems``) name one of ``record``'s names in full?"""
    for name in names(record):
        if len(name.strip()) < MIN_CHARS:
            continue
        words = analyse(name, record.language).split()
        if words and all(w in stems for w in words):
            return True
    return False
