"""``eval --adopt``: choose the workspace's search mode and fusion from its own questions.

Every question is ranked once by BM25 and once by the dense model (``FUSION_DEPTH``
units each, as hybrid search ranks them); then each candidate is scored on those
rankings: ``bm25``, ``dense``, and ``hybrid`` with every fusion method and lexical
weight 0.1 ... 0.9 (and the built-in one).  The choice never loses to a part on this
question set:

1. a hybrid candidate qualifies when it is at least as good as the better of bm25 and
   dense on each of recall@k, MRR and nDCG@k, and better by at least one question's
   worth (1 / the questions scored) summed over the three; of those, the one whose
   smallest margin over that better part is largest wins (ties: the higher mean of the
   three figures); candidates within one question's worth of it on both are not told
   apart by these questions, and the built-in, or the weight nearest it, wins among them;
2. when none qualifies, the better single mode (by the mean of the three) is adopted.

The choice and the figures it rests on are written into workspace.yaml's
``retrieval`` section, so the change is a diff a reviewer sees (and reverts) in Git;
``search`` without ``--mode`` then runs it.  The sqlite backend only: qdrant
collections keep their built-in fusion settings (``retrieval`` applies to them too,
but ``--adopt`` measures the sqlite index).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from evidence_tool import fsio
from evidence_tool.activation.analysis import query_language
from evidence_tool.activation.dense import FUSION_DEPTH
from evidence_tool.activation.evaluation import (
    Question,
    QuestionEmbedder,
    _dense,
    _score,
    question_set,
)
from evidence_tool.activation.fusion import DEFAULT, METHODS, Fusion, Ranking, fuse
from evidence_tool.activation.search import searchable_backend
from evidence_tool.activation.sqlite_index import INDEX_NAME, search_path
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.embedding import serves
from evidence_tool.errors import ConflictError, NotReadyError, UsageError
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.record import AnyObject, Record
from evidence_tool.unit.yaml_strict import dump
from evidence_tool.workspace.descriptor import (
    parse_descriptor,
    parse_yaml_bytes,
    read_descriptor,
    validate_descriptor,
)

# 0.1 ... 0.9, and the built-in weight, so the built-in setting is always a candidate.
WEIGHTS = tuple(sorted({round(0.1 * n, 1) for n in range(1, 10)} | {DEFAULT.weight}))
DESCRIPTOR = "workspace.yaml"
SCHEMA = "workspace.schema.json"


class Figures(Record, frozen=True):
    recall: float
    mrr: float
    ndcg: float

    @property
    def mean(self) -> float:
        return (self.recall + self.mrr + self.ndcg) / 3


class Adoption(Record, frozen=True, kw_only=True):
    """What ``eval --adopt`` wrote: the --json result's ``adopted``."""

    mode: str
    fusion: Fusion | None  # hybrid only
    reason: str  # why this candidate (one sentence)
    descriptor: str = DESCRIPTOR
    retrieval: AnyObject  # what workspace.yaml's retrieval now holds


def _label(f: Fusion) -> str:
    return f"hybrid {f.method} {f.weight:g}"


def _figures(rankings: list[list[str]], wanted: list[set[str]], k: int) -> Figures:
    scores = [_score(r, w, k) for r, w in zip(rankings, wanted, strict=True)]
    recall, rr, ndcg, _ = zip(*scores, strict=True)  # each figure's column
    return Figures(*(round(sum(figure) / len(scores), 4) for figure in (recall, rr, ndcg)))


def _floor(figures: dict[str, Figures]) -> Figures:
    """The better of bm25 and dense on each figure."""
    parts = [figures[m] for m in ("bm25", "dense") if m in figures]
    return Figures(*(max(getattr(p, a) for p in parts) for a in ("recall", "mrr", "ndcg")))


def _choose(
    figures: dict[str, Figures],
    fusions: dict[str, Fusion],
    questions: int,
) -> tuple[str, str]:
    """The adopted candidate's label and why (module docstring)."""
    floor = _floor(figures)

    def margin(f: Figures) -> float:
        return min(f.recall - floor.recall, f.mrr - floor.mrr, f.ndcg - floor.ndcg)

    def key(label: str) -> tuple[float, float, bool, float]:
        f = fusions[label]
        is_default = f == DEFAULT
        return (
            round(margin(figures[label]), 4),
            round(figures[label].mean, 4),
            is_default,
            -abs(f.weight - DEFAULT.weight),
        )

    def gain(f: Figures) -> float:
        return f.recall - floor.recall + f.mrr - floor.mrr + f.ndcg - floor.ndcg

    # A gain smaller than one question's worth is one question's rank, which the next
    # question set takes back (a BIRD-shaped corpus did, tests/embedding): keep the part.
    worth = 1 / max(questions, 1)
    qualified = [
        label
        for label in fusions
        if margin(figures[label]) >= 0 and gain(figures[label]) >= worth - 1e-9
    ]
    if qualified:
        top = max(qualified, key=key)
        # Candidates within one question's worth of the top (smallest margin and summed
        # gain) are not told apart by these questions: the built-in, or the weight
        # nearest it, is taken among them.
        tied = [
            label
            for label in qualified
            if margin(figures[label]) >= margin(figures[top]) - worth
            and gain(figures[label]) >= gain(figures[top]) - worth
        ]
        best = max(tied, key=lambda label: key(label)[2:] + key(label)[:2])
        return best, (
            f"{best} is at least as good as bm25 and dense on recall, MRR and nDCG "
            f"(smallest margin {margin(figures[best]):+.4f})"
        )
    single = max(("bm25", "dense"), key=lambda m: figures[m].mean if m in figures else -1.0)
    return single, (
        f"no fusion was at least as good as both parts on all three figures and better by "
        f"one question's worth ({worth:.4f} summed over them): {single}, the better part, "
        "is adopted"
    )


def adopt(
    archive: LocalEvidenceArchive,
    questions_path: str,
    *,
    k: int = 5,
    activation: JsonObject | None = None,
    embedding: JsonObject | None = None,
) -> Adoption:
    """Measure every candidate on ``questions_path`` and write the choice into workspace.yaml."""
    layout = archive.layout
    settings = searchable_backend(activation or {}, layout)
    if settings.kind != "sqlite":
        raise UsageError(
            "eval --adopt measures the sqlite index; with the qdrant backend, run eval without "
            "--adopt and write workspace.yaml's retrieval section by hand (docs/retrieval.md)"
        )
    questions, revision, retired = question_set(archive, questions_path)
    scored = [q for q in questions if set(q.expected) - set(retired)]
    if not scored:
        raise UsageError(f"{questions_path}: every expected id is retired: nothing to adopt from")
    path = layout.cache / INDEX_NAME
    if not path.is_file():
        raise NotReadyError("no search index yet: run 'tht workspace evidence consolidate'")
    dense = _dense(embedding or {}, ["hybrid"], layout.cache / "embeddings")
    wanted = [set(q.expected) - set(retired) for q in scored]
    figures, fusions = _candidates(path, scored, wanted, dense.embedder, k)
    label, reason = _choose(figures, fusions, len(scored))
    fusion = fusions.get(label)
    mode = "hybrid" if fusion else label
    section: JsonObject = {"mode": mode}
    if fusion:
        section["fusion"] = fusion.to_json()
    section["adopted"] = {
        "questions": Path(questions_path).name,
        "scored": len(scored),
        "k": k,
        "model": dense.embedder.model_id if dense.embedder else None,
        "revision": revision,
        "reason": reason,
        "figures": {
            name: figures[name].to_json()
            for name in dict.fromkeys(["bm25", "dense", _label(DEFAULT), label])
            if name in figures
        },
    }
    _write(layout.descriptor, section)
    return Adoption(mode=mode, fusion=fusion, reason=reason, retrieval=section)


def _candidates(
    path: Path,
    scored: list[Question],
    wanted: list[set[str]],
    qe: QuestionEmbedder | None,
    k: int,
) -> tuple[dict[str, Figures], dict[str, Fusion]]:
    """The figures of bm25, of dense and of every fusion (by label) on one ranking of each
    question per side; dense and the fusions only with a model."""
    lexical = [_ranking(path, q, "bm25", None) for q in scored]
    figures = {"bm25": _figures([[u for u, _ in r] for r in lexical], wanted, k)}
    fusions: dict[str, Fusion] = {}
    if qe is None:
        return figures, fusions
    qe.prepare([q.question for q in scored])
    semantic = [_ranking(path, q, "dense", qe) for q in scored]
    figures["dense"] = _figures([[u for u, _ in r] for r in semantic], wanted, k)
    # As hybrid search does: a question the model does not serve goes by its words.
    served = [serves(qe, query_language(q.question)) for q in scored]
    for method in METHODS:
        for weight in WEIGHTS:
            f = Fusion(method, weight)
            fused = [
                [u for u, _ in fuse(lx, sm if ok else [], f)]
                for lx, sm, ok in zip(lexical, semantic, served, strict=True)
            ]
            fusions[_label(f)] = f
            figures[_label(f)] = _figures(fused, wanted, k)
    return figures, fusions


def _ranking(path: Path, q: Question, mode: str, embedder: QuestionEmbedder | None) -> Ranking:
    try:
        found = search_path(path, q.question, q.filters, FUSION_DEPTH, mode, lambda: embedder)
    except UsageError:  # only stop words: nothing found, as eval counts it
        return []
    if mode == "bm25":  # the lexical side as hybrid sees it: the name boost included
        return [(h.id, h.score) for h in found.hits]
    return [(h.id, h.dense or 0.0) for h in found.hits]


def _write(descriptor: Path, section: JsonObject) -> None:
    """workspace.yaml with ``retrieval`` replaced, written only while it still holds the
    bytes read (an editor saving meanwhile is E301, nothing written), as ``sources add``."""
    data = read_descriptor(descriptor, "workspace descriptor")
    value = parse_yaml_bytes(data, DESCRIPTOR)
    validate_descriptor(value, SCHEMA, DESCRIPTOR)
    assert isinstance(value, dict)  # the schema made it a mapping
    value["retrieval"] = section
    out = dump(value).encode("utf-8")
    parse_descriptor(out, SCHEMA, DESCRIPTOR)
    try:
        fsio.write_atomic(descriptor, out, expected=hashlib.sha256(data).hexdigest())
    except fsio.Changed:
        raise ConflictError(
            f"{DESCRIPTOR} changed while the adopted settings were written (an editor saved "
            "it?); nothing was written: run 'eval --adopt' again",
            path=DESCRIPTOR,
        ) from None


__all__ = ["Adoption", "adopt"]
