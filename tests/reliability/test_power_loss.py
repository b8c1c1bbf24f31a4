"""A power cut at any fsync leaves a state the next run completes (``powerloss.py``).

At the n-th fsync of an operation, for every n, the child rewrites the tree to
what a power cut would leave -- folders as of their last fsync (unsynced renames
and removals lost), unsynced file bytes kept, dropped or garbled -- and
SIGKILLs itself.  Then the same checks as after a SIGKILL: complete snapshots,
operator files old or new, verify clean but for debris, and the same command
again reaches the uninterrupted run's exact tree.

CI cycles the three variants over n (every n gets one); ``THT_SOAK=1`` runs all
three at every n, and the wide workspace too.
"""

from __future__ import annotations

import time
from pathlib import Path

import crash_workload as W
import crashkit as K
import pytest
from crashkit import SOAK, Reference
from test_crash_points import check_crash_state, check_rerun

VARIANTS = ("kept", "dropped", "garbled")


def cut_power(pool: K.Pool, ref: Reference, scratch: Path, every_variant: bool) -> int:
    fsyncs = sum(1 for op, _p, _c in ref.ops if op == "fsync")
    cases = [
        (n, variant)
        for n in range(1, fsyncs + 1)
        for i, variant in enumerate(VARIANTS)
        if every_variant or i == n % len(VARIANTS)
    ]

    def one(z: K.Zygote, case: tuple[int, str]) -> None:
        n, variant = case
        where = f"{ref.op}: power cut at fsync {n}/{fsyncs} ({variant})"
        run_dir = K.copy_run(ref.template, scratch / f"p{n}-{variant}")
        cut = z.run(ref.op, run_dir, "powerloss", k=n, variant=variant, seed=n, env=W.ENV)
        assert cut.status == -9, f"{where}: exit {cut.status} {cut.stderr}"
        check_crash_state(ref, run_dir / "ws", where)
        check_rerun(z, ref, run_dir, where)
        K.remove_run(run_dir)

    # Sampled like the crash points past K.SAMPLE_ABOVE cases; the first and last fsync and
    # each variant stay in.
    chosen = K.sample(
        cases, lambda c: f"{c[1]} {'first' if c[0] == 1 else 'last' if c[0] == fsyncs else ''}"
    )
    assert len(chosen) > 0 and {v for _, v in chosen} == {v for _, v in cases}
    pool.map(one, chosen)
    return len(chosen)


@pytest.mark.parametrize("op", W.OPERATIONS)
def test_a_power_cut_at_every_fsync_converges(
    op: str, zygote: K.Pool, references: dict[str, Reference], tmp_path: Path
) -> None:
    started = time.monotonic()
    cases = cut_power(zygote, references[op], tmp_path, every_variant=SOAK)
    print(f"\n{op}: {cases} power cuts, 0 lost ({time.monotonic() - started:.1f} s)")


@pytest.mark.skipif(not SOAK, reason="the wide workspace runs with THT_SOAK=1")
@pytest.mark.parametrize("op", W.OPERATIONS)
def test_a_power_cut_at_every_fsync_converges_on_a_wider_workspace(
    op: str, zygote: K.Pool, wide_references: dict[str, Reference], tmp_path: Path
) -> None:
    cases = cut_power(zygote, wide_references[op], tmp_path, every_variant=True)
    print(f"\n{op} (wide): {cases} power cuts, 0 lost")
