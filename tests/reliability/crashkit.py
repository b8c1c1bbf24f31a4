"""The test-process side of the crash harness: the zygote client, tree digests, invariants."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import crash_workload

T = TypeVar("T")
R = TypeVar("R")
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
# The lock's holder note changes with every run; the event log may repeat or lose an
# event across a crash; the derived index is compared through its revision instead.
NOT_STATE = (".evidence-archive.lock", "evidence/.local/log.jsonl")
DERIVED = ".evidence-cache/"
TEMP = re.compile(r"\..+\.[0-9a-f]{12}\.(tmp|parked)")  # parked: bytes a swap took out
MANAGED = ("evidence/.local/", "evidence/local-manifest.yaml")


SOAK = os.environ.get("THT_SOAK") == "1"  # bigger workspaces and every variant

# Past this many points an operation's sweep is sampled in README's run (the migration's
# 330 crash points alone took 155 s): THT_SOAK=1 runs every point.
SAMPLE_ABOVE = 200
STRIDE = 3
# Which third the default run takes; set it to 1 or 2 to run the other points by hand.
OFFSET = int(os.environ.get("THT_SAMPLE_OFFSET", "0")) % STRIDE


def sample(
    points: list[T], kind: Callable[[T], str], above: int = SAMPLE_ABOVE, stride: int = STRIDE
) -> list[T]:
    """Every point under THT_SOAK or for a short operation; else every ``stride``-th one plus
    the first and last point of each kind (so every kind of call is still struck)."""
    if SOAK or len(points) <= above:
        return points
    ends: dict[str, list[int]] = {}
    for i, p in enumerate(points):
        ends.setdefault(kind(p), []).append(i)
    keep = {i for i in range(len(points)) if i % stride == OFFSET % stride}
    keep |= {ix[0] for ix in ends.values()} | {ix[-1] for ix in ends.values()}
    return [points[i] for i in sorted(keep)]


@dataclass
class Reference:
    """One operation's uninterrupted run: what every interrupted run is measured against."""

    op: str
    template: Path
    before: dict[str, bytes]
    after: dict[str, bytes]
    digest: dict[str, str]
    status: int
    ops: list[tuple[str, str, bool]]  # (operation, path, completed)
    index: str | None
    figures: dict[str, Any] = field(default_factory=dict)


@dataclass
class Run:
    status: int  # exit status; negative: killed by that signal
    stdout: str
    stderr: str
    trace: dict[str, Any] | None
    pid: int = 0  # the run's process, leader of its own process group

    @property
    def envelope(self) -> dict[str, Any] | None:
        lines = self.stdout.strip().splitlines()
        try:
            return json.loads(lines[-1]) if lines else None
        except ValueError:
            return None


class Zygote:
    """A long-lived fork server (``zygote.py``) that runs one operation per request."""

    def __init__(self, scratch: Path) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(HERE)])}
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "zygote.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        self.scratch = scratch
        self.n = 0

    def run(self, op: str, run_dir: Path, mode: str = "count", **extra: Any) -> Run:
        self.n += 1
        base = self.scratch / f"io-{self.n}"
        req = {
            "op": op,
            "run_dir": str(run_dir),
            "mode": mode,
            "stdout": f"{base}.out",
            "stderr": f"{base}.err",
            "trace": f"{base}.trace",
            "env": extra.pop("env", {}),
            **extra,
        }
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline()
        if not reply:
            raise RuntimeError("the zygote died")
        answer = json.loads(reply)
        out = {k: Path(req[k]) for k in ("stdout", "stderr", "trace")}
        trace = json.loads(out["trace"].read_text()) if out["trace"].exists() else None
        stdout, stderr = out["stdout"].read_text(), out["stderr"].read_text()
        result = Run(answer["status"], stdout, stderr, trace, answer["pid"])
        for path in out.values():
            path.unlink(missing_ok=True)
        return result

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)
        if self.proc.stdout:
            self.proc.stdout.close()


class Pool:
    """One zygote per core, fed from threads: the work happens in the forked children."""

    def __init__(self, scratch: Path, size: int | None = None) -> None:
        self.size = size or max(1, min(2, os.cpu_count() or 1))
        self.zygotes = [Zygote(scratch / f"z{n}") for n in range(self.size)]
        for n in range(self.size):
            (scratch / f"z{n}").mkdir(parents=True, exist_ok=True)
        self._free: queue.Queue[Zygote] = queue.Queue()
        for z in self.zygotes:
            self._free.put(z)

    def map(self, fn: Callable[[Zygote, T], R], items: list[T]) -> list[R]:
        """``fn(zygote, item)`` for every item, each zygote serving one call at a time."""

        def call(item: T) -> R:
            z = self._free.get()
            try:
                return fn(z, item)
            finally:
                self._free.put(z)

        with ThreadPoolExecutor(self.size) as ex:
            return list(ex.map(call, items))

    def run(self, op: str, run_dir: Path, mode: str = "count", **extra: Any) -> Run:
        return self.map(lambda z, _: z.run(op, run_dir, mode, **extra), [None])[0]

    def close(self) -> None:
        for z in self.zygotes:
            z.close()


# -- processes -------------------------------------------------------------------------


def _proc_stat(pid: str) -> list[str]:
    """The fields of /proc/PID/stat from "state" on; [] when it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return []
    return raw[raw.rindex(")") + 2 :].split()


def group_alive(pgid: int) -> set[int]:
    """Living processes of process group ``pgid`` (zombies are dead: nobody may reap them)."""
    out = set()
    for name in os.listdir("/proc"):
        fields = _proc_stat(name) if name.isdigit() else []
        if fields and fields[0] not in ("Z", "X") and int(fields[2]) == pgid:
            out.add(int(name))
    return out


def survivors(pgid: int, timeout: float = 30.0) -> set[int]:
    """Processes of a killed run's group still alive after ``timeout`` (a dying parent's
    workers get their signal at once, but are scheduled when the machine lets them)."""
    if not os.path.isdir("/proc"):
        return set()
    deadline = time.monotonic() + timeout
    while (alive := group_alive(pgid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in alive:  # leave nothing behind for the next test, then report them
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return alive


# -- the tree ------------------------------------------------------------------------


def files(ws: Path) -> dict[str, bytes]:
    """Every file under the workspace by relative path (symlinks as their target text)."""
    out = {}
    for folder, _dirs, names in os.walk(ws):
        for name in names:
            path = Path(folder) / name
            rel = path.relative_to(ws).as_posix()
            out[rel] = (
                b"-> " + os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
            )
    return out


def digest(ws: Path) -> dict[str, str]:
    """The canonical state: sha256 of every file but the lock note, event log and cache.

    Empty folders do not count (Git does not see them either).
    """
    return {
        rel: hashlib.sha256(data).hexdigest()
        for rel, data in files(ws).items()
        if rel not in NOT_STATE and not rel.startswith(DERIVED)
    }


def temp_files(ws: Path) -> list[str]:
    return sorted(rel for rel in files(ws) if TEMP.fullmatch(rel.rsplit("/", 1)[-1]))


def operator_files(tree: dict[str, bytes]) -> dict[str, bytes]:
    """What the operator owns: everything but managed files, the lock, the cache, temps."""
    return {
        rel: data
        for rel, data in tree.items()
        if not rel.startswith(MANAGED)
        and rel not in NOT_STATE
        and not rel.startswith(DERIVED)
        and not TEMP.fullmatch(rel.rsplit("/", 1)[-1])
    }


def copy_run(template: Path, dest: Path) -> Path:
    shutil.copytree(template, dest, symlinks=True)
    return dest


# -- invariants ----------------------------------------------------------------------


def complete_snapshots(ws: Path) -> list[str]:
    """Problems with the snapshots state.yaml names: each must load (its manifest hashes to
    its revision) and every object it names must be present with matching bytes."""
    from evidence_tool.archive.local import LocalEvidenceArchive
    from evidence_tool.errors import EvidenceError

    archive = LocalEvidenceArchive(ws)
    problems = []
    try:
        state = archive.state()
    except EvidenceError as exc:
        return [f"state.yaml unreadable: {exc.message}"]
    for key in ("baseline", "active", "pending"):
        rev = getattr(state, key)
        if rev is None:
            continue
        try:
            snap = archive.snapshot(rev)
            for entry in snap.entries():
                snap.unit_bytes(entry)
            for source in snap.manifest.get("sources", []):
                archive.objects.get(source["blob"])
        except EvidenceError as exc:
            problems.append(f"{key} {rev[:12]}: {exc.message}")
    return problems


def old_or_new(
    before: dict[str, bytes], after: dict[str, bytes], now: dict[str, bytes]
) -> list[str]:
    """Operator files that hold neither their bytes before the operation nor after it."""
    b, a, n = operator_files(before), operator_files(after), operator_files(now)
    bad = []
    for rel in sorted(set(b) | set(a) | set(n)):
        if n.get(rel) not in (b.get(rel), a.get(rel)):
            bad.append(rel)
    return bad


def verify(ws: Path) -> list[dict[str, Any]]:
    """``verify``'s findings, as the CLI reports them."""
    from evidence_tool.archive.integrity import verify as run_verify
    from evidence_tool.archive.local import LocalEvidenceArchive

    problems, _counts = run_verify(LocalEvidenceArchive(ws))
    return [d.to_dict() for d in problems]


def index_revision(ws: Path) -> str | None:
    from evidence_tool.activation.sqlite_index import index_revision as revision

    return revision(ws / ".evidence-cache" / "index.sqlite")


def is_debris(finding: dict[str, Any]) -> bool:
    """A verify finding a killed run may leave and the next locked operation removes."""
    path = finding.get("path") or ""
    name = path.rsplit("/", 1)[-1]
    interrupted = "a consolidation was interrupted" in finding.get("message", "")
    return bool(TEMP.fullmatch(name)) or interrupted


def state_key(ws: Path) -> tuple[tuple[str, str], ...]:
    """The crash state, with the random part of temp and journal names taken out: two
    crashes leaving the same key leave the same bytes, so one re-run proves both."""
    out = []
    for rel, data in files(ws).items():
        if rel in NOT_STATE or rel.startswith(DERIVED):
            continue
        rel = re.sub(r"\.[0-9a-f]{12}\.(tmp|parked)$", r".TOKEN.\1", rel)
        rel = re.sub(r"(journal/[0-9TZ:-]+)-[0-9a-f]{8}\.json$", r"\1-TOKEN.json", rel)
        out.append((rel, hashlib.sha256(data).hexdigest()))
    return tuple(sorted(out))


def diff(now: dict[str, str], want: dict[str, str]) -> dict[str, tuple[str | None, str | None]]:
    """Paths whose digest differs: (now, wanted)."""
    return {
        k: (now.get(k), want.get(k))
        for k in sorted(set(now) | set(want))
        if now.get(k) != want.get(k)
    }


def remove_run(run_dir: Path) -> None:
    shutil.rmtree(run_dir, ignore_errors=True)


def build_references(
    zygote: Zygote | Pool, root: Path, units: tuple[str, ...], with_ward: bool
) -> dict[str, Reference]:
    """Templates for every operation and their uninterrupted runs, under ``root``."""
    base = crash_workload.build_base(root / "base", units, with_ward=with_ward)
    refs: dict[str, Reference] = {}
    for op in crash_workload.OPERATIONS:
        if op == "migrate":
            template = crash_workload.build_migrate_template(root / f"template-{op}")
        else:
            template = crash_workload.build_template(op, base, root / f"template-{op}")
        refs[op] = reference(zygote, op, template, root / f"reference-{op}")
    return refs


def reference(zygote: Zygote | Pool, op: str, template: Path, run_dir: Path) -> Reference:
    """The uninterrupted run of ``op`` on a copy of ``template`` at ``run_dir``."""
    copy_run(template, run_dir)
    before = files(run_dir / "ws")
    run = zygote.run(op, run_dir, env=crash_workload.ENV)
    assert run.status == 0, f"{op}: {run.stdout} {run.stderr}"
    assert run.trace is not None
    ws = run_dir / "ws"
    assert verify(ws) == [], f"{op}: the uninterrupted run fails verify"
    print(f"\n{op}: {len(run.trace['ops'])} managed filesystem operations")
    return Reference(
        op,
        template,
        before,
        files(ws),
        digest(ws),
        run.status,
        [tuple(o) for o in run.trace["ops"]],
        index_revision(ws),
    )


def digest_of(tree: dict[str, bytes]) -> dict[str, str]:
    """``digest`` of a tree already read with ``files``."""
    return {
        rel: hashlib.sha256(data).hexdigest()
        for rel, data in tree.items()
        if rel not in NOT_STATE and not rel.startswith(DERIVED)
    }
