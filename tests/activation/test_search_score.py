"""Search scores people can read: BM25 as SQLite computes it, scaled so the best hit is 1,
and the fields each hit matched (issue 15, output people read).

A word that more than half of the units hold gets FTS5's smallest IDF (1e-6), so the raw
BM25 values of a small, focused workspace are all about 0.000001: printed with three
decimals every hit read ``0.000``.  The workspace here is one a new user would write:
four units, every one of them about discharges, with a ranking known from where the word
stands (title, applies_to and field text, weighted by `sqlite_search.COLUMN_WEIGHTS`).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from activation_helpers import Tht, unit_text, write_unit

from evidence_tool.activation import sqlite_search
from evidence_tool.activation.names import NAME_BOOST
from evidence_tool.activation.sqlite_index import Filters, search_path

WORD = "discharge"
TITLED = "evidence:ward:discharge-date"  # in the title and the definition
APPLIED = "evidence:ward:ward-exit"  # in applies_to.concepts only
SHORT = "evidence:ward:letter"  # once in a short rule
LONG = "evidence:ward:bed-occupancy"  # once in a long rule
FILLER = " ".join(f"Beds on ward {n} are counted at midnight." for n in range(12))


@pytest.fixture
def focused(tmp_path: Path, tht: Tht) -> Path:
    root = tmp_path / "small"
    root.mkdir()
    (root / "workspace.yaml").write_text(
        "descriptor_version: 4\nid: small\nname: Small ward\ndefault_language: en\n"
        "evidence:\n  descriptor_version: 1\n  sources: []\n",
        encoding="utf-8",
    )
    write_unit(
        root,
        "glossary",
        "discharge-date",
        unit_text(
            TITLED, "glossary", "en", ["disambiguation"], "Discharge date",
            "The day the discharge letter is signed.",
        ),
    )  # fmt: skip
    exit_text = unit_text(
        APPLIED, "domain", "en", ["sql_generation"], "Ward exit", "Use the transfers table."
    ).replace("purposes: [sql_generation]\n", "purposes: [sql_generation]\n"
              "applies_to:\n  concepts: [discharge]\n")  # fmt: skip
    write_unit(root, "domain", "ward-exit", exit_text)
    write_unit(
        root,
        "domain",
        "letter",
        unit_text(SHORT, "domain", "en", ["rewriting"], "Letters", f"Sign the {WORD} letter."),
    )
    write_unit(
        root,
        "domain",
        "bed-occupancy",
        unit_text(
            LONG, "domain", "en", ["sql_generation"], "Bed occupancy",
            f"{FILLER} A {WORD} frees the bed. {FILLER}",
        ),
    )  # fmt: skip
    result = tht("consolidate", root=root)
    assert result.json["result"]["status"] == "activated", result.stdout
    return root


def _sqlite_bm25(root: Path, word: str) -> dict[str, float]:
    """-bm25() per unit id, as SQLite computes it with the index's column weights."""
    from evidence_tool.activation.analysis import stem

    with sqlite3.connect(root / ".evidence-cache/index.sqlite") as con:
        rows = con.execute(
            f"SELECT id, bm25(fts, {sqlite_search._WEIGHTS}) FROM fts WHERE fts MATCH ?",
            # The index holds stems: the word's English or Italian one.
            (" OR ".join(f'"{s}"' for s in {stem(word, lang) for lang in ("en", "it")}),),
        ).fetchall()
    return {uid: -value for uid, value in rows}


def _hits(tht: Tht, root: Path, query: str) -> list[dict[str, Any]]:
    result = tht("search", query, root=root)
    assert result.exit_code == 0, result.stdout
    return result.json["result"]["hits"]  # type: ignore[no-any-return]


def test_a_word_every_unit_holds_still_gets_distinct_scores(focused: Path, tht: Tht) -> None:
    raw = _sqlite_bm25(focused, WORD)
    assert len(raw) == 4 and max(raw.values()) < 1e-4  # the clamped IDF: the case at hand

    hits = _hits(tht, focused, WORD)

    # The query names APPLIED's concept ("discharge") in full: it gains the name boost
    # (names.py) over TITLED, whose BM25 is the best but whose name is "Discharge date".
    assert [h["id"] for h in hits] == [APPLIED, TITLED, SHORT, LONG]
    scores = [h["score"] for h in hits]
    assert scores[0] == 1.0 and all(s > 0 for s in scores)
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == 4
    rank = {uid: value / raw[TITLED] + NAME_BOOST * (uid == APPLIED) for uid, value in raw.items()}
    for h in hits:
        assert h["bm25"] == pytest.approx(raw[h["id"]], rel=1e-9)
        assert h["score"] == pytest.approx(rank[h["id"]] / rank[APPLIED], abs=1e-4)


def test_each_hit_names_the_fields_that_matched(focused: Path, tht: Tht) -> None:
    matched = {h["id"]: h["matched"] for h in _hits(tht, focused, WORD)}
    assert matched == {
        TITLED: ["title", "definition"],
        APPLIED: ["applies_to.concepts"],
        SHORT: ["rule"],
        LONG: ["rule"],
    }


def test_the_text_shows_the_scale_and_the_matched_fields(focused: Path, tht: Tht) -> None:
    hits = _hits(tht, focused, WORD)
    head, *lines = tht("search", WORD, root=focused, as_json=False).stdout.splitlines()
    assert head == "mode: bm25 (score: BM25 / best hit's)"  # which mode ran, what scores mean
    assert len(lines) == len(hits) == 4
    assert lines[0].split()[0] == "1.000" and "0.000" not in "\n".join(lines)
    for line, h in zip(lines, hits, strict=True):
        assert line.split()[:2] == [f"{h['score']:.3f}", h["id"]]
        assert line.endswith(f"matched: {', '.join(h['matched'])}"), line


def test_a_rare_word_in_the_example_workspace_ranks_the_same_way(indexed: Path, tht: Tht) -> None:
    raw = _sqlite_bm25(indexed, "degenza")
    # BM25 alone (the name boost off): the scores are SQLite's, scaled by the best.
    index = indexed / ".evidence-cache/index.sqlite"
    plain = [h.to_json() for h in search_path(index, "degenza", Filters(), name_boost=0).hits]
    assert len(plain) == min(10, len(raw)) >= 3
    best = max(raw.values())
    assert plain[0]["score"] == 1.0 and raw[plain[0]["id"]] == best
    assert [h["score"] for h in plain] == [round(raw[h["id"]] / best, 4) for h in plain]
    # With it (the default, as the CLI runs): the units named "degenza" lead, in BM25 order.
    hits = _hits(tht, indexed, "degenza")
    assert hits[0]["score"] == 1.0 and all(h["matched"] for h in hits)
    assert {h["id"] for h in hits} <= set(raw)
