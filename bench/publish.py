"""Publishing benchmark (issue 33): each format against ``export --format jsonl``.

    python bench/publish.py [--n 10000] [--repeat 3]

Generates (once) a deterministic N-unit workspace under bench/out/publish-<n>/ (every
kind, both languages: bench/generate.py), consolidates and activates it (the default
sqlite index, built once, outside the timings), then times in this process, on the same warm
snapshot, each a fresh output (a new file or folder per run, nothing deleted before a
timed write):

- ``export``: ``open_active_corpus`` + ``export_corpus`` (what ``export --output`` does);
- ``publish --format F`` for cortex, wrenai, vanna, dbt and jsonl.

It prints the median seconds of --repeat runs, µs per unit, and the ratio to export
(target: at most 2x).  Nothing here asserts: the figures go into docs/performance.md
(## Publishing) with the command that produced them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.generate import generate  # noqa: E402

FORMATS = ("cortex", "wrenai", "vanna", "dbt", "jsonl")
OUTPUT = {"cortex": "model.yaml", "vanna": "training.jsonl", "jsonl": "corpus.jsonl"}


def workspace(n: int) -> Path:
    root = HERE / "out" / f"publish-{n}"
    if not (root / "evidence" / ".local" / "state.yaml").exists():
        if not (root / "workspace.yaml").exists():
            generate(n, root)
        env = {**os.environ, "THT_ACTOR": "bench"}
        env.pop("THT_INSTALLATION", None)
        for step in ("init", "consolidate"):
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "evidence_tool.cli.main",
                    "workspace",
                    "evidence",
                    step,
                    "--workspace-root",
                    str(root),
                ],
                check=True,
                env=env,
                capture_output=True,
            )
    return root


def median(fn: Callable[[int], object], repeat: int) -> float:
    runs = []
    for i in range(repeat):
        t = time.perf_counter()
        fn(i)
        runs.append(time.perf_counter() - t)
    return statistics.median(runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    from evidence_tool.activation.reader import export_corpus, open_active_corpus
    from evidence_tool.publish import publish

    root = workspace(args.n)
    stamp = str(time.time_ns())  # fresh names each invocation: no file is replaced
    out = root / "published" / stamp

    def export(i: int) -> None:
        export_corpus(root, open_active_corpus(root), str(out / f"export-{i}.jsonl"))

    def publisher(fmt: str) -> Callable[[int], object]:
        return lambda i: publish(root, fmt, str(out / f"{fmt}-{i}" / OUTPUT.get(fmt, "out")))

    export(-1)  # warm-up: the first run would also pay for the parser's imports
    for fmt in FORMATS:
        publisher(fmt)(-1)
    base = median(export, args.repeat)
    print(f"N = {args.n}, median of {args.repeat} run(s), in-process")
    print(f"{'':>18} {'seconds':>8} {'µs/unit':>8} {'x export':>9}  target")
    print(f"{'export jsonl':>18} {base:8.3f} {base / args.n * 1e6:8.0f} {1:9.2f}")
    for fmt in FORMATS:
        t = median(publisher(fmt), args.repeat)
        verdict = "met" if t <= 2 * base else "NOT met"
        print(
            f"{'publish ' + fmt:>18} {t:8.3f} {t / args.n * 1e6:8.0f} {t / base:9.2f}  <= 2x: {verdict}"
        )


if __name__ == "__main__":
    main()
