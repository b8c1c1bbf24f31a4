"""``validate`` as a whole process beside the dependency floor, per source tree (issue 20).

    python bench/validate_floor.py ROOT [--repeat 5] [--serial] [--src A --src B ...]

Runs the floor (``bench.run.floor_pass`` as a process) and ``tht workspace evidence
validate`` of each ``--src`` tree (with ``--serial``, also with ``THT_SERIAL=1``) in
interleaved rounds (bench/process.py), and prints the medians of wall and CPU seconds
with each one's ratio to the floor.  Compare ratios on a shared machine, not seconds.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import process as P
from bench.run import _floor_argv

VALIDATE = ("workspace", "evidence", "validate")


def _validate(root: Path, env: dict[str, str]) -> Callable[[], P.Run]:
    return lambda: P.run_once(P.tht(*VALIDATE), root, env)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("--src", action="append", default=[], help="source tree (repeatable)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--serial", action="store_true", help="also run each with THT_SERIAL=1")
    ns = ap.parse_args()
    root = ns.root.resolve()  # the floor runs in ROOT: a relative path would find no file
    jobs: dict[str, Callable[[], P.Run]] = {
        "floor": lambda: P.run_once(_floor_argv(root), root, P.clean_env())
    }
    for src in ns.src or [str(P.HERE.parent)]:
        env = P.clean_env(src)
        jobs[src] = _validate(root, env)
        if ns.serial:
            jobs[f"{src} serial"] = _validate(root, {**env, "THT_SERIAL": "1"})
    results = P.warmed(jobs, ns.repeat)
    floor = results["floor"]
    for name, r in results.items():
        print(
            f"{name:<36} wall {r.wall:6.3f} s  cpu {r.cpu:6.3f} s"
            f"  cpu/floor {r.cpu / floor.cpu:5.2f}  wall/floor {r.wall / floor.wall:5.2f}"
        )


if __name__ == "__main__":
    main()
