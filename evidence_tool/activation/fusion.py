"""Fusing the lexical (BM25) and dense (cosine) rankings of a hybrid search.

Each ranking's raw scores live on their own scale (BM25 is unbounded and depends on
the corpus; cosine similarities of one model bunch in a narrow band), so each is
first normalised over its own candidates, then the two are mixed with a weight:

- ``minmax``: ``(s - min) / (max - min)`` per ranking (a lone candidate scores 1);
- ``max``: ``s / max`` per ranking (negatives clamped to 0);
- ``rrf``: reciprocal rank fusion (ranks only, ``1 / (60 + rank)``), weighted the same.

``weight`` is the lexical ranking's share (1: BM25 alone, 0: dense alone).  A unit
missing from one ranking scores 0 there.  When one ranking is empty (a query in a
language the model does not serve) the other decides alone.  The fused score of the
best hit is at most 1 and means "this much of the evidence, on each side's own
scale, points here"; docs/retrieval.md has the measurements behind the default.
"""

from __future__ import annotations

from evidence_tool.errors import DescriptorError
from evidence_tool.record import Record

RRF_K = 60  # the constant of Cormack et al. (2009): damps the weight of the top ranks
# z-scores were measured too: once shifted to a common floor they rank exactly as minmax
# (an affine map per ranking), so they are not offered.
METHODS = ("max", "minmax", "rrf")

Ranking = list[tuple[str, float]]


class Fusion(Record, frozen=True):
    """How hybrid mixes its two rankings (the workspace may adopt another: eval --adopt)."""

    method: str = "max"
    # The lexical ranking's share: what eval --adopt picks on BIRD's tuning split.
    weight: float = 0.9

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise DescriptorError(
                f"retrieval.fusion.method '{self.method}' is not one of {', '.join(METHODS)}"
            )
        if not (isinstance(self.weight, int | float) and 0.0 <= self.weight <= 1.0):
            raise DescriptorError(
                f"retrieval.fusion.weight must be a number from 0 to 1, not {self.weight!r}"
            )


DEFAULT = Fusion()


class Retrieval(Record, frozen=True):
    """A workspace's ``retrieval`` section (workspace.yaml): the mode ``search`` runs when
    none is asked for, and the fusion of ``hybrid``.  Written by ``eval --adopt``,
    reviewed in Git like any other change of behaviour."""

    _section = "retrieval"  # None: no section, the defaults; a wrong type is E902 naming its path
    _error = DescriptorError
    mode: str | None = None  # None: hybrid when the index holds vectors, else bm25
    fusion: Fusion = DEFAULT


def _minmax(ranking: Ranking) -> dict[str, float]:
    if not ranking:
        return {}
    values = [s for _, s in ranking]
    low, high = min(values), max(values)
    span = high - low
    return {u: (s - low) / span if span > 0 else 1.0 for u, s in ranking}


def _max(ranking: Ranking) -> dict[str, float]:
    best = max((s for _, s in ranking), default=0.0)
    return {u: max(0.0, s) / best if best > 0 else 0.0 for u, s in ranking}


def _rrf(ranking: Ranking) -> dict[str, float]:
    # Scaled so rank 1 scores 1: the two sides then mix like the score-based methods.
    return {u: (RRF_K + 1) / (RRF_K + n) for n, (u, _) in enumerate(ranking, 1)}


_NORMALISE = {"minmax": _minmax, "max": _max, "rrf": _rrf}


def fuse(lexical: Ranking, dense: Ranking, fusion: Fusion = DEFAULT) -> Ranking:
    """The units of both rankings (each best first, with raw scores), best fused first;
    ties broken by id so the order is the same every time."""
    norm = _NORMALISE[fusion.method]
    lex, den = norm(lexical), norm(dense)
    w = fusion.weight
    if not den:
        w = 1.0
    elif not lex:
        w = 0.0
    fused = {u: w * lex.get(u, 0.0) + (1 - w) * den.get(u, 0.0) for u in lex.keys() | den.keys()}
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))
