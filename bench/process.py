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
import contextlib
import itertools
import os
import shutil
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


def touch_one(root: Path, n: int) -> None:
    """Edit one unit visibly (its first domain unit gains a sentence numbered ``n``)."""
    path = sorted((root / "evidence" / "curated" / "domain").glob("*.md"))[0]
    path.write_text(
        path.read_text(encoding="utf-8").rstrip("\n") + f" Edit {n}.\n", encoding="utf-8"
    )


class Copies:
    """Fresh copies of a generated tree, made outside the measured time.

    Each copy (and what ``prepare`` does to it) reaches the disk before the clock
    starts: a consolidation's one syncfs would otherwise flush it on its time.  No copy
    is deleted before ``close``: on some disks, creating files is several times slower
    for minutes after many were deleted (SPEC.md 12), which would tax the next run.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.made: list[Path] = []
        self._n = itertools.count()

    def make(self, base: Path, prepare: Callable[[Path], object] | None = None) -> Path:
        copy = self.folder / f"{base.name}-{next(self._n)}-{time.time_ns()}"
        shutil.copytree(base, copy)
        self.made.append(copy)
        if prepare is not None:
            prepare(copy)
        os.sync()
        return copy

    def close(self) -> None:
        """Delete every copy, and the folder if nothing else is left in it."""
        for copy in self.made:
            shutil.rmtree(copy, ignore_errors=True)
        self.made.clear()
        with contextlib.suppress(OSError):
            self.folder.rmdir()


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


def warmed(jobs: dict[str, Callable[[], Run]], repeat: int) -> dict[str, Run]:
    """``interleaved``, after one unmeasured run of each job: bytecode caches written,
    page cache warm."""
    for job in jobs.values():
        job()
    return interleaved(jobs, repeat)


def line(name: str, r: Run, width: int = 40) -> str:
    return f"{name:<{width}} wall {r.wall:7.3f} s  cpu {r.cpu:7.3f} s  rss {r.rss_mib:6.0f} MiB"


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
    results = warmed(jobs, ns.repeat)
    first = results[srcs[0]]
    for src, r in results.items():
        print(
            f"{line(src, r)}  wall ratio {r.wall / first.wall:5.2f}"
            f"  cpu ratio {r.cpu / first.cpu:5.2f}"
        )


if __name__ == "__main__":
    main()
