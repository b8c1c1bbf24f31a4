"""Whole-process CPU of the everyday commands in two source trees, interleaved (issue 32's
5% rule): ``tht --help``, a no-op consolidate, ``status``, one edited unit with the sqlite
activation, and the first consolidate after ``init``.

    python bench/compare_trees.py BEFORE_TREE AFTER_TREE [--rounds 21] [--n 2000]

Each tree runs its own code (``PYTHONPATH=TREE``) in this interpreter on its own copy of
one generated workspace (bench/generate.py, ``--n`` units, made under bench/out/); the
runs alternate tree by tree, and each figure is the median of ``--rounds`` runs of the
child's user + system CPU (getrusage), which a shared machine blurs less than wall time.
Both trees' modules are compiled to bytecode first, as an installed tool has them: a
tree edited since its last import (a merge, PYTHONDONTWRITEBYTECODE) would otherwise
compile its changed modules in every run and lose 10-40 ms a command to that.
Prints one row per command with the ratio after / before.  A tree checked out elsewhere
serves as BEFORE, e.g. ``git worktree add --detach /tmp/before 913ba7d``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.generate import generate  # noqa: E402

OUT = HERE / "out" / "compare"
EVIDENCE = ("workspace", "evidence")


def cpu(tree: Path, argv: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree), "THT_ACTOR": "bench"}
    env.pop("THT_INSTALLATION", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-m", "evidence_tool.cli.main", *argv], env=env, capture_output=True
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} in {tree} exited {done.returncode}: {done.stderr!r}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--n", type=int, default=2000)
    args = ap.parse_args()
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    for tree in trees.values():
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        compile_all = [sys.executable, "-m", "compileall", "-q", str(tree / "evidence_tool")]
        subprocess.run(compile_all, env=env, check=True, capture_output=True)
    base = OUT / f"base-{args.n}"
    if not base.exists():
        generate(args.n, base)
    ws = {}
    for name, tree in trees.items():
        ws[name] = OUT / name
        shutil.rmtree(ws[name], ignore_errors=True)
        shutil.copytree(base, ws[name], symlinks=True)
        cpu(tree, [*EVIDENCE, "consolidate", "--workspace-root", str(ws[name])])
    edits = iter(range(10**6))

    def edited(name: str) -> list[str]:
        unit = sorted((ws[name] / "evidence" / "curated").rglob("*.md"))[0]
        text = unit.read_text(encoding="utf-8")
        unit.write_text(text.replace("title: ", f"title: e{next(edits)} ", 1), encoding="utf-8")
        return [*EVIDENCE, "consolidate", "--workspace-root", str(ws[name])]

    def after_init(name: str) -> list[str]:
        fresh = OUT / f"{name}-init"
        shutil.rmtree(fresh, ignore_errors=True)
        shutil.copytree(base, fresh, symlinks=True)
        cpu(trees[name], [*EVIDENCE, "init", "--workspace-root", str(fresh)])
        return [*EVIDENCE, "consolidate", "--workspace-root", str(fresh)]

    commands: dict[str, Callable[[str], list[str]]] = {
        "tht --help": lambda name: ["--help"],
        "no-op consolidate": lambda n: [*EVIDENCE, "consolidate", "--workspace-root", str(ws[n])],
        "status": lambda n: [*EVIDENCE, "status", "--workspace-root", str(ws[n])],
        "1 edited unit (sqlite activation)": edited,
        "first consolidate after init": after_init,
    }
    print(f"N = {args.n} units, child CPU ms, median of {args.rounds} interleaved runs")
    print("| command | before | after | after / before |\n|---|---|---|---|")
    for label, argv_of in commands.items():
        times: dict[str, list[float]] = {name: [] for name in trees}
        for k in range(args.rounds):
            for name in list(trees)[:: 1 if k % 2 == 0 else -1]:
                argv = argv_of(name)
                times[name].append(cpu(trees[name], argv))
        b, a = (statistics.median(times[name]) for name in trees)
        print(f"| {label} | {b * 1000:.1f} | {a * 1000:.1f} | {a / b:.3f} |")


if __name__ == "__main__":
    main()
