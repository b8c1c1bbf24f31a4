"""An exception, not a kill, at every point of every writing operation (issue 27).

The crash harness kills its child at every managed filesystem call (test_crash_points);
here the child raises instead, an exception no code path expects (``InjectedFault``):
before and after every managed call, at every step inside one, and at every call the
library makes back into presentation and activation -- each progress report, the
activation of a candidate (the index update) and the reporter writing the outcome.  The
process then goes on as it would: its ``finally`` blocks and error funnel run.

After each point:

- a callback into presentation (progress, reporter) is at most a warning: the run ends
  as the uninterrupted one did, same exit, same tree;
- otherwise the run ends with a coded error or exit 70, and no traceback on stdout;
- the same checks as after a kill: every snapshot state.yaml names complete, every
  operator file old or new, verify finds nothing but debris;
- ``status`` answers (exit 0 or a coded error), and when the tree is neither as before
  nor as after the operation, it says what is pending (a journal entry, unconsolidated
  files, a pending revision);
- the same command again reaches the uninterrupted tree exactly (check_rerun).

Default run: the small workspace, every sixth point plus the first and last of each
kind of call, step and callback (crashkit.sample); ``THT_SOAK=1``: every point.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import crash_workload as W
import crashkit as K
import pytest
from crashkit import Reference
from test_crash_points import check_crash_state, check_rerun

PRESENTATION = {"callback:progress", "callback:report"}
STRIDE = 6
CALLBACKS = {"callback:progress", "callback:activate", "callback:report"}


@pytest.fixture(scope="session")
def raising_references(
    zygote: K.Pool, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Reference]:
    """The uninterrupted runs of W.RAISING with the callbacks traced."""
    root = tmp_path_factory.mktemp("raise-small")
    base = W.build_base(root / "base", W.SMALL_UNITS)
    refs = {}
    for op in W.RAISING:
        template = W.build_template(op, base, root / f"template-{op}")
        K.copy_run(template, root / f"reference-{op}")
        run_dir = root / f"reference-{op}"
        before = K.files(run_dir / "ws")
        run = zygote.run(op, run_dir, env=W.ENV, callbacks=True)
        assert run.status == 0 and run.trace is not None, f"{op}: {run.stdout} {run.stderr}"
        ws = run_dir / "ws"
        assert K.verify(ws) == [], f"{op}: the uninterrupted run fails verify"
        ops = [tuple(o) for o in run.trace["ops"]]
        refs[op] = Reference(
            op, template, before, K.files(ws), K.digest(ws), 0, ops, K.index_revision(ws)
        )
    return refs


def points(ref: Reference) -> list[tuple[int, str]]:
    """Every (k, phase): before and after each managed call, each step inside one, and
    each callback (struck as it is entered)."""
    out = []
    for k, (op, _path, completed) in enumerate(ref.ops, 1):
        if op.startswith(("step:", "callback:")):
            out.append((k, "step"))
            continue
        out += [(k, "before")] + ([(k, "after")] if completed else [])
    return out


def said_pending(status: dict[str, Any]) -> bool:
    """``status`` names work left: a journal entry, unconsolidated files, a revision
    written and not yet active, staged decisions or id changes, a decision saved and not
    recorded as consolidated (W153)."""
    result = status["result"]
    unconsolidated = any(result["unconsolidated"].values())
    warned = {w["code"] for w in [*result["warnings"], *status["warnings"]]}
    return bool(
        "W153" in warned
        or result["journal"]
        or unconsolidated
        or result["state"]["pending"]
        or result["staged"]
        or result["id_changes"]
        or not result["initialized"]
    )


def sweep(pool: K.Pool, ref: Reference, scratch: Path) -> tuple[int, int, int]:
    """Raise at every point; returns (points run, distinct states re-run, points whose
    run still ended as the uninterrupted one)."""
    seen: set[object] = set()
    lock = threading.Lock()
    before = K.digest_of(ref.before)

    def strike(z: K.Zygote, point: tuple[int, str]) -> tuple[int, int, str]:
        k, phase = point
        kind = ref.ops[k - 1][0]
        where = f"{ref.op}: raise {phase} point {k}/{len(ref.ops)} {ref.ops[k - 1][:2]}"
        run_dir = K.copy_run(ref.template, scratch / f"r{k}-{phase}")
        ws = run_dir / "ws"
        run = z.run(ref.op, run_dir, "raise", k=k, phase=phase, env=W.ENV, callbacks=True)
        assert run.trace is not None and run.trace["failed_at"] == k, f"{where}: not struck"
        assert "Traceback" not in run.stdout, where
        absorbed = run.status == ref.status
        if kind in PRESENTATION:
            assert absorbed and "InjectedFault" in run.stderr, f"{where}: {run.status} {run.stderr}"
        if absorbed:  # a fault swallowed (presentation, a best-effort step): the work is done
            assert K.digest(ws) == ref.digest, f"{where}: {K.diff(K.digest(ws), ref.digest)}"
        else:
            assert run.status > 0, f"{where}: exit {run.status}"
        check_crash_state(ref, ws, where)
        now = K.digest(ws)
        status = z.run("status", run_dir, env=W.ENV)
        envelope = status.envelope
        assert envelope is not None, f"{where}: status printed no envelope: {status.stderr}"
        codes = [e["code"] for e in envelope["errors"]]
        assert status.status == 0 or (codes and "E999" not in codes), f"{where}: {envelope}"
        if status.status == 0 and now not in (before, ref.digest):
            left = K.diff(now, ref.digest)
            assert said_pending(envelope), f"{where}: status says nothing is pending: {left}"
        key = K.state_key(ws)
        with lock:
            fresh = key not in seen
            seen.add(key)
        if fresh:
            check_rerun(z, ref, run_dir, where)
        K.remove_run(run_dir)
        return int(fresh), int(absorbed), kind

    every = points(ref)
    # Sampled below the kill sweep's threshold: after an exception the process's own
    # undo runs, so neighbouring points leave the same state far more often than kills.
    # Every sixth point in README's run (its time budget): THT_SAMPLE_OFFSET moves the
    # sample, THT_SOAK=1 strikes them all.
    chosen = K.sample(every, lambda p: f"{ref.ops[p[0] - 1][0]} {p[1]}", above=0, stride=STRIDE)
    done = pool.map(strike, chosen)
    assert len(done) == len(chosen) > 0
    assert len(chosen) == len(every) or len(chosen) >= len(every) // STRIDE
    assert {kind for _, _, kind in done} == {op for op, _path, _c in ref.ops}
    return len(done), sum(f for f, _, _ in done), sum(a for _, a, _ in done)


@pytest.mark.parametrize("op", W.RAISING)
def test_every_exception_point_converges(
    op: str, zygote: K.Pool, raising_references: dict[str, Reference], tmp_path: Path
) -> None:
    ref = raising_references[op]
    callbacks = {o for o, _p, _c in ref.ops if o.startswith("callback:")}
    assert "callback:report" in callbacks and "callback:progress" in callbacks, callbacks
    if op not in ("init", "refresh"):  # they activate nothing (consolidate does)
        assert "callback:activate" in callbacks, callbacks
    run, states, absorbed = sweep(zygote, ref, tmp_path)
    print(
        f"\n{op}: {len(ref.ops)} points ({sorted(callbacks)} among them), {run} exceptions "
        f"raised (of {len(points(ref))}), {absorbed} ended as uninterrupted, {states} "
        "distinct states re-run, 0 lost"
    )


def test_a_decision_left_saved_is_named_by_status_and_retry_finishes_it(tmp_path: Path) -> None:
    """The state an exception late in decide leaves (the sweep's decide-keep after its
    last fsync): units consolidated and active, the decision still "saved"."""
    import json

    ws = W.build_base(tmp_path / "base", W.SMALL_UNITS) / "ws"
    registry_path = ws / "evidence/.local/sources.json"
    registry = json.loads(registry_path.read_text())
    (sid,) = [s for s, r in registry["sources"].items() if r.get("decision")]
    registry["sources"][sid]["decision"]["status"] = "saved"
    registry_path.write_text(json.dumps(registry, indent=2) + "\n")

    with W.pinned_env():
        status = W.quiet_cli(["workspace", "evidence", "status", *W._ws_args(ws)])
        warned = [w for w in status["warnings"] if w["code"] == "W153"]
        assert len(warned) == 1 and f"--source-id {sid[:12]} --retry" in warned[0]["message"]
        W.quiet_cli(
            ["workspace", "evidence", "decide", "--source-id", sid, "--retry", *W._ws_args(ws)]
        )
        status = W.quiet_cli(["workspace", "evidence", "status", *W._ws_args(ws)])
    assert [w for w in status["warnings"] if w["code"] == "W153"] == []
    record = json.loads(registry_path.read_text())["sources"][sid]
    assert record["decision"]["status"] == "activated", record["decision"]
