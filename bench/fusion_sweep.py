"""Fusions scored offline on collected rankings (``bird_eval.py collect``).

    python bench/fusion_sweep.py bench/out/rank-fixture.json bench/out/bird/rank-tuning.json ...

Prints recall@1/5/10, MRR@10, nDCG@5 and hit@5 for bm25, dense and each fusion
variant; used to choose the fusion on the tuning split only (docs/retrieval.md).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evidence_tool.activation.analysis import query_language
from evidence_tool.activation.fusion import METHODS, Fusion, fuse

Ranking = list[tuple[str, float]]


def metrics(ranked: list[str], relevant: set[str]) -> dict[str, float]:
    def recall(k: int) -> float:
        return len(set(ranked[:k]) & relevant) / len(relevant)

    rr = next((1 / n for n, u in enumerate(ranked[:10], 1) if u in relevant), 0.0)
    ideal = sum(1 / math.log2(n + 1) for n in range(1, min(len(relevant), 5) + 1))
    dcg = sum(1 / math.log2(n + 1) for n, u in enumerate(ranked[:5], 1) if u in relevant)
    return {
        "r@1": recall(1),
        "r@5": recall(5),
        "r@10": recall(10),
        "mrr@10": rr,
        "ndcg@5": dcg / ideal,
        "hit@5": float(bool(set(ranked[:5]) & relevant)),
    }


def score(
    rows: list[dict[str, object]], rank: Callable[[dict[str, object]], list[str]]
) -> dict[str, float]:
    total: dict[str, float] = {}
    for row in rows:
        got = metrics(rank(row), set(row["expected"]))  # type: ignore[arg-type]
        for k, v in got.items():
            total[k] = total.get(k, 0.0) + v
    return {k: round(v / len(rows), 3) for k, v in total.items()}


def lists(row: dict[str, object]) -> tuple[Ranking, Ranking]:
    lex = [(u, s) for u, s in row["bm25"]]  # type: ignore[attr-defined]
    den = [(u, s) for u, s in row["dense"]]  # type: ignore[attr-defined]
    if query_language(str(row["question"])) == "it":  # the model serves English only
        den = []
    return lex, den


def main() -> None:
    for path in sys.argv[1:]:
        rows = json.loads(Path(path).read_text())
        print(f"## {path} ({len(rows)} questions)")
        variants: dict[str, Callable[[dict[str, object]], list[str]]] = {
            "bm25": lambda r: [u for u, _ in r["bm25"]],  # type: ignore[attr-defined]
            "dense": lambda r: [u for u, _ in r["dense"]],  # type: ignore[attr-defined]
        }
        for method in METHODS:
            for w in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95):
                f = Fusion(method, w)
                variants[f"{method} w={w}"] = lambda r, f=f: [  # type: ignore[misc]
                    u for u, _ in fuse(*lists(r), f)
                ]
        for name, rank in variants.items():
            print(f"{name:14}", score(rows, rank))


if __name__ == "__main__":
    main()
