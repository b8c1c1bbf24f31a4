"""The first consolidate against validate, as whole processes (issue 20).

    python bench/first_consolidate.py ROOT [--src A --src B] [--repeat 5]

For each source tree (``--src``, default this one): ``validate`` of ROOT and the first
``consolidate`` of a fresh copy of ROOT (copied outside the measured time), all runs
interleaved (see process.py), medians of wall and CPU seconds, peak RSS, and the ratio
first consolidate / validate of each tree.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import process as P


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("--src", action="append", default=[])
    ap.add_argument("--repeat", type=int, default=5)
    ns = ap.parse_args()
    ns.root = ns.root.resolve()  # the runs' working folder is not this one
    srcs = ns.src or [str(P.HERE.parent)]
    copies = P.Copies(Path(tempfile.mkdtemp(prefix="first-", dir=ns.root.parent)))

    def first(src: str) -> P.Run:
        root = copies.make(ns.root)
        return P.run_once(P.tht("workspace", "evidence", "consolidate"), root, P.clean_env(src))

    jobs = {}
    for i, src in enumerate(srcs):
        jobs[f"{i} validate"] = lambda src=src: P.run_once(
            P.tht("workspace", "evidence", "validate"), ns.root, P.clean_env(src)
        )
        jobs[f"{i} first consolidate"] = lambda src=src: first(src)
    try:
        results = P.warmed(jobs, ns.repeat)
    finally:
        copies.close()
    for i, src in enumerate(srcs):
        v, c = results[f"{i} validate"], results[f"{i} first consolidate"]
        print(f"{src}")
        for name, r in (("validate", v), ("first consolidate", c)):
            print("  " + P.line(name, r, 18))
        print(
            f"  ratio consolidate/validate: wall {c.wall / v.wall:4.2f}  cpu {c.cpu / v.cpu:4.2f}"
        )


if __name__ == "__main__":
    main()
