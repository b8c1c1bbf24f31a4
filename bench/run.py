"""Benchmark runner: each SPEC.md 12 figure beside its floor, in one process, on one workspace.

    python bench/run.py [--n 10000] [--repeat 3] [--memory] [--process] [--in-process]

Generates (once) a deterministic workspace under bench/out/, then measures:
the dependency floor (read + C safe YAML load + heading/fence-only markdown-it
parse per file), os.stat of every file, full validate, first consolidate,
no-op consolidate, a one-unit change, activation into the sqlite index, and
`git add -A && git commit` as an external anchor.  Prints seconds, µs per
unit, the ratio to each target's reference and the target itself.  With
--memory it also runs a consolidate in a child process and reports its peak
RSS.  Times are medians of --repeat runs.  Nothing here asserts: the figures
go into docs/performance.md with the command that produced them.

--process adds what a user waits for (issue 20): each command as a whole
``tht`` process with the default sqlite activation, beside its peers (``git
status``, ``git add -A && git commit``, ``dvc status`` / ``dvc add`` when a
``dvc`` is on PATH or in $THT_BENCH_DVC), in interleaved rounds (see
bench/process.py), with wall and CPU seconds, peak RSS, and the slowest imports
of ``tht --help`` and of a no-op consolidate (``python -X importtime``).
--process without --in-process skips the in-process table.
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

from bench import process as P  # noqa: E402
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


def consolidate(root: Path) -> object:
    from evidence_tool.archive.local import LocalEvidenceArchive

    return LocalEvidenceArchive(root).consolidate("bench")


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


# Removed when every size is measured (P.Copies says why).
COPIES = P.Copies(OUT)


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

    copies = [COPIES.make(base) for _ in range(repeat)]
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
        P.touch_one(ws, next(counter))
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
        P.touch_one(ws, next(counter))
        t = time.perf_counter()
        LocalEvidenceArchive(ws).consolidate("bench", backend)
        activated.append(time.perf_counter() - t)
    one_activated = statistics.median(activated)
    git = git_anchor(COPIES.make(base))

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
        big = COPIES.make(base)
        rows.append(
            (
                f"peak RSS of consolidate (MiB, N={n})",
                peak_rss_of_consolidate(big),
                "-",
                "< 1024 MiB at 50k",
            )
        )
    return rows


# -- whole process (issue 20) ---------------------------------------------------------

GIT_ENV = {
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@x",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@x",
}
CONSOLIDATE = ("workspace", "evidence", "consolidate")


def _dvc() -> str | None:
    return os.environ.get("THT_BENCH_DVC") or shutil.which("dvc")


def _floor_argv(root: Path) -> list[str]:
    code = (
        f"import sys; sys.path.insert(0, {str(HERE.parent)!r}); from pathlib import Path; "
        "from bench.run import floor_pass, unit_files; floor_pass(unit_files(Path(sys.argv[1])))"
    )
    return [sys.executable, "-c", code, str(root)]


def _shell(command: str, cwd: Path) -> P.Run:
    return P.run_once(["sh", "-c", command], cwd, {**os.environ, **GIT_ENV})


def _committed(root: Path) -> None:
    """A Git repository whose HEAD holds the whole tree: `git status` has nothing to say."""
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(
        "git add -A && git commit -qm base",
        shell=True,
        cwd=root,
        check=True,
        env={**os.environ, **GIT_ENV},
    )


CONSOLIDATED: list[Path] = []  # the activated workspaces: the import table runs on one


def process_rows(n: int, repeat: int) -> dict[str, P.Run]:
    base = OUT / f"ws-{n}"
    if not base.exists():
        generate(n, base)
    tiny = OUT / "ws-10"
    if not tiny.exists():
        generate(10, tiny)
    env = P.clean_env()
    tht = lambda *a: P.tht(*a)  # noqa: E731
    # The workspace every repeatable command runs on: consolidated, activated, in Git,
    # and older than the stat cache's racy window.
    # The edits go to a workspace of their own: an edited file stays racily clean (read
    # and parsed again) for a second, which would tax the no-op runs that follow.
    ws, ws_edit, tiny_ws = COPIES.make(base), COPIES.make(base), COPIES.make(tiny)
    CONSOLIDATED.append(ws)
    for root in (ws, ws_edit, tiny_ws):
        P.run_once(tht(*CONSOLIDATE), root, env)
    _committed(ws)
    time.sleep(1.2)
    for root in (ws, ws_edit, tiny_ws):
        P.run_once(tht(*CONSOLIDATE), root, env)  # proves and stamps the index rows

    def fresh() -> Path:
        return COPIES.make(base)

    def inited() -> Path:
        return COPIES.make(base, lambda c: P.run_once(tht("workspace", "evidence", "init"), c, env))

    def git_fresh() -> Path:
        return COPIES.make(base, lambda c: subprocess.run(["git", "init", "-q", str(c)]))

    counter = iter(range(10**6))

    def edited() -> P.Run:
        P.touch_one(ws_edit, next(counter))
        return P.run_once(tht(*CONSOLIDATE), ws_edit, env)

    jobs: dict[str, Callable[[], P.Run]] = {
        "tht --help": lambda: P.run_once(tht("--help"), ws, env),
        "floor (read + C YAML + md), as a process": lambda: P.run_once(_floor_argv(ws), ws, env),
        "validate": lambda: P.run_once(tht("workspace", "evidence", "validate"), ws, env),
        "first consolidate (sqlite activation)": lambda: P.run_once(
            tht(*CONSOLIDATE), fresh(), env
        ),
        "first consolidate after init": lambda: P.run_once(tht(*CONSOLIDATE), inited(), env),
        "no-op consolidate": lambda: P.run_once(tht(*CONSOLIDATE), ws, env),
        "no-op consolidate, 10 units (fixed cost)": lambda: P.run_once(
            tht(*CONSOLIDATE), tiny_ws, env
        ),
        "1 edited unit (sqlite activation)": edited,
        "git status": lambda: _shell("git status --porcelain >/dev/null", ws),
        "git add -A && git commit": lambda: _shell("git add -A && git commit -qm b", git_fresh()),
    }
    dvc = _dvc()
    if dvc:
        dvc_ws = COPIES.make(base)
        _committed(dvc_ws)
        _shell(f"'{dvc}' init -q && '{dvc}' add -q evidence/curated", dvc_ws)
        jobs["dvc status"] = lambda: _shell(f"'{dvc}' status -q", dvc_ws)

        def dvc_add() -> P.Run:
            c = git_fresh()
            _shell(f"'{dvc}' init -q", c)
            return _shell(f"'{dvc}' add -q evidence/curated", c)

        jobs["dvc add"] = dvc_add
    P.run_once(tht("--help"), ws, env)  # bytecode written, page cache warm
    return P.interleaved(jobs, repeat)


def print_process(n: int, r: dict[str, P.Run]) -> None:
    def ratio(a: str, b: str, cpu: bool = False) -> str:
        if a not in r or b not in r:
            return "-"
        x, y = (r[a].cpu, r[b].cpu) if cpu else (r[a].wall, r[b].wall)
        return f"{x / y:.2f}x"

    noop, fixed = "no-op consolidate", "no-op consolidate, 10 units (fixed cost)"
    targets = {
        "tht --help": ("-", "<= 0.15 s"),
        "validate": (
            f"{ratio('validate', 'floor (read + C YAML + md), as a process', True)} floor CPU",
            "<= 1.5x floor CPU",
        ),
        "first consolidate (sqlite activation)": (
            f"{ratio('first consolidate (sqlite activation)', 'validate')} validate",
            "<= 1.6x validate",
        ),
        "first consolidate after init": (
            f"{ratio('first consolidate after init', noop)} no-op",
            "<= 2x no-op",
        ),
        noop: (f"{ratio(noop, 'git status')} git status", "<= 5x git status"),
        fixed: ("-", "<= 0.15 s"),
        "1 edited unit (sqlite activation)": (
            f"{ratio('1 edited unit (sqlite activation)', noop)} no-op",
            "<= 1.3x no-op",
        ),
    }
    if "dvc status" in r:
        targets[noop] = (targets[noop][0] + f", {ratio(noop, 'dvc status')} dvc status", "")
    print(f"\nN = {n} units, whole processes, median of interleaved runs, {os.cpu_count()} cores")
    print(f"| {'command':<42} | wall s | CPU s | peak MiB | ratio | target |")
    print(f"|{'-' * 44}|--------|-------|----------|-------|--------|")
    for name, run_ in r.items():
        ratio_, target = targets.get(name, ("-", "-"))
        print(
            f"| {name:<42} | {run_.wall:6.3f} | {run_.cpu:5.2f} | {run_.rss_mib:8.0f} "
            f"| {ratio_} | {target} |"
        )


def print_imports(root: Path) -> None:
    for label, args in (("tht --help", ("--help",)), ("no-op consolidate", CONSOLIDATE)):
        rows = P.import_table(P.tht(*args), root)
        print(f"\nslowest imports of `{label}` (python -X importtime, cumulative ms)")
        for name, ms in rows:
            print(f"  {ms:7.1f}  {name}")


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
    ap.add_argument("--process", action="store_true", help="whole-process figures (issue 20)")
    ap.add_argument("--in-process", action="store_true", help="with --process: also in-process")
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    sizes = args.n or [10000]
    if args.process:
        for n in sizes:
            print_process(n, process_rows(n, args.repeat))
        print_imports(CONSOLIDATED[0])
        COPIES.close()
        if not args.in_process:
            return
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

    COPIES.close()
    if len(sizes) > 1:
        print(f"\nscaling exponent (fit of log seconds over log N, N = {sizes}; 1.0 is linear)")
        for name, points in by_op.items():
            if not name.startswith("peak") and all(t > 0 for _, t in points):
                print(f"  {name:<38} {fit_exponent(points):.2f}")


if __name__ == "__main__":
    main()
