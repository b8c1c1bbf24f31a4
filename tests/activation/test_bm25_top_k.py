"""The bm25 query that highlights only its k best hits returns what the plain query (every
column of every matching row, then sorted) returns: the same units, scores and marks."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

from evidence_tool.activation import sqlite_index, sqlite_search
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.workspace.layout import Layout

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.generate import WORDS_EN, generate

MARKS = ", ".join(f"highlight(fts, {n}, char(1), char(2))" for n in (1, 2, 3))


def _plain(
    con: sqlite3.Connection, text: str, where: list[str], args: list[str | int], k: int
) -> list[tuple[str, float, tuple[str, ...]]]:
    sql = (
        f"SELECT u.id, bm25(fts, {sqlite_search._WEIGHTS}) AS score, {MARKS} FROM fts "
        "JOIN units u ON u.id = fts.id WHERE fts MATCH ?"
        + "".join(f" AND {w}" for w in where)
        + " ORDER BY score, u.id LIMIT ?"
    )
    return [(r[0], -r[1], tuple(r[2:])) for r in con.execute(sql, [text, *args, k])]


def test_top_k_bm25_matches_the_plain_query(tmp_path: Path) -> None:
    root = generate(90, tmp_path / "ws", seed=17)
    archive = LocalEvidenceArchive(root)
    assert archive.consolidate("tester", sqlite_index.SqliteBackend(Layout.at(root))).status == (
        "activated"
    )
    path = root / ".evidence-cache" / sqlite_index.INDEX_NAME
    cases = 0
    with sqlite_index.open_readonly(path) as con:
        for n in range(12):
            question = " ".join(WORDS_EN[(n * k) % len(WORDS_EN)] for k in (1, 5, 11))
            text = sqlite_search._stem_query(question)
            for filters in (sqlite_index.Filters(), sqlite_index.Filters(kind="glossary")):
                where, args = sqlite_search._where(filters)
                for k in (1, 7):
                    got = sqlite_search._bm25_rows(con, [text], where, args, k)
                    want = _plain(con, text, where, args, k)
                    # Ties may order either way in both queries: compare as sets of rows.
                    assert {(u, round(r.bm25, 9), r.marked) for u, r in got.items()} == {
                        (u, round(s, 9), m) for u, s, m in want
                    }
                    scores = [r.bm25 for r in got.values()]
                    assert scores == sorted(scores, reverse=True)
                    cases += 1 if want else 0
    assert cases >= 40  # most of the 48 asked found something
