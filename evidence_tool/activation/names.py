"""Schema-aware ranking: a unit whose name the question says in full ranks higher.

BM25 weighs each word on its own; a question that names a unit's concept ("eligible
free rate for K-12", "length of stay"), one of its aliases, a table or column it
applies to ("ward_stays", "research consent"), one of its enum values ("Alameda
County") or a glossary term's short definition ("K-12": "students in grades 1 through
12") says more than its words one by one.  Each lexical candidate gains
``NAME_BOOST`` (on the scale where the best BM25 hit scores 1) when every content word
of one of its names is in the question (stemmed, stop words dropped, in the unit's
language).  The levers and what each gained on BIRD's tuning split and on the fixture
set are in docs/retrieval.md ("Schema-aware ranking"); names of fewer than
``MIN_CHARS`` characters (a one-letter code such as ``"N"``) are not names here.

Values work the same way: a unit whose SQL or definition quotes a value the question
says as whole words (``County = 'Alameda'`` for "schools in Alameda County"), or that
holds a value the question quotes ('IrishStat'), gains ``LITERAL_BOOST``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from evidence_tool.activation.analysis import ANALYSED, analyse, fold
from evidence_tool.activation.records import IndexRecord
from evidence_tool.embedding.text import flatten
from evidence_tool.jsonvalue import JsonValue

NAME_BOOST = 0.25  # chosen on BIRD's tuning split (0.1, 0.25, 0.5, 1.0 measured)
MIN_CHARS = 3
DEFINITION_WORDS = 6  # chosen on BIRD's tuning split (3, 6, 10 measured: 6 and 10 alike)


def _strs(value: JsonValue) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def names(record: IndexRecord) -> Iterator[str]:
    """What a unit is called: its title, concepts, aliases (synonyms, variants), the
    tables and columns it applies to (last part of the qualified name), a short
    definition (``DEFINITION_WORDS`` words at most), its enum values."""
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
    definition = payload.get("definition")
    if isinstance(definition, str) and len(definition.split()) <= DEFINITION_WORDS:
        yield definition  # a short definition is the term's other name ("K-12": "grades 1-12")
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


# A server boosts the same units' names search after search: their analysis is kept
# (bounded; names are short), 3 of a search's 5 ms of CPU at 10,000 units otherwise.
@functools.lru_cache(maxsize=65536)
def _name_words(name: str, language: str) -> tuple[str, ...]:
    return tuple(analyse(name, language).split())


_WORD = re.compile(r"[^\W_]+", re.UNICODE)  # words as the index splits them
_QUOTED = re.compile(r"'([^']{2,80})'|\"([^\"]{2,80})\"|`([^`]{2,80})`")


def _folded_words(text: str) -> str:
    """``text`` as its folded words joined by single spaces, padded: a phrase test."""
    return " " + " ".join(fold(w) for w in _WORD.findall(text)) + " "


def quoted(text: str) -> list[str]:
    """The quoted strings of ``text`` ('IrishStat', "Harlan", `K-12`), as folded phrases."""
    out = []
    for match in _QUOTED.finditer(text):
        phrase = _folded_words(next(g for g in match.groups() if g)).strip()
        if len(phrase) >= MIN_CHARS:
            out.append(phrase)
    return out


def literals(record: IndexRecord) -> list[str]:
    """The values a unit's SQL or definitions quote (``DisplayName = 'chl'``): enum values."""
    return [q for text in flatten(record.payload) for q in quoted(text)]


LITERAL_BOOST = 0.25  # chosen on BIRD's tuning split (0.25, 0.5 measured)


class Namer:
    """The name and value boosts of one question, applied to each lexical candidate."""

    def __init__(self, question: str, boost: float) -> None:
        self.boost = boost
        self.stems = query_stems(question) if boost else frozenset()
        self.asked = quoted(question)
        self.said = _folded_words(question)  # once, not once per candidate

    def bonus(self, record: IndexRecord) -> float:
        """What ``record`` gains on the scale where the best BM25 hit scores 1 (the rule
        of the module docstring), through ``bonus_of``."""
        if not self.boost:
            return 0.0
        return self.bonus_of(unit_names(record), lambda: record)

    def bonus_of(self, held: UnitNames, record: Callable[[], IndexRecord]) -> float:
        """``bonus`` from the unit's names analysed beforehand (``unit_names``)."""
        named = any(words <= self.stems for words in held.words)
        return self.bonus_from(named, held.literals, record)

    def bonus_from(
        self, named: bool, literals: Iterable[str], record: Callable[[], IndexRecord]
    ) -> float:
        """``bonus`` of a unit one of whose names the question says in full (``named``,
        found beforehand: a server tests every candidate at once, postings.Names) or
        not, holding these padded quoted ``literals``; ``record`` is asked for only when
        the question quotes a value none of them says."""
        if not self.boost:
            return 0.0
        out = self.boost if named else 0.0
        if LITERAL_BOOST:
            if any(lit in self.said for lit in literals):
                return out + LITERAL_BOOST
            if self.asked and _holds_asked(record(), self.asked):
                out += LITERAL_BOOST
        return out


@dataclass(frozen=True, slots=True)
class UnitNames:
    """What ``Namer.bonus`` reads of one unit, analysed once: each name's content words
    (names of ``MIN_CHARS`` or more with words) and its quoted values, padded for a
    phrase test.  A server keeps them per revision (its units are immutable);
    tests/activation/test_unit_names.py proves ``bonus_of`` equal to the rule as
    written out word for word (``named`` and ``literal_named`` in activation_helpers)."""

    words: tuple[frozenset[str], ...]
    literals: tuple[str, ...]


def unit_names(
    record: IndexRecord, analysed: Callable[[str, str], tuple[str, ...]] | None = None
) -> UnitNames:
    """``record``'s ``UnitNames`` (``analysed``: ``_name_words`` or a memo of its own)."""
    words_of = analysed or _name_words
    language = record.language
    words = []
    for name in names(record):
        if len(name.strip()) < MIN_CHARS:
            continue
        found = words_of(name, language)
        if found:
            words.append(frozenset(found))
    padded = dict.fromkeys(f" {lit} " for lit in literals(record))
    return UnitNames(tuple(dict.fromkeys(words)), tuple(padded))


def _holds_asked(record: IndexRecord, asked: list[str]) -> bool:
    held = _folded_words(" ".join(flatten(record.payload)) + " " + record.title)
    return any(f" {q} " in held for q in asked)
