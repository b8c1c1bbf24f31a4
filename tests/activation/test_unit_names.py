"""A server boosts from each unit's names analysed once per revision (``unit_names``,
kept by postings.py), not from the parsed record per search: ``Namer.bonus_of`` must
give exactly ``Namer.bonus``, and a search over the postings exactly the CLI's, on
units made to break it: non-ASCII names, quotes of every kind (unbalanced, nested,
too short, too long), names under ``MIN_CHARS`` or of stop words only, short and long
definitions, qualified columns, values that are not strings, unknown languages."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import pytest
from activation_helpers import literal_named, named

from evidence_tool.activation import names as rule
from evidence_tool.activation import sqlite_index
from evidence_tool.activation._speed import postings as postings_module
from evidence_tool.activation._speed.postings import Names, Postings
from evidence_tool.activation.analysis import analyse
from evidence_tool.activation.names import MIN_CHARS, Namer, UnitNames, names, unit_names
from evidence_tool.activation.records import IndexRecord
from evidence_tool.activation.sqlite_index import Filters, search_path
from evidence_tool.jsonvalue import JsonObject, JsonValue

WORDS = [
    "ward", "stays", "admission", "Alameda", "County", "K-12", "grades", "ricovero",
    "reparto", "degenza", "città", "straße", "Ærø", "naïve", "ΔT", "µg", "the", "of",
    "di", "what", "rate", "Rates", "IrishStat", "chl", "N", "ab", "Day", "Hospital",
]  # fmt: skip
QUOTES = ["'{}'", '"{}"', "`{}`", "'{}", "{}'", "'{}' and \"{}\"", "'a'", "'{}'s'"]


def _phrase(rng: random.Random, most: int = 3) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, most)))


def _quoted(rng: random.Random) -> str:
    template = rng.choice(QUOTES)
    long = "x" * 81 if rng.random() < 0.1 else ""  # past the 80 characters of a quote
    return template.format(_phrase(rng) + long, _phrase(rng))


def _unit(n: int, rng: random.Random) -> JsonObject:
    short = rng.choice(["ab", "  ab  ", "N", "of the", "di", "", "K12"])  # under MIN_CHARS
    columns: list[JsonValue] = [
        f"public.{rng.choice(['ward_stays', 'admissions'])}.{_phrase(rng, 1)}",
        rng.choice(["a.b.c.rate", "straße", short]),
    ]
    definition = (
        _phrase(rng, 6) if n % 2 else f"{_phrase(rng, 8)} {_phrase(rng, 8)} where {_quoted(rng)}"
    )
    values: list[JsonValue] = [
        {"value": _phrase(rng, 2)},
        {"value": 12},
        {"label": "no value"},
        "bare",
        {"value": short},
    ]
    payload: JsonObject = {
        "definition": definition,
        "sql": f"SELECT * FROM t WHERE c = {_quoted(rng)} OR d = {_quoted(rng)}",
        "notes": [_quoted(rng), {"nested": [_quoted(rng), 3, None]}],
        "synonyms": [_phrase(rng), short, 7],
        "values": values if n % 3 else "not a list",
        "column": rng.choice([f"public.t.{_phrase(rng, 1)}", short, 5]),
        "tables": ["public.ward_stays", short],
    }
    raw: JsonObject = {
        "id": f"evidence:test:n{n:04d}",
        "kind": ("glossary", "domain", "formula")[n % 3],
        "language": ("en", "it", "IT-ch", "xx", "")[n % 5],
        "title": rng.choice([_phrase(rng), short, _quoted(rng)]),
        "path": f"evidence/curated/glossary/n{n:04d}.md",
        "provenance_kind": "manual",
        "metadata": {
            "purposes": ["sql_generation"],
            "applies_to": {
                "tables": ["public.ward_stays", f"x.{_phrase(rng, 1)}"],
                "columns": columns,
                "concepts": [_phrase(rng), short],
            },
        },
        "payload": payload,
    }
    raw["content_hash"] = hashlib.sha256(repr(sorted(raw.items())).encode()).hexdigest()
    return raw


def _question(rng: random.Random, units: list[JsonObject]) -> str:
    """Words of a unit's names and values, other words, sometimes quoted."""
    record = IndexRecord(rng.choice(units))
    said = [n for n in names(record) if rng.random() < 0.5] or [_phrase(rng)]
    parts = [*said, _phrase(rng, 2)]
    if rng.random() < 0.3:
        parts.append(_quoted(rng))
    rng.shuffle(parts)
    return " ".join(parts)


def _corpus(n: int, seed: int) -> tuple[list[JsonObject], list[str]]:
    rng = random.Random(seed)
    units = [_unit(k, rng) for k in range(n)]
    return units, [_question(rng, units) for _ in range(60)]


def _rule(record: IndexRecord, question: str, boost: float) -> float:
    """The boost as names.py states it, one predicate per lever."""
    if not boost:
        return 0.0
    out = boost if named(record, rule.query_stems(question)) else 0.0
    if literal_named(record, question, rule.quoted(question)):
        out += rule.LITERAL_BOOST
    return out


def test_bonus_of_the_kept_names_is_the_namers_bonus() -> None:
    units, questions = _corpus(120, 1)
    kept = [(IndexRecord(u), unit_names(IndexRecord(u))) for u in units]
    cases = named = literal = asked = 0
    for question in questions:
        for boost in (0.0, 0.25, 1.0):
            namer = Namer(question, boost)
            for record, held in kept:
                reads: list[int] = []

                def record_of(
                    record: IndexRecord = record, reads: list[int] = reads
                ) -> IndexRecord:
                    reads.append(1)
                    return record

                want = _rule(record, question, boost)
                assert namer.bonus_of(held, record_of) == want, (question, record.to_json())
                assert namer.bonus(record) == want
                assert not reads or namer.asked  # the record only for a quoted question
                cases += 1
                named += want in (boost, boost + 0.25) and boost > 0 and want != 0.25
                literal += want in (0.25, boost + 0.25) and boost > 0
                asked += bool(reads)
    assert cases == 60 * 3 * 120
    # The corpus reaches every branch: names said, values said or quoted, quoted questions.
    assert named >= 200 and literal >= 100 and asked >= 500


def test_names_under_min_chars_or_of_stop_words_are_not_kept() -> None:
    record = IndexRecord(
        {
            "id": "evidence:test:x",
            "language": "en",
            "title": " ab ",
            "metadata": {"applies_to": {"concepts": ["of the", "Ward Stays"]}},
            "payload": {"synonyms": ["N", "ab"], "definition": "'K-12' grades"},
        }
    )
    held = unit_names(record)
    assert len(" ab ".strip()) < MIN_CHARS
    assert frozenset(analyse("Ward Stays", "en").split()) in held.words
    assert all(words for words in held.words)  # "of the": no content word, not a name
    assert held.literals == (" k 12 ",)


def test_a_search_over_the_postings_answers_what_the_cli_answers(tmp_path: Path) -> None:
    """End to end on the hostile corpus: hits, scores, matched fields and records."""
    units, questions = _corpus(150, 2)
    path = tmp_path / "index.sqlite"
    sqlite_index.build_index(path, "rev-1", units)
    postings = Postings.load(path)
    assert postings is not None and len(postings.names) == 150
    compared = 0
    for question in questions[:30]:
        for filters in (Filters(), Filters(kind="glossary"), Filters(language="it")):
            try:
                want = search_path(path, question, filters, 10, "bm25")
            except Exception as exc:  # a question of stop words only: both refuse alike
                got_exc = None
                try:
                    search_path(path, question, filters, 10, "bm25", postings=postings)
                except Exception as other:
                    got_exc = other
                assert type(got_exc) is type(exc)
                continue
            got = search_path(path, question, filters, 10, "bm25", postings=postings)
            assert [h.to_json() for h in got.hits] == [h.to_json() for h in want.hits]
            compared += len(want.hits)
    assert compared >= 400


def test_packed_names_are_the_units_names_and_the_filter_passes_every_boosted_one() -> None:
    """A server holds every unit's ``UnitNames`` packed in one buffer (``Names``): each
    unpacks to the one ``unit_names`` makes, and a candidate the filter leaves out is
    one whose bonus (from the question's own ``Namer``) the shared empty one gives."""
    units, questions = _corpus(150, 7)
    for unit in units[::2]:  # units without quoted values: no value to look for
        payload = unit["payload"]
        assert isinstance(payload, dict)
        for key in ("sql", "notes", "definition", "values"):
            payload.pop(key)
    questions += ["patients of the Day Hospital", "what rate", "ab 'x'", "nothing here"]
    held = [unit_names(IndexRecord(u)) for u in units]
    packed = Names([postings_module._packed(n) for n in held])
    assert [packed.of(r) for r in range(len(held))] == held
    left_out = boosted = 0
    for question in questions:
        could = packed.could(rule.query_stems(question)).tolist()
        namer = Namer(question, 0.25)
        for r, (unit, names_of) in enumerate(zip(units, held, strict=True)):
            bonus = namer.bonus_of(names_of, lambda unit=unit: IndexRecord(unit))
            boosted += bonus > 0
            if not could[r]:
                left_out += 1
                empty = namer.bonus_of(
                    postings_module._NO_NAMES, lambda unit=unit: IndexRecord(unit)
                )
                assert empty == bonus, (question, unit["id"])
    assert left_out > 200 and boosted > 300  # both sides of the filter were exercised


def test_a_new_revisions_postings_take_the_unchanged_units_names(tmp_path: Path) -> None:
    """Loading the next revision's postings analyses only the units it changed, and
    keeps exactly what a load from scratch would."""
    units, _ = _corpus(60, 3)
    path = tmp_path / "index.sqlite"
    sqlite_index.build_index(path, "rev-1", units)
    first = Postings.load(path)
    assert first is not None
    rng = random.Random(4)
    changed = [_unit(n, rng) for n in (5, 17)]
    gone = {str(u["id"]) for u in changed} | {str(units[30]["id"])}
    sqlite_index.update_in_place(path, "rev-2", gone, changed, lambda con: None)
    analysed: list[str] = []

    def counted(record: IndexRecord, *args: object) -> UnitNames:
        analysed.append(record.id)
        return unit_names(record, *args)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(postings_module, "unit_names", counted)
        again = Postings.load(path, first)
    fresh = Postings.load(path)
    assert again is not None and fresh is not None and again.revision == "rev-2"
    assert len(again.names) == len(fresh.names) == 59
    assert [again.names.of(r) for r in range(59)] == [fresh.names.of(r) for r in range(59)]
    assert sorted(analysed) == sorted(str(u["id"]) for u in changed)
