"""fusion.py: each ranking normalised on its own scale, then mixed by the lexical weight."""

from __future__ import annotations

import random

import pytest

from evidence_tool.activation.fusion import METHODS, Fusion, Retrieval, fuse
from evidence_tool.errors import DescriptorError

RNG = random.Random(31)


def _ranking(ids: list[str], low: float, high: float) -> list[tuple[str, float]]:
    scored = [(uid, RNG.uniform(low, high)) for uid in ids]
    return sorted(scored, key=lambda s: (-s[1], s[0]))


UNITS = [f"evidence:u{n:02d}" for n in range(40)]


@pytest.mark.parametrize("method", METHODS)
def test_a_weight_of_one_or_zero_is_that_ranking_alone(method: str) -> None:
    cases = 0
    for _ in range(25):
        lexical = _ranking(RNG.sample(UNITS, 17), 0.5, 30.0)  # BM25: unbounded
        dense = _ranking(RNG.sample(UNITS, 23), 0.05, 0.9)  # cosine: a narrow band
        only_lex = [u for u, s in fuse(lexical, dense, Fusion(method, 1.0)) if s > 0]
        only_den = [u for u, s in fuse(lexical, dense, Fusion(method, 0.0)) if s > 0]
        # minmax gives each ranking's last candidate 0: it ties with the absent ones.
        tail = 1 if method == "minmax" else 0
        assert only_lex == [u for u, _ in lexical][: len(lexical) - tail]
        assert only_den == [u for u, _ in dense][: len(dense) - tail]
        cases += 1
    assert cases == 25


@pytest.mark.parametrize("method", METHODS)
def test_fused_scores_lie_in_0_1_and_the_order_is_stable(method: str) -> None:
    lexical = _ranking(UNITS[:12], 1.0, 9.0)
    dense = _ranking(UNITS[6:20], 0.1, 0.6)
    fused = fuse(lexical, dense, Fusion(method, 0.7))
    assert {u for u, _ in fused} == set(UNITS[:20])
    assert all(0.0 <= s <= 1.0 for _, s in fused)
    assert fused == sorted(fused, key=lambda s: (-s[1], s[0]))  # ties by id
    assert fuse(list(reversed(lexical)), dense, Fusion(method, 0.7)) == fused or method == "rrf"


def test_an_empty_side_leaves_the_other_deciding_alone() -> None:
    lexical = _ranking(UNITS[:8], 1.0, 9.0)
    for weight in (0.0, 0.3, 1.0):
        assert [u for u, _ in fuse(lexical, [], Fusion("max", weight))] == [u for u, _ in lexical]
        assert [u for u, _ in fuse([], lexical, Fusion("max", weight))] == [u for u, _ in lexical]
    assert fuse([], [], Fusion()) == []


def test_a_unit_both_rankings_hold_beats_one_only_one_holds_at_equal_rank() -> None:
    lexical = [("a", 10.0), ("b", 5.0)]
    dense = [("c", 0.8), ("b", 0.7)]
    assert next(u for u, _ in fuse(lexical, dense, Fusion("max", 0.5))) == "b"


@pytest.mark.parametrize(
    "raw",
    [
        {"method": "zscore", "weight": 0.5},
        {"method": "max", "weight": 1.5},
        {"method": "max", "weight": -0.1},
        {"method": "max", "weight": "0.5"},
        {"method": "max", "weight": True},
    ],
)
def test_a_bad_fusion_setting_is_a_descriptor_error(raw: dict[str, object]) -> None:
    with pytest.raises(DescriptorError):
        Retrieval.from_json({"mode": "hybrid", "fusion": raw})


def test_no_section_is_the_built_in_default() -> None:
    assert Retrieval.from_json(None) == Retrieval()
    assert Retrieval.from_json({"mode": "bm25"}).fusion == Fusion()


def test_a_wrong_typed_value_is_worded_by_the_decoder_with_its_path() -> None:
    with pytest.raises(DescriptorError) as caught:
        Retrieval.from_json({"mode": "hybrid", "fusion": {"weight": True}})
    assert caught.value.message == (
        "'retrieval': Expected `float`, got `bool` - at `$.fusion.weight`"
    )
    assert caught.value.code == "E902"
