"""Benchmark runner: each SPEC.md 12 figure beside its floor, in one process, on one workspace.

    python bench/run.py [--n 10000] [--repeat 3] [--memory]

Generates (once) a deterministic workspace under bench/out/, then measures:
the dependency floor (read + C safe YAML load + heading/fence-only markdown-it
parse per file), os.stat of every file, full validate, first consolidate,
no-op consolidate, a one-unit change, activation into the sqlite index, and
`git add -A && git commit` as an external anchor.  Prints seconds, µs per
unit, the ratio to each target's reference and the target itself.  With
--memory it also runs a consolidate in a child process and reports its peak
RSS.  Times are medians of --repeat runs.  Nothing here asserts: the figures
go into docs/performance.md with the command that produced them.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.generate import generate  # noqa: E402

OUT = HERE / "out"


def timed(fn: Callable[[], object], repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t)
    return statistics.median(runs)


def unit_files(root: Path) -> list[Path]:
    return sorted((root / "evidence" / "curated").rglob("*.md"))


def floor_pass(files: list[Path]) -> None:
    """What any tool must do per unit: read, strict YAML load, block-structure parse."""
    from markdown_it import MarkdownIt
    from ruamel.yaml.cyaml import CSafeLoader

    md = MarkdownIt("zero").enable(["heading", "fence"])
    md.disable(["inline", "text_join"], ignoreInvalid=True)
    for path in files:
        text = path.read_bytes().decode("utf-8")
        end = text.index("\n---\n", 3)
        loader = CSafeLoader(text[4 : end + 1])
        try:
            loader.get_single_data()
        finally:
            loader.dispose()
        md.parse(text[end + 5 :])


def stat_pass(files: list[Path]) -> None:
    for path in files:
        os.stat(path)


def fresh_copy(src: Path, tag: str) -> Path:
    dest = OUT / f"{src.name}-{tag}-{time.time_ns()}"
    shutil.copytree(src, dest)
    return dest


def consolidate(root: Path) -> object:
    from evidence_tool.archive.local import LocalEvidenceArchive

    return LocalEvidenceArchive(root).consolidate("bench")


def touch_one(root: Path, n: int) -> None:
    path = sorted((root / "evidence" / "curated" / "domain").glob("*.md"))[0]
    path.write_text(
        path.read_text(encoding="utf-8").rstrip("\n") + f" Edit {n}.\n", encoding="utf-8"
    )


def git_anchor(root: Path) -> float:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@x",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@x",
    }
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    t = time.perf_counter()
    subprocess.run(
        f"git -C '{root}' add -A && git -C '{root}' commit -qm bench",
        shell=True,
        check=True,
        env=env,
    )
    return time.perf_counter() - t


def peak_rss_of_consolidate(root: Path) -> float:
    code = (
        "import sys; from evidence_tool.archive.local import LocalEvidenceArchive as A; "
        "A(sys.argv[1]).consolidate('bench')"
    )
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    subprocess.run([sys.executable, "-c", code, str(root)], check=True, cwd=HERE.parent)
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(before, after) / 1024.0


# Copies are removed when every size is measured: creating files is several times slower
# for minutes after many files were deleted, which would tax the next size's figures.
COPIES: list[Path] = []


def run(n: int, repeat: int, memory: bool) -> list[tuple[str, float, str, str]]:
    from evidence_tool.activation.sqlite_index import SqliteBackend
    from evidence_tool.archive.local import LocalEvidenceArchive
    from evidence_tool.workspace import validate_workspace
    from evidence_tool.workspace.layout import Layout

    base = OUT / f"ws-{n}"
    if not base.exists():
        generate(n, base)
    files = unit_files(base)
    floor_pass(files)  # warm the page cache and imports
    floor = timed(lambda: floor_pass(files), repeat)
    validate = timed(lambda: validate_workspace(base), repeat)

    copies = [fresh_copy(base, f"c{i}") for i in range(repeat)]
    firsts = []
    for c in copies:
        t = time.perf_counter()
        consolidate(c)
        firsts.append(time.perf_counter() - t)
    first = statistics.median(firsts)
    ws = copies[0]
    consolidate(ws)  # settle the stat cache: files copied this second are racily clean
    noop = timed(lambda: consolidate(ws), repeat)
    ws_files = unit_files(ws)
    stat = timed(lambda: stat_pass(ws_files), repeat)

    def load_state() -> None:
        # "Loading the state": state.yaml and the newest snapshot manifest it points at.
        archive = LocalEvidenceArchive(ws)
        newest = archive.state().newest
        assert newest is not None
        archive.snapshot(newest)

    state_load = timed(load_state, repeat)
    counter = iter(range(1000))
    changes = []
    for _ in range(repeat):
        touch_one(ws, next(counter))
        t = time.perf_counter()
        consolidate(ws)
        changes.append(time.perf_counter() - t)
    one = statistics.median(changes)
    archive = LocalEvidenceArchive(ws)
    snap = archive.newest_snapshot()
    assert snap is not None
    backend = SqliteBackend(Layout.at(ws))
    activation = timed(lambda: backend(snap), 1)
    # The index now holds the newest snapshot: a change updates it instead of rebuilding.
    activated = []
    for _ in range(repeat):
        touch_one(ws, next(counter))
        t = time.perf_counter()
        LocalEvidenceArchive(ws).consolidate("bench", backend)
        activated.append(time.perf_counter() - t)
    one_activated = statistics.median(activated)
    git_copy = fresh_copy(base, "git")
    git = git_anchor(git_copy)
    copies.append(git_copy)

    rows = [
        ("floor: read + C YAML + md parse", floor, "1.00 (reference)", "-"),
        ("os.stat of every file", stat, "-", "-"),
        ("validate (full)", validate, f"{validate / floor:.2f} x floor", "<= 2x floor"),
        (
            "first consolidate (no activation)",
            first,
            f"{first / validate:.2f} x validate",
            "<= 2x validate",
        ),
        ("load state (state.yaml + manifest)", state_load, "-", "-"),
        ("no-op consolidate", noop, f"{noop / (stat + state_load):.2f} x (stat + state)", "<= 3x"),
        ("consolidate 1 changed unit", one, f"{one / noop:.2f} x no-op", "<= 1.5x no-op"),
        ("sqlite activation (index build)", activation, "-", "-"),
        (
            "1 changed unit + sqlite activation",
            one_activated,
            f"{one_activated / activation:.3f} x index build",
            "-",
        ),
        ("git add -A && git commit (anchor)", git, f"{git / floor:.2f} x floor", "-"),
    ]
    if memory:
        big = fresh_copy(base, "mem")
        copies.append(big)
        rows.append(
            (
                f"peak RSS of consolidate (MiB, N={n})",
                peak_rss_of_consolidate(big),
                "-",
                "< 1024 MiB at 50k",
            )
        )
    COPIES.extend(copies)
    return rows


def fit_exponent(points: list[tuple[int, float]]) -> float:
    """Least-squares slope of log(seconds) over log(N): 1.0 is linear."""
    import math

    xs = [math.log(n) for n, _ in points]
    ys = [math.log(t) for _, t in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )


def main() -> None:
    ap = argparse.ArgumentParser(description="evidence-tool benchmark runner")
    ap.add_argument("--n", type=int, action="append", help="units (repeatable); default 10000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--memory", action="store_true", help="also measure peak RSS")
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    sizes = args.n or [10000]
    by_op: dict[str, list[tuple[int, float]]] = {}
    for n in sizes:
        rows = run(n, args.repeat, args.memory)
        for name, secs, _, _ in rows:
            by_op.setdefault(name, []).append((n, secs))
        print(f"\nN = {n} units, median of {args.repeat} runs, {os.cpu_count()} cores")
        print(f"| {'operation':<38} | {'seconds':>9} | {'µs/unit':>9} | {'ratio':<24} | target |")
        print(f"|{'-' * 40}|{'-' * 11}|{'-' * 11}|{'-' * 26}|--------|")
        for name, secs, ratio, target in rows:
            if name.startswith("peak"):
                print(f"| {name:<38} | {secs:>9.0f} | {'':>9} | {ratio:<24} | {target} |")
            else:
                print(
                    f"| {name:<38} | {secs:>9.3f} | {secs / n * 1e6:>9.1f} | {ratio:<24} "
                    f"| {target} |"
                )

    for c in COPIES:
        shutil.rmtree(c, ignore_errors=True)
    if len(sizes) > 1:
        print(f"\nscaling exponent (fit of log seconds over log N, N = {sizes}; 1.0 is linear)")
        for name, points in by_op.items():
            if not name.startswith("peak") and all(t > 0 for _, t in points):
                print(f"  {name:<38} {fit_exponent(points):.2f}")


if __name__ == "__main__":
    main()
