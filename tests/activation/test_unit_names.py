"""A server boosts from each unit's names analysed once per revision (``unit_names``,
kept by postings.py), not from the parsed record per search: ``Namer.bonus_of`` must
give exactly ``Namer.bonus``, and a search over the postings exactly the CLI's, on
units made to break it: non-ASCII names, quotes of every kind (unbalanced, nested,
too short, too long), names under ``MIN_CHARS`` or of stop words only, short and long
definitions, qualified columns, values that are not strings, unknown languages."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import numpy as np
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
    assert postings is not None and len(postings.names.literals) == 150
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


def test_the_bonuses_found_for_all_candidates_at_once_are_the_namers() -> None:
    """A server holds every unit's names packed, each name's words as ids in arrays
    (``Names``), and finds which units a question names in full for every candidate at
    once: each unit's bonus is the one ``Namer.bonus`` gives it, for every unit of the
    hostile corpus, quoted questions and no boost included."""
    units, questions = _corpus(150, 7)
    for unit in units[::2]:  # units without quoted values: no value to look for
        payload = unit["payload"]
        assert isinstance(payload, dict)
        for key in ("sql", "notes", "definition", "values"):
            payload.pop(key)
    questions += ["patients of the Day Hospital", "what rate", "ab 'x'", "nothing here", ""]
    records = [IndexRecord(u) for u in units]
    held = Names([(*postings_module._packed(unit_names(r)), "") for r in records])
    rows = np.arange(len(units))
    cases = named = valued = 0
    for question in questions:
        for boost in (0.0, 0.25, 1.0):
            namer = Namer(question, boost)
            got = held.bonus(namer, rows, records.__getitem__).tolist()
            want = [namer.bonus(r) for r in records]
            assert got == want, question
            cases += len(want)
            named += sum(b in (boost, boost + 0.25) and b > 0.25 for b in want)
            valued += sum(b in (0.25, boost + 0.25) and boost > 0 for b in want)
    assert cases == len(questions) * 3 * 150
    assert named >= 100 and valued >= 100  # names said and values said, both exercised
    # A stem no name holds sorts just before one a name holds ("rat", "rate" of "rate"):
    # that name's word is not counted twice.
    lone = [IndexRecord({"id": "a", "language": "en", "title": "rate ward"})]
    small = Names([(*postings_module._packed(unit_names(r)), "") for r in lone])
    namer = Namer("Rates rate", 0.25)
    assert small.bonus(namer, np.arange(1), lone.__getitem__).tolist() == [0.0]
    assert namer.bonus(lone[0]) == 0.0


def test_matched_fields_from_the_kept_analysis_are_the_marks_own(tmp_path: Path) -> None:
    """A shown hit's matched fields come from each unit's fields analysed once per
    revision (``_matchable``), not from its columns marked per search: every ranked
    row of every question names the fields ``_matched`` names from FTS5's own marks, on
    units with non-ASCII columns, field names holding the packing's separators, nested
    and non-string values, and words that are in one field's column but not another's."""
    from evidence_tool.activation.sqlite_hits import _matched
    from evidence_tool.activation.sqlite_hits import _record as stored

    units, questions = _corpus(120, 11)
    for n, unit in enumerate(units):
        if n % 4:  # ASCII alone: "ΔT" is "T", "µg" is "g" (the others keep them)
            text = json.dumps(unit, ensure_ascii=False).encode("ascii", "ignore")
            unit.update(json.loads(text))
        payload = unit["payload"]
        assert isinstance(payload, dict)
        if n % 7 == 0:
            payload["odd\x1ekey"] = "ward stays"
            payload["odd\x1fkey"] = "T g"
        if n % 5 == 0:
            payload["plain"] = {"deep": ["Rates of admission", 3, {"x": "K-12"}]}
    path = tmp_path / "index.sqlite"
    sqlite_index.build_index(path, "rev-1", units)
    postings = Postings.load(path)
    assert postings is not None
    kept = sum(bool(postings.names.packed.get(r, 2)) for r in range(len(units)))
    assert 0 < kept < len(units)  # both ways: analysed beforehand, and FTS5's marks
    rows = named = 0
    with sqlite_index.open_readonly(path) as con:
        extra = ["ward stays admission", "K-12 rates", "città straße", "T ward", "g stays"]
        for question in [*questions[:30], *extra]:
            found = postings.lexical(con, question, Filters(), 100, 0.25)
            if found is None:
                continue  # a question FTS5 ranks itself
            for row in found.values():
                record = stored(row.record, "rev-1")
                want = _matched(record, "stem", *row.marked)
                assert row.matched(record, "stem") == want, (question, record.id)
                rows += 1
                named += len(want)
    assert rows >= 1000 and named >= 1000


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
    assert len(again.names.literals) == len(fresh.names.literals) == 59
    assert [again.names.packed.row(r) for r in range(59)] == [
        fresh.names.packed.row(r) for r in range(59)
    ]
    assert sorted(analysed) == sorted(str(u["id"]) for u in changed)
