"""``tht workspace evidence search``: BM25 over the active units with typed filters.

Expected hit sets come from an oracle (the words of each active record, folded
as FTS5's unicode61 tokenizer folds them, then stemmed by the record's language
with the Snowball stemmers directly), or from units added for the test that
share one word no fixture unit has.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import snowballstemmer
from activation_helpers import (
    FORMULA,
    Tht,
    active_records,
    formula_text,
    stage_document,
    tokens,
    unit_text,
    write_unit,
)

from evidence_tool.activation.sqlite_index import Filters, search
from evidence_tool.workspace.layout import Layout


def _hits(tht: Tht, *args: str) -> list[dict[str, Any]]:
    result = tht("search", *args)
    assert result.exit_code == 0, result.stdout
    return result.json["result"]["hits"]  # type: ignore[no-any-return]


def _ids(tht: Tht, *args: str) -> set[str]:
    return {h["id"] for h in _hits(tht, *args, "--limit", "1000")}


_SNOWBALL = {"en": "porter", "it": "italian"}


def _stems(words: set[str], language: str) -> set[str]:
    name = _SNOWBALL.get(language.split("-")[0])
    if name is None:
        return words
    stemmer = snowballstemmer.stemmer(name)
    return {stemmer.stemWord(w) if w.isalpha() else w for w in words}


def _oracle(root: Path, word: str, **where: Any) -> set[str]:
    """Units holding an inflection of ``word``: a stem of it in their own language."""
    return {
        r["id"]
        for r in active_records(root)
        if _stems({word}, r["language"]) & _stems(tokens(r), r["language"])
        and all(r[k] == v for k, v in where.items())
    }


@pytest.mark.parametrize("word", ["ricovero", "degenza", "dimissione"])
def test_an_italian_word_finds_exactly_the_units_that_say_it(
    indexed: Path, tht: Tht, word: str
) -> None:
    expected = _oracle(indexed, word)
    assert expected and {r for r in expected if "clinical" in r}
    assert _ids(tht, word) == expected
    assert _ids(tht, word, "--language", "it") == _oracle(indexed, word, language="it")


def test_accents_and_case_do_not_matter(indexed: Path, tht: Tht) -> None:
    # 'Modalità di dimissione' is found by 'MODALITA'.
    assert "evidence:clinical:modalita-dimissione" in _ids(tht, "MODALITA")


def test_a_formula_is_found_by_one_of_its_columns(indexed: Path, tht: Tht) -> None:
    column = "clinical.admissions.admission_date"
    formulas = {
        r["id"]
        for r in active_records(indexed)
        if r["kind"] == "formula" and column in r["payload"]["columns"]
    }
    assert FORMULA in formulas
    # Any word of the name matches (OR, BM25-weighted): the formulas that hold the whole
    # column rank above those holding only some of its words.
    ranked = [h["id"] for h in _hits(tht, column, "--kind", "formula", "--limit", "1000")]
    assert set(ranked[: len(formulas)]) == formulas and len(ranked) > len(formulas)
    assert _hits(tht, "clinical.discharges.discharge_mode")[0]["id"] == (
        "evidence:clinical:tasso-mortalita"
    )


def test_every_hit_is_typed_and_says_its_provenance(indexed: Path, tht: Tht) -> None:
    stage_document(indexed, FORMULA, "giornate di degenza")
    assert tht("consolidate").json["result"]["status"] == "activated"
    hits = _hits(tht, "degenza", "--limit", "1000")
    kinds = {h["id"]: h["provenance"] for h in hits}
    assert kinds[FORMULA] == "document"
    assert set(kinds.values()) == {"manual", "document"}
    for h in hits:
        assert set(h) == {
            "id",
            "kind",
            "language",
            "title",
            "score",
            "bm25",
            "matched",
            "path",
            "provenance",
            "purposes",
        }
        assert 0 < h["score"] <= 1 and h["path"].startswith("evidence/curated/")
    text = tht("search", "degenza", as_json=False).stdout
    assert f"{FORMULA}  [formula/it, document]" in text


# -- filters, on units that share a word no fixture unit has -------------------------

WORD = "quokka"
UNITS = {
    "evidence:flt:en-domain": ("domain", "en", ["sql_generation"], ["lab.results"]),
    "evidence:flt:it-domain": ("domain", "it", ["disambiguation"], ["clinical.admissions"]),
    "evidence:flt:itch-glossary": (
        "glossary",
        "it-CH",
        ["disambiguation", "rewriting"],
        ["clinical.admissions"],
    ),
    "evidence:flt:en-glossary": ("glossary", "en", ["rewriting"], None),
    "evidence:flt:ita-domain": ("domain", "ita", ["schema_linking"], None),
}
FORMULA_ID = "evidence:flt:en-formula"  # tables only through its Columns field


@pytest.fixture
def filtered(indexed: Path, tht: Tht) -> Path:
    for uid, (kind, lang, purposes, tables) in UNITS.items():
        name = uid.rsplit(":", 1)[1]
        text = f"The {WORD} rule number {name}."
        write_unit(
            indexed,
            kind,
            name,
            unit_text(uid, kind, lang, purposes, f"{WORD} {name}", text, tables=tables),
        )
    write_unit(
        indexed,
        "formula",
        "en-formula",
        formula_text(FORMULA_ID, f"{WORD} ratio", ["lab.results.value"], "lab.results.value / 2"),
    )
    assert tht("consolidate").json["result"]["status"] == "activated"
    return indexed


ALL = {*UNITS, FORMULA_ID}


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((), ALL),
        (("--kind", "glossary"), {"evidence:flt:itch-glossary", "evidence:flt:en-glossary"}),
        (("--kind", "formula"), {FORMULA_ID}),
        (("--kind", "enum"), set()),
        (("--purpose", "disambiguation"), {"evidence:flt:it-domain", "evidence:flt:itch-glossary"}),
        (("--purpose", "sql_generation"), {"evidence:flt:en-domain", FORMULA_ID}),
        (("--language", "it"), {"evidence:flt:it-domain", "evidence:flt:itch-glossary"}),
        (("--language", "it-CH"), {"evidence:flt:itch-glossary"}),
        (("--language", "IT-ch"), {"evidence:flt:itch-glossary"}),
        (("--language", "ita"), {"evidence:flt:ita-domain"}),
        (("--language", "%"), set()),
        (("--language", "en"), {"evidence:flt:en-domain", "evidence:flt:en-glossary", FORMULA_ID}),
        (
            ("--table", "clinical.admissions"),
            {"evidence:flt:it-domain", "evidence:flt:itch-glossary"},
        ),
        (("--table", "LAB.Results"), {"evidence:flt:en-domain", FORMULA_ID}),
        (("--table", "lab"), set()),
        (
            ("--kind", "domain", "--language", "it", "--table", "clinical.admissions"),
            {"evidence:flt:it-domain"},
        ),
        (("--purpose", "rewriting", "--language", "it"), {"evidence:flt:itch-glossary"}),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, tuple) else None,
)
def test_filters_narrow_to_exactly_the_matching_units(
    filtered: Path, tht: Tht, args: tuple[str, ...], expected: set[str]
) -> None:
    assert _ids(tht, WORD, *args) == expected


def test_limit_keeps_the_best_ranked_hits(filtered: Path, tht: Tht) -> None:
    ranked = [h["id"] for h in _hits(tht, WORD, "--limit", "1000")]
    assert len(ranked) == len(ALL)
    for n in (1, 2, 5):
        assert [h["id"] for h in _hits(tht, WORD, "--limit", str(n))] == ranked[:n]
    scores = [h["score"] for h in _hits(tht, WORD, "--limit", "1000")]
    assert scores == sorted(scores, reverse=True)
    assert tht("search", WORD, "--limit", "0").exit_code == 2


def test_any_word_matches_and_the_unit_with_more_of_them_ranks_first(
    filtered: Path, tht: Tht
) -> None:
    assert _ids(tht, f"{WORD} ticinese-absent") == ALL  # no unit has both: any word
    ranked = [h["id"] for h in _hits(tht, f"{WORD} ratio", "--limit", "1000")]
    assert ranked[0] == FORMULA_ID and set(ranked) >= ALL  # one has both: it comes first
    # Stop words are not searched for: they do not widen the hits.
    assert _ids(tht, f"what is the {WORD}") == ALL
    result = tht("search", "what is the")
    assert result.exit_code == 2 and "stop words" in result.json["errors"][0]["message"]


def test_a_query_without_words_or_index_is_a_usage_error(workspace: Path, tht: Tht) -> None:
    result = tht("search", "degenza")  # the shipped copy has no index yet
    assert result.exit_code == 2 and "consolidate" in result.json["errors"][0]["message"]
    tht("consolidate")
    assert tht("search", "?!").exit_code == 2


def test_library_search_matches_the_cli(filtered: Path, tht: Tht) -> None:
    data = search(Layout.at(filtered), WORD, Filters(language="it"), limit=50)
    assert set(data.ids()) == {
        "evidence:flt:it-domain",
        "evidence:flt:itch-glossary",
    }
    provenances = [h.record.provenance for h in data.hits]
    assert all(isinstance(p, dict) and p["kind"] == "manual" for p in provenances)
