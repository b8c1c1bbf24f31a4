"""A write the file system refuses ends in a coded error and a state the next run completes.

At every fsync, write and replace of every operation (the reference run's list),
the fault hook raises the error a real disk gives there: EIO from fsync, ENOSPC
from write, EACCES from replace.  Each run must end with a coded error, never
exit 70 or a traceback; leave no temp file; never fsync the failed file again
(a retried fsync can report success for data the kernel already dropped); and:

- before the operation's first commit point (the rename of state.yaml, of a
  journal entry or of sources.json) the tree is exactly as before (rolled back);
- after it, the tree is a state a crash there could leave (snapshots complete,
  operator files old or new, verify clean but for debris);

and the same command run again (the disk repaired) reaches the uninterrupted
run's exact tree.  The figures printed are per operation: injected errors,
how many were rolled back, how many struck after the commit point.
"""

from __future__ import annotations

import time
from pathlib import Path

import crash_workload as W
import crashkit as K
import pytest
from crashkit import Reference
from test_crash_points import check_crash_state, check_rerun

INJECTED = ("fsync", "write", "replace")
COMMITS = ("/evidence/.local/state.yaml", "/evidence/.local/journal/", "/.local/sources.json")
CODES = {"E604": 6, "E401": 4}  # refused write; an activation (index build) that failed


def _derived_stat_cache(path: str) -> bool:
    """The stat cache file's own write: refused, it costs the next run some reads, never
    the command."""
    return "/.evidence-cache/" in path and "stat-cache.bin" in path


def first_commit(ref: Reference) -> int:
    """The number of the first operation that commits a step (its rename), or that starts a
    second locked block (migrate: the v4 files of its first block stand, the run resumes)."""
    locks = 0
    for k, (op, path, completed) in enumerate(ref.ops, 1):
        if op == "replace" and any(c in path for c in COMMITS):
            return k
        if op == "open" and completed and path.endswith(".evidence-archive.lock"):
            locks += 1
            if locks == 2:
                return k
    return len(ref.ops) + 1


def error_code(run: K.Run) -> str | None:
    envelope = run.envelope
    if envelope is not None and envelope.get("errors"):
        return str(envelope["errors"][0]["code"])
    for line in run.stderr.splitlines():  # library calls print {"code": ...} on stderr
        if line.startswith('{"code"'):
            return str(line.split('"')[3])
    return None


def inject(pool: K.Pool, ref: Reference, scratch: Path) -> dict[str, int]:
    commit = first_commit(ref)
    every = [k for k, (op, _p, _c) in enumerate(ref.ops, 1) if op in INJECTED]
    # Each case runs twice (the error, then the repaired re-run): sampled from 100 cases.
    points = K.sample(every, lambda k: ref.ops[k - 1][0], above=100)
    assert len(points) > 0 and {ref.ops[k - 1][0] for k in points} == {
        ref.ops[k - 1][0] for k in every
    }

    def one(z: K.Zygote, k: int) -> str:
        op, path, _ = ref.ops[k - 1]
        where = f"{ref.op}: {op} error at op {k}/{len(ref.ops)} {path}"
        run_dir = K.copy_run(ref.template, scratch / f"e{k}")
        ws = run_dir / "ws"
        run = z.run(ref.op, run_dir, "error", k=k, env=W.ENV)
        assert "Traceback" not in run.stderr, f"{where}: {run.stderr}"
        assert run.trace is not None and run.trace["failed_at"] == k, where
        assert K.temp_files(ws) == [], f"{where}: temp files left"
        later = run.trace["ops"][k:]
        assert not [o for o in later if o[0] == "fsync" and o[1] == path], f"{where}: fsync retried"
        if path.endswith(".evidence-archive.lock") and run.status == 0:
            outcome = "lock note"  # emptying the note at release is best effort
        elif _derived_stat_cache(path) and run.status == 0:
            outcome = "derived cache skipped"  # a warning; the next run re-reads (issue 27)
        else:
            code = error_code(run)
            assert code in CODES and run.status == CODES[code], f"{where}: {run.status} {code}"
            if code == "E604":
                after = [o for o in later if o[0] == "fsync"]
                assert not after, f"{where}: fsync after a refused write: {after}"
            if k < commit:
                assert K.digest(ws) == K.digest_of(ref.before), f"{where}: not rolled back"
                outcome = "rolled back"
            else:
                check_crash_state(ref, ws, where)
                outcome = "committed"
        check_rerun(z, ref, run_dir, where)
        K.remove_run(run_dir)
        return outcome

    outcomes = pool.map(one, points)
    return {o: outcomes.count(o) for o in sorted(set(outcomes))}


@pytest.mark.parametrize("op", W.OPERATIONS)
def test_every_refused_write_is_coded_and_recoverable(
    op: str, zygote: K.Pool, references: dict[str, Reference], tmp_path: Path
) -> None:
    started = time.monotonic()
    counts = inject(zygote, references[op], tmp_path)
    total = sum(counts.values())
    print(
        f"\n{op}: {total} injected I/O errors {counts}, 0 lost ({time.monotonic() - started:.1f} s)"
    )
