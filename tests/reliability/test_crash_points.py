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

Default CI: the small workspace, every k.  ``THT_SOAK=1``: also the wide one.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import crash_workload as W
import crashkit as K
import pytest
from crashkit import SOAK, Reference


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
    """Every (k, phase): before each operation, and after each one that completed."""
    out = []
    for k, (_op, _path, completed) in enumerate(ref.ops, 1):
        out += [(k, "before")] + ([(k, "after")] if completed else [])
    return out


def sweep(pool: K.Pool, ref: Reference, scratch: Path) -> tuple[int, int]:
    """Crash at every point; returns (crash points, distinct crash states re-run)."""
    seen: set[object] = set()
    lock = threading.Lock()

    def crash(z: K.Zygote, point: tuple[int, str]) -> int:
        k, phase = point
        where = f"{ref.op}: SIGKILL {phase} op {k}/{len(ref.ops)} {ref.ops[k - 1][:2]}"
        run_dir = K.copy_run(ref.template, scratch / f"k{k}-{phase}")
        crashed = z.run(ref.op, run_dir, "kill", k=k, phase=phase, env=W.ENV)
        assert crashed.status == -9, f"{where}: exit {crashed.status} {crashed.stderr}"
        check_crash_state(ref, run_dir / "ws", where)
        key = K.state_key(run_dir / "ws")
        with lock:
            fresh = key not in seen
            seen.add(key)
        if fresh:
            check_rerun(z, ref, run_dir, where)
        K.remove_run(run_dir)
        return int(fresh)

    rerun = sum(pool.map(crash, points(ref)))
    return len(points(ref)), rerun


@pytest.mark.parametrize("op", W.OPERATIONS)
def test_every_crash_point_converges(
    op: str, zygote: K.Pool, references: dict[str, Reference], tmp_path: Path
) -> None:
    started = time.monotonic()
    crashes, states = sweep(zygote, references[op], tmp_path)
    print(
        f"\n{op}: {len(references[op].ops)} managed operations, {crashes} crash points, "
        f"{states} distinct crash states re-run, 0 lost ({time.monotonic() - started:.1f} s)"
    )


@pytest.mark.skipif(not SOAK, reason="the wide workspace runs with THT_SOAK=1")
@pytest.mark.parametrize("op", W.OPERATIONS)
def test_every_crash_point_converges_on_a_wider_workspace(
    op: str, zygote: K.Pool, wide_references: dict[str, Reference], tmp_path: Path
) -> None:
    crashes, states = sweep(zygote, wide_references[op], tmp_path)
    print(f"\n{op} (wide): {crashes} crash points, {states} distinct states re-run, 0 lost")
