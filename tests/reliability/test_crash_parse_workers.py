"""Crashes of a consolidation big enough that its parse runs in worker processes (issue 14).

A SIGKILLed consolidation used to leave its forked parse workers alive, blocked and
holding the archive lock: every later run got E303, ``--wait`` too.  Here the workspace
has more new units than ``parallel.PARALLEL_MIN``, so the parse runs on worker processes,
and the run is killed while they parse, and at managed calls of each kind (the
first of each, ``syncfs`` included: its object batch is big enough).  After each kill:

- no process of the killed run is alive (its process group is empty);
- the crash state holds no lost bytes (``check_crash_state``);
- the same command, run again without ``--wait``, succeeds and reaches the
  uninterrupted run's exact tree (``check_rerun``).

Default: one kill amid the workers and one kill per kind of call.  ``THT_SOAK=1``:
three kills amid the workers, and also every 10th crash point.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import crash_workload as W
import crashkit as K
import pytest
from crashkit import SOAK, Reference
from test_crash_points import check_crash_state, check_rerun, points

from evidence_tool import fsio
from evidence_tool.workspace._speed.parallel import PARALLEL_MIN

pytestmark = [
    pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the parallel parse needs two cores"),
    pytest.mark.skipif(not os.path.isdir("/proc"), reason="finds processes in /proc"),
]

NEW_UNITS = PARALLEL_MIN + 60
UNIT = """---
schema_version: 4
id: evidence:ward:bay-{n:04d}
kind: glossary
language: en
purposes: [disambiguation]
---

# Bay {n}

## Definition

Bay {n} of the ward, {filler}.
"""


@pytest.fixture(scope="module")
def big(zygote: K.Pool, tmp_path_factory: pytest.TempPathFactory) -> Reference:
    """The consolidate template with ``NEW_UNITS`` more units, none in the stat cache."""
    root = tmp_path_factory.mktemp("crash-parse")
    base = W.build_base(root / "base", W.SMALL_UNITS)
    template = W.build_template("consolidate", base, root / "template")
    folder = template / "ws/evidence/curated/glossary"
    filler = ", ".join(f"bed {n}" for n in range(30))
    for n in range(NEW_UNITS):
        (folder / f"bay-{n:04d}.md").write_text(UNIT.format(n=n, filler=filler))
    return K.reference(zygote, "consolidate", template, root / "reference")


def one_per_kind(ref: Reference) -> list[tuple[int, str]]:
    """The first crash point of each kind of managed call, before and after alternating."""
    firsts: dict[str, list[tuple[int, str]]] = {}
    for k, phase in points(ref):
        firsts.setdefault(ref.ops[k - 1][0], []).append((k, phase))
    return [at[n % len(at)] for n, at in enumerate(firsts.values())]


def test_a_kill_amid_the_parse_workers_leaves_none_alive_and_no_lock(
    zygote: K.Pool, big: Reference, tmp_path: Path
) -> None:
    attempts = 3 if SOAK else 1
    killed = 0
    for attempt in range(attempts):
        run_dir = K.copy_run(big.template, tmp_path / f"parse-{attempt}")
        pids = tmp_path / f"workers-{attempt}.json"
        crashed = zygote.run("consolidate", run_dir, "killparse", pids=str(pids), env=W.ENV)
        where = f"killed amid the parse workers (attempt {attempt})"
        assert crashed.status == -9, f"{where}: exit {crashed.status} {crashed.stderr}"
        workers = json.loads(pids.read_text())
        assert workers, f"{where}: no worker was running"
        assert K.survivors(crashed.pid) == set(), f"{where}: processes of the run live on"
        check_crash_state(big, run_dir / "ws", where)
        check_rerun(zygote.zygotes[0], big, run_dir, where)
        K.remove_run(run_dir)
        killed += 1
    assert killed == attempts


def test_kills_at_each_kind_of_call_with_workers_in_the_run(
    zygote: K.Pool, big: Reference, tmp_path: Path
) -> None:
    chosen = one_per_kind(big)
    if SOAK:
        chosen = sorted(set(chosen) | set(points(big)[::10]))
    kinds = {big.ops[k - 1][0] for k, _ in chosen}
    assert kinds == {op for op, _path, _done in big.ops}
    # The kind test_crash_points cannot reach on its small workspace.
    assert "syncfs" in kinds and kinds <= set(fsio.OPS)

    def crash(z: K.Zygote, point: tuple[int, str]) -> str:
        k, phase = point
        where = f"SIGKILL {phase} op {k}/{len(big.ops)} {big.ops[k - 1][:2]}"
        run_dir = K.copy_run(big.template, tmp_path / f"k{k}-{phase}")
        crashed = z.run("consolidate", run_dir, "kill", k=k, phase=phase, env=W.ENV)
        assert crashed.status == -9, f"{where}: exit {crashed.status} {crashed.stderr}"
        assert K.survivors(crashed.pid) == set(), f"{where}: processes of the run live on"
        check_crash_state(big, run_dir / "ws", where)
        check_rerun(z, big, run_dir, where)
        K.remove_run(run_dir)
        return big.ops[k - 1][0]

    hit = zygote.map(crash, chosen)
    assert len(hit) == len(chosen)
    print(f"\n{len(hit)} kills of a {NEW_UNITS + 3}-unit consolidation: {sorted(set(hit))}")
