"""bench/rank_levers.py, the offline measurement of issue 31's third-round re-ranking
levers (docs/retrieval.md): the namespace lift, the title diversification and the
leave-one-database-out choice of a weight, on hand-made rankings (no BIRD data)."""

from __future__ import annotations

from bench.rank_levers import database, diversify, leave_one_database_out, lift, score

A, B = "evidence:bird:shop", "evidence:bird:zoo"


def _row(expected: list[str], bm25: list[tuple[str, float]]) -> dict[str, object]:
    return {"question": "which orders", "expected": expected, "bm25": bm25, "dense": []}


def test_namespace_lift_moves_the_top_hits_siblings_within_beta_only() -> None:
    row = _row(
        [f"{A}:tax"],
        [(f"{A}:orders", 9.0), (f"{B}:keeper", 8.5), (f"{A}:tax", 8.1), (f"{B}:cage", 2.0)],
    )
    assert lift(row, "bm25", 0.0) == [f"{A}:orders", f"{B}:keeper", f"{A}:tax", f"{B}:cage"]
    # 8.1/9 + 0.1 = 0.99 > 8.5/9 = 0.944: lifted above the other namespace's unit
    assert lift(row, "bm25", 0.1)[:3] == [f"{A}:orders", f"{A}:tax", f"{B}:keeper"]
    # a lift too small to close the gap changes nothing
    assert lift(row, "bm25", 0.02)[1] == f"{B}:keeper"
    # the cage unit (2/9) stays last whatever the lift: it is not the top hit's sibling
    assert lift(row, "bm25", 1.0)[-1] == f"{B}:cage"


def test_an_id_without_a_namespace_lifts_nothing() -> None:
    row = _row(["evidence-x"], [("orders", 3.0), ("evidence:a:b", 2.9), ("tax", 2.0)])
    assert lift(row, "bm25", 0.5) == ["orders", "evidence:a:b", "tax"]


def test_diversify_moves_a_repeated_title_down_by_shift() -> None:
    titles = {"a1": "charter school", "a2": "charter school", "b": "k 12", "c": "zip", "d": "x"}
    ranked = ["a1", "a2", "b", "c", "d"]
    assert diversify(ranked, titles, 0) == ranked
    assert diversify(ranked, titles, 2) == ["a1", "b", "c", "a2", "d"]
    assert diversify(ranked, titles, 10) == ["a1", "b", "c", "d", "a2"]


def test_leave_one_database_out_chooses_each_databases_weight_on_the_others() -> None:
    # shop's questions need the lift; zoo's are indifferent to it
    shop = [
        _row([f"{A}:tax"], [(f"{A}:o{n}", 9.0), (f"{B}:k{n}", 8.5), (f"{A}:tax", 8.1)])
        for n in range(3)
    ]
    zoo = [_row([f"{B}:cage"], [(f"{B}:cage", 9.0), (f"{A}:o", 1.0)]) for _ in range(2)]
    rows = shop + zoo
    assert sorted({database(r) for r in rows}) == ["shop", "zoo"]
    figures, chosen = leave_one_database_out(rows, (0.0, 0.1), lambda r, b: lift(r, "bm25", b))
    # zoo's weight is chosen on shop (the lift helps there), shop's on zoo (a tie: the smaller)
    assert chosen == {"shop": 0.0, "zoo": 0.1}
    assert len(chosen) == 2
    assert figures == score(rows, lambda r: lift(r, "bm25", chosen[database(r)]))
    assert figures["r@1"] == 0.4  # only the zoo questions find their unit first
