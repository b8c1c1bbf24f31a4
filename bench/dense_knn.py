"""Dense ranking in the sqlite index: sqlite-vec's KNN (the ``vec`` extra) against the
plain-Python fallback, on N synthetic 384-dimension vectors (all-MiniLM-L6-v2's size).

    python bench/dense_knn.py [--n 10000 --n 50000] [--queries 20]

Per N: the time to fill ``vec_units`` from ``vectors`` (what an activation adds), the
file's size with and without it, and p50/p95 of one dense ranking per path, with the
depth search uses (``FUSION_DEPTH`` = 100) over the whole index and with a filter that
keeps a third of the units.  Both paths must return the same hits (checked on every
query).  The query's own embedding by a model comes on top.  Nothing asserts: the
figures go into docs/retrieval.md "How far the plain-Python ranking goes".
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from evidence_tool.activation import dense, vec  # noqa: E402
from evidence_tool.activation.sqlite_schema import _SCHEMA  # noqa: E402
from evidence_tool.activation.sqlite_search import Filters, _where  # noqa: E402
from evidence_tool.embedding.vectors import normalized, to_blob  # noqa: E402

DIM = 384
KINDS = ("glossary", "formula", "mapping")


def _index(path: Path, n: int, rng: random.Random) -> None:
    con = vec.connect(path) if vec.driver() else None
    if con is None:
        raise SystemExit("the vec extra does not load here: pip install 'evidence-tool[vec]'")
    try:
        con.executescript(_SCHEMA)
        con.execute("CREATE TABLE vectors(id TEXT PRIMARY KEY, vec BLOB NOT NULL)")
        for i in range(n):
            uid = f"evidence:bench:u{i:06d}"
            con.execute(
                "INSERT INTO units VALUES (?,?,?,?,?,?,?)",
                (uid, KINDS[i % 3], "en", "t", "p", "h", "{}"),
            )
            blob = to_blob(normalized([rng.gauss(0, 1) for _ in range(DIM)]))
            con.execute("INSERT INTO vectors VALUES (?,?)", (uid, blob))
        con.commit()
    finally:
        con.close()


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered) * 1000:8.1f} ms  p95 {p95 * 1000:8.1f} ms"


def run(n: int, queries: int, folder: Path) -> None:
    rng = random.Random(n)
    path = folder / f"bench-{n}.sqlite"
    _index(path, n, rng)
    plain_size = path.stat().st_size
    con = vec.connect(path)
    try:
        started = time.perf_counter()
        vec.sync(con, DIM)
        con.commit()
        fill = time.perf_counter() - started
        con.execute("VACUUM")
        print(f"n={n}: vec_units filled in {fill:.1f} s; file {plain_size / 2**20:.0f} MiB "
              f"-> {path.stat().st_size / 2**20:.0f} MiB")  # fmt: skip
        qs = [normalized([rng.gauss(0, 1) for _ in range(DIM)]) for _ in range(queries)]
        for label, filters in (("all units", Filters()), ("kind filter", Filters("formula"))):
            where, args = _where(filters)
            times: dict[str, list[float]] = {"vec": [], "python": []}
            for q in qs:
                t0 = time.perf_counter()
                fast, served = dense.ranked(con, q, where, args, dense.FUSION_DEPTH)
                t1 = time.perf_counter()
                slow = dense.dense_ranking(con, q, where, args, dense.FUSION_DEPTH)
                t2 = time.perf_counter()
                if served != "vec" or fast != slow:
                    raise SystemExit(f"the paths disagree at n={n} ({label})")
                times["vec"].append(t1 - t0)
                times["python"].append(t2 - t1)
            for path_name, samples in times.items():
                print(f"  {label:11}  {path_name:6}  {_ms(samples)}")
    finally:
        con.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, action="append", help="vectors (repeatable)")
    parser.add_argument("--queries", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for n in args.n or [10_000, 50_000]:
            run(n, args.queries, Path(folder))


if __name__ == "__main__":
    main()
