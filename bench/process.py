"""Whole-process timing: what a user waits for when running ``tht`` (issue 20).

    python bench/process.py ROOT [--src A --src B] [--repeat 5] -- ARGS...

Each figure is the median of ``--repeat`` runs of a fresh interpreter, measured with
``os.wait4`` (wall seconds, CPU seconds of the child and its peak RSS).  Runs of the
things compared are interleaved (A B A B ...), so a load that comes and goes on a
shared machine taxes both alike: compare ratios, not seconds.  ``--src`` runs the
package found in another source tree (``PYTHONPATH``), e.g. an export of the previous
commit, to get before/after figures of one change in one run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Run:
    wall: float
    cpu: float
    rss_mib: float


def clean_env(src: str | None = None) -> dict[str, str]:
    """The environment of a user's shell: bytecode caches written and read (a test
    runner's PYTHONDONTWRITEBYTECODE would charge a compile of every module to each run).
    The package is the one in ``src``, by default the tree this bench belongs to."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE",)}
    env["PYTHONPATH"] = src or str(HERE.parent)
    return env


def run_once(argv: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> Run:
    t = time.perf_counter()
    proc = subprocess.Popen(
        list(argv), cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode} in {cwd}")
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0)


def tht(*args: str) -> list[str]:
    """``tht ARGS`` as the console script runs it, in this interpreter."""
    return [sys.executable, "-m", "evidence_tool.cli.main", *args]


def median_run(runs: list[Run]) -> Run:
    return Run(
        statistics.median(r.wall for r in runs),
        statistics.median(r.cpu for r in runs),
        max(r.rss_mib for r in runs),
    )


def interleaved(
    jobs: dict[str, Callable[[], Run]], repeat: int, before: Callable[[str], None] | None = None
) -> dict[str, Run]:
    """Median of ``repeat`` runs of each job, in rounds that run every job once."""
    runs: dict[str, list[Run]] = {name: [] for name in jobs}
    for _ in range(repeat):
        for name, job in jobs.items():
            if before is not None:
                before(name)
            runs[name].append(job())
    return {name: median_run(r) for name, r in runs.items()}


def import_table(argv: Sequence[str], cwd: Path, top: int = 15) -> list[tuple[str, float]]:
    """The slowest imports (cumulative ms) of one run, from ``python -X importtime``."""
    env = clean_env()
    run_once(argv, cwd, env)  # write the bytecode caches first
    proc = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    rows: list[tuple[str, float]] = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line.split("|")
        indent = len(name) - len(name.lstrip())
        if indent <= 3:  # imported by the program itself, not below another module
            rows.append((name.strip(), int(cumulative) / 1000.0))
    return sorted(rows, key=lambda r: -r[1])[:top]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("--src", action="append", default=[], help="source tree (repeatable)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("args", nargs="+")
    ns = ap.parse_args()
    srcs = ns.src or [str(HERE.parent)]
    jobs = {src: (lambda src=src: run_once(tht(*ns.args), ns.root, clean_env(src))) for src in srcs}
    for src in srcs:  # bytecode caches written, page cache warm
        jobs[src]()
    results = interleaved(jobs, ns.repeat)
    first = results[srcs[0]]
    for src, r in results.items():
        print(
            f"{src:<40} wall {r.wall:7.3f} s  cpu {r.cpu:7.3f} s  rss {r.rss_mib:6.0f} MiB"
            f"  wall ratio {r.wall / first.wall:5.2f}  cpu ratio {r.cpu / first.cpu:5.2f}"
        )


if __name__ == "__main__":
    main()
