"""``eval --adopt``'s rule (adopt.py): a fusion is adopted only when it is at least as
good as the better part on every figure and better by one question's worth in all;
a smaller gain is one question's rank, which the next question set takes back."""

from __future__ import annotations

import pytest

from evidence_tool.activation.adopt import Figures, _choose
from evidence_tool.activation.fusion import Fusion

BM25 = Figures(0.80, 0.70, 0.75)
DENSE = Figures(0.60, 0.55, 0.58)


@pytest.mark.parametrize(
    ("questions", "hybrid", "adopted"),
    [
        (50, Figures(0.82, 0.71, 0.76), "hybrid max 0.7"),  # +0.04 >= 1/50
        (50, Figures(0.80, 0.705, 0.755), "bm25"),  # +0.01 < 1/50: one question's rank
        (400, Figures(0.80, 0.705, 0.755), "hybrid max 0.7"),  # +0.01 >= 1/400
        (400, Figures(0.85, 0.75, 0.749), "bm25"),  # worse on nDCG: never adopted
    ],
)
def test_a_fusion_must_gain_one_questions_worth(
    questions: int, hybrid: Figures, adopted: str
) -> None:
    fusion = Fusion("max", 0.7)
    figures = {"bm25": BM25, "dense": DENSE, "hybrid max 0.7": hybrid}
    label, reason = _choose(figures, {"hybrid max 0.7": fusion}, questions)
    assert label == adopted, reason
    if label == "bm25":
        assert "one question's worth" in reason


def test_of_two_that_qualify_the_larger_smallest_margin_wins() -> None:
    figures = {
        "bm25": BM25,
        "dense": DENSE,
        "hybrid max 0.5": Figures(0.90, 0.70, 0.80),  # smallest margin 0
        "hybrid max 0.8": Figures(0.82, 0.72, 0.77),  # smallest margin +0.02
    }
    fusions = {"hybrid max 0.5": Fusion("max", 0.5), "hybrid max 0.8": Fusion("max", 0.8)}
    assert _choose(figures, fusions, 100)[0] == "hybrid max 0.8"


def test_within_one_questions_worth_the_built_in_wins() -> None:
    builtin = Fusion()  # max 0.9
    figures = {
        "bm25": BM25,
        "dense": DENSE,
        "hybrid max 0.7": Figures(0.85, 0.72, 0.78),  # the top by a hair
        f"hybrid max {builtin.weight:g}": Figures(0.84, 0.72, 0.775),
        "hybrid rrf 0.5": Figures(0.86, 0.70, 0.76),  # smallest margin 0: further off
    }
    fusions = {
        "hybrid max 0.7": Fusion("max", 0.7),
        f"hybrid max {builtin.weight:g}": builtin,
        "hybrid rrf 0.5": Fusion("rrf", 0.5),
    }
    # 30 questions: one question's worth is 0.033; the built-in is 0.015 behind the top.
    assert _choose(figures, fusions, 30)[0] == f"hybrid max {builtin.weight:g}"
    # 300 questions: 0.0033, and the built-in is told apart (behind): the top wins.
    assert _choose(figures, fusions, 300)[0] == "hybrid max 0.7"
