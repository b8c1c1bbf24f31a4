"""Every crash point of every writing operation leaves a state the next run completes (5.4).

For each operation the uninterrupted reference run counts its managed
filesystem operations (open for write, write, fsync, replace, unlink, mkdir,
...).  Then, for every k and for "before" and "after" it, a fresh copy of the
same workspace runs the operation in a child that SIGKILLs itself at that
point.  After each crash:

- every revision state.yaml names is a complete snapshot (manifest hashes to its
  revision, every object present and intact) -- what readers follow;
- every operator file holds its bytes from before or after the operation, and
  the files the operation does not own are untouched;
- ``verify`` finds at most crash debris the next locked operation removes (temp
  files, an empty snapshot folder, local-manifest.yaml ahead of state.yaml);
- running the same command again succeeds and reaches the reference's exact
  tree (event log, lock note and derived index aside; the index must name the
  active revision), with nothing left in the journal and no temp file.

Default CI: the small workspace, every k (an operation of more than K.SAMPLE_ABOVE points:
every third, and each kind of call's first and last).  ``THT_SOAK=1``: every point, and
the wide workspace too.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import crash_workload as W
import crashkit as K
import pytest
from crashkit import SOAK, Reference

from evidence_tool import fsio


def check_crash_state(ref: Reference, ws: Path, where: str) -> None:
    now = K.files(ws)
    assert K.complete_snapshots(ws) == [], where
    assert K.old_or_new(ref.before, ref.after, now) == [], where
    debris = [f for f in K.verify(ws) if not K.is_debris(f)]
    assert debris == [], f"{where}: verify finds more than crash debris: {debris}"


def check_rerun(zygote: K.Zygote, ref: Reference, run_dir: Path, where: str) -> None:
    ws = run_dir / "ws"
    again = zygote.run(ref.op, run_dir, env=W.ENV)
    assert again.status == ref.status, f"{where}: re-run exit {again.status}: {again.stdout}"
    assert "Traceback" not in again.stderr, f"{where}: {again.stderr}"
    assert K.digest(ws) == ref.digest, f"{where}: {K.diff(K.digest(ws), ref.digest)}"
    assert K.verify(ws) == [], where
    assert K.temp_files(ws) == [], where
    assert not list((ws / "evidence/.local/journal").glob("*.json")), where
    assert K.index_revision(ws) == ref.index, f"{where}: the index names another revision"


def points(ref: Reference) -> list[tuple[int, str]]:
    """Every (k, phase): before each operation, after each one that completed, and at
    each step inside one (the bytes a swap parks, say)."""
    out = []
    for k, (op, _path, completed) in enumerate(ref.ops, 1):
        if op.startswith("step:"):  # between two steps of one call: one point
            out.append((k, "step"))
            continue
        out += [(k, "before")] + ([(k, "after")] if completed else [])
    return out


def sweep(pool: K.Pool, ref: Reference, scratch: Path) -> tuple[int, int]:
    """Crash at every point; returns (runs killed, distinct crash states re-run).

    Every kind of managed call (and of step inside one) the operation makes is killed
    at least once, and every point was really killed (exit -9), or it fails."""
    seen: set[object] = set()
    lock = threading.Lock()

    def crash(z: K.Zygote, point: tuple[int, str]) -> tuple[int, str]:
        k, phase = point
        where = f"{ref.op}: SIGKILL {phase} op {k}/{len(ref.ops)} {ref.ops[k - 1][:2]}"
        run_dir = K.copy_run(ref.template, scratch / f"k{k}-{phase}")
        crashed = z.run(ref.op, run_dir, "kill", k=k, phase=phase, env=W.ENV)
        assert crashed.status == -9, f"{where}: exit {crashed.status} {crashed.stderr}"
        assert K.survivors(crashed.pid) == set(), f"{where}: processes of the run live on"
        check_crash_state(ref, run_dir / "ws", where)
        key = K.state_key(run_dir / "ws")
        with lock:
            fresh = key not in seen
            seen.add(key)
        if fresh:
            check_rerun(z, ref, run_dir, where)
        K.remove_run(run_dir)
        return int(fresh), ref.ops[k - 1][0]

    every = points(ref)
    chosen = K.sample(every, lambda p: f"{ref.ops[p[0] - 1][0]} {p[1]}")
    done = pool.map(crash, chosen)
    assert len(done) == len(chosen) > 0
    assert len(chosen) == len(every) or len(chosen) >= len(every) // K.STRIDE
    assert {kind for _, kind in done} == {op for op, _path, _c in ref.ops}
    return len(done), sum(fresh for fresh, _ in done)


@pytest.mark.parametrize("op", W.OPERATIONS)
def test_every_crash_point_converges(
    op: str, zygote: K.Pool, references: dict[str, Reference], tmp_path: Path
) -> None:
    started = time.monotonic()
    crashes, states = sweep(zygote, references[op], tmp_path)
    print(
        f"\n{op}: {len(references[op].ops)} managed operations, {crashes} crash points "
        f"(of {len(points(references[op]))}), "
        f"{states} distinct crash states re-run, 0 lost ({time.monotonic() - started:.1f} s)"
    )


@pytest.mark.skipif(not SOAK, reason="the wide workspace runs with THT_SOAK=1")
@pytest.mark.parametrize("op", W.OPERATIONS)
def test_every_crash_point_converges_on_a_wider_workspace(
    op: str, zygote: K.Pool, wide_references: dict[str, Reference], tmp_path: Path
) -> None:
    crashes, states = sweep(zygote, wide_references[op], tmp_path)
    print(f"\n{op} (wide): {crashes} crash points, {states} distinct states re-run, 0 lost")


STEPS = {"step:exchange", "step:park"}  # inside fsio.swap and unlink_if: bytes parked aside


def test_kills_land_inside_managed_calls_too(references: dict[str, Reference]) -> None:
    """The sweep kills before and after every managed call and at every step inside one:
    every kind of call and step must occur in the small workspace's operations."""
    kinds: dict[str, int] = {}
    for ref in references.values():
        for op, _path, _completed in ref.ops:
            kinds[op] = kinds.get(op, 0) + 1
    print(f"\nmanaged calls and steps by kind: {dict(sorted(kinds.items()))}")
    assert set(kinds) >= STEPS, f"no crash point inside a swap: {sorted(kinds)}"
    # syncfs serves batches of more than 16 new files: test_crash_parse_workers has them.
    assert set(fsio.OPS) - {"syncfs"} <= set(kinds), sorted(kinds)
    for op in ("save", "remove", "restore", "decide-replace"):
        inside = [p for p in points(references[op]) if p[1] == "step"]
        assert inside, f"{op}: no kill inside a managed call"
