"""One edited unit, and the first consolidate after init, as whole processes (issue 20).

    python bench/edit_process.py edit BASE --src A --src B [--repeat 7]
    python bench/edit_process.py init BASE --src A --src B [--repeat 5]

BASE is a generated workspace (``bench/generate.py 10000 BASE``).  ``edit``: for each
source tree, a consolidated copy of BASE; each round runs a no-op consolidate, then one
after an edit of one unit (as bench/run.py's ``touch_one``), for every tree in turn.
``init``: each run gets a fresh copy of BASE, ``init`` runs on it (timed too), then the
consolidate that follows it at once, as bench/run.py's "first consolidate after init".
Runs are interleaved (bench/process.py): read the CPU ratios first on a shared machine.
"""

from __future__ import annotations

import argparse
import itertools
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import process as P

CONSOLIDATE = ("workspace", "evidence", "consolidate")
INIT = ("workspace", "evidence", "init")


def edit_jobs(base: Path, srcs: list[str], scratch: Path) -> dict[str, Callable[[], P.Run]]:
    counter = itertools.count()
    jobs: dict[str, Callable[[], P.Run]] = {}
    for i, src in enumerate(srcs):
        ws = scratch / f"edit-{i}"
        shutil.copytree(base, ws)
        env = P.clean_env(src)
        P.run_once(P.tht(*CONSOLIDATE), ws, env)
        P.run_once(P.tht(*CONSOLIDATE), ws, env)  # proves and stamps the index rows

        def edited(ws: Path = ws, env: dict[str, str] = env) -> P.Run:
            P.touch_one(ws, next(counter))
            return P.run_once(P.tht(*CONSOLIDATE), ws, env)

        jobs[f"{src} no-op"] = lambda ws=ws, env=env: P.run_once(P.tht(*CONSOLIDATE), ws, env)
        jobs[f"{src} edit"] = edited
    time.sleep(1.2)  # older than the stat cache's racy window
    return jobs


def init_jobs(base: Path, srcs: list[str], scratch: Path) -> dict[str, Callable[[], P.Run]]:
    copies = P.Copies(scratch)  # deleted with scratch, after every run
    inits: dict[str, list[P.Run]] = {src: [] for src in srcs}
    jobs: dict[str, Callable[[], P.Run]] = {}
    for src in srcs:
        env = P.clean_env(src)

        def after_init(src: str = src, env: dict[str, str] = env) -> P.Run:
            ws = copies.make(base)
            inits[src].append(P.run_once(P.tht(*INIT), ws, env))
            return P.run_once(P.tht(*CONSOLIDATE), ws, env)

        jobs[f"{src} first consolidate after init"] = after_init
        jobs[f"{src} no-op (same workspace)"] = lambda env=env: P.run_once(
            P.tht(*CONSOLIDATE), scratch / "noop", env
        )
    shutil.copytree(base, scratch / "noop")
    P.run_once(P.tht(*CONSOLIDATE), scratch / "noop", P.clean_env(srcs[0]))
    INITS.update(inits)
    return jobs


INITS: dict[str, list[P.Run]] = {}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("edit", "init"))
    ap.add_argument("base", type=Path)
    ap.add_argument("--src", action="append", default=[])
    ap.add_argument("--repeat", type=int, default=7)
    ns = ap.parse_args()
    srcs = ns.src or [str(Path(__file__).resolve().parent.parent)]
    with tempfile.TemporaryDirectory(dir=ns.base.parent) as tmp:
        make = edit_jobs if ns.what == "edit" else init_jobs
        jobs = make(ns.base.resolve(), srcs, Path(tmp))
        for job in jobs.values():  # bytecode caches written, page cache warm
            job()
        for runs in INITS.values():
            runs.clear()  # the inits of the warm-up runs
        results = P.interleaved(jobs, ns.repeat)
    rows = dict(results)
    for src, runs in INITS.items():
        rows[f"{src} init"] = P.median_run(runs)
    for name, r in rows.items():
        print(P.line(name, r, 60))
    for src in srcs:
        a, b = _pair(rows, src, ns.what)
        print(
            f"{src:<40} ratio {b.wall / a.wall:5.2f} wall  {b.cpu / a.cpu:5.2f} cpu"
            " (edit or after-init / no-op)"
        )


def _pair(rows: dict[str, P.Run], src: str, what: str) -> tuple[P.Run, P.Run]:
    if what == "edit":
        return rows[f"{src} no-op"], rows[f"{src} edit"]
    return rows[f"{src} no-op (same workspace)"], rows[f"{src} first consolidate after init"]


if __name__ == "__main__":
    main()
