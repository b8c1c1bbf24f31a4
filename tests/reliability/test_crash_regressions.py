"""Regressions the crash harness found, each at the crash point that exposed it.

Each test kills the operation at a named point (an operation on a path, the
n-th of its kind), then checks the one thing that used to go wrong there.
"""

from __future__ import annotations

import json
from pathlib import Path

import crash_workload as W
import crashkit as K
from crashkit import Reference

from evidence_tool.archive import eventlog


def kill_at(
    pool: K.Pool,
    ref: Reference,
    tmp: Path,
    op: str,
    fragment: str,
    phase: str = "after",
    nth: int = 1,
) -> Path:
    """A copy of the operation's template, killed at the ``nth`` ``op`` on a path holding
    ``fragment``; returns the run folder."""
    ks = [k for k, (o, path, _) in enumerate(ref.ops, 1) if o == op and fragment in path]
    run_dir = K.copy_run(ref.template, tmp / "run")
    crashed = pool.run(ref.op, run_dir, "kill", k=ks[nth - 1], phase=phase, env=W.ENV)
    assert crashed.status == -9, crashed.stderr
    return run_dir


def rerun(pool: K.Pool, ref: Reference, run_dir: Path) -> K.Run:
    again = pool.run(ref.op, run_dir, env=W.ENV)
    assert again.status == 0, again.stdout + again.stderr
    assert K.digest(run_dir / "ws") == ref.digest
    return again


def test_decide_run_again_after_its_journal_finishes_instead_of_e304(
    zygote: K.Pool, references: dict[str, Reference], tmp_path: Path
) -> None:
    """It answered E304 'no pending comparison': the comparison was consumed by the
    journaled change the killed run had already committed."""
    ref = references["decide-replace"]
    run_dir = kill_at(zygote, ref, tmp_path, "replace", "/journal/")
    again = rerun(zygote, ref, run_dir)
    assert again.envelope is not None and again.envelope["result"]["already_saved"] is True


def test_decide_run_again_after_activation_records_activated(
    zygote: K.Pool, references: dict[str, Reference], tmp_path: Path
) -> None:
    """The re-run found the snapshot active ('unchanged') and recorded that as the
    decision's status instead of 'activated'."""
    ref = references["decide-keep"]
    run_dir = kill_at(zygote, ref, tmp_path, "replace", "state.yaml", nth=2)
    rerun(zygote, ref, run_dir)
    registry = json.loads((run_dir / "ws/evidence/.local/sources.json").read_text())
    decisions = [r["decision"] for r in registry["sources"].values() if r.get("decision")]
    assert {d["status"] for d in decisions} == {"activated"}


def test_save_and_remove_run_again_after_their_journal_succeed(
    zygote: K.Pool, references: dict[str, Reference], tmp_path: Path
) -> None:
    """Both failed (E301, E901) although the killed run's journal had done their work."""
    for op in ("save", "remove"):
        ref = references[op]
        run_dir = kill_at(zygote, ref, tmp_path / op, "replace", "/journal/")
        rerun(zygote, ref, run_dir)


def test_restore_run_again_at_each_stage_succeeds(
    zygote: K.Pool, references: dict[str, Reference], tmp_path: Path
) -> None:
    """After the journal (E121: the file is back), after the pending candidate and after
    activation (E901: no deletion record) the re-run failed instead of finishing."""
    ref = references["restore"]
    stages = (
        ("replace", "/journal/", 1),
        ("replace", "state.yaml", 1),
        ("replace", "state.yaml", 2),
    )
    for n, (op, fragment, nth) in enumerate(stages):
        run_dir = kill_at(zygote, ref, tmp_path / str(n), op, fragment, nth=nth)
        rerun(zygote, ref, run_dir)


def test_a_snapshot_folder_without_its_manifest_is_debris(
    zygote: K.Pool, references: dict[str, Reference], tmp_path: Path
) -> None:
    """verify reported E701 'snapshot missing' for the folder a killed consolidation had just
    created, and no operation ever removed it."""
    ref = references["consolidate"]
    run_dir = kill_at(zygote, ref, tmp_path, "mkdir", "/snapshots/")
    ws = run_dir / "ws"
    assert [p for p in (ws / "evidence/.local/snapshots").iterdir() if not any(p.iterdir())]
    assert K.verify(ws) == []
    rerun(zygote, ref, run_dir)


def test_local_manifest_ahead_of_state_is_named_an_interrupted_consolidation(
    zygote: K.Pool, references: dict[str, Reference], tmp_path: Path
) -> None:
    """It was reported as 'edited by hand?' (and, before any snapshot, as 'the archive has
    no snapshot'): a consolidation killed between local-manifest.yaml and state.yaml."""
    for op in ("consolidate", "migrate"):
        ref = references[op]
        run_dir = kill_at(zygote, ref, tmp_path / op, "replace", "local-manifest.yaml")
        [finding] = K.verify(run_dir / "ws")
        assert "a consolidation was interrupted" in finding["message"], finding
        rerun(zygote, ref, run_dir)


def test_a_journaled_restore_is_not_a_reserved_id_in_use(
    zygote: K.Pool, references: dict[str, Reference], tmp_path: Path
) -> None:
    """verify reported the restored file as 'live unit uses the reserved id' while the
    journal entry staging its restoration was still pending."""
    ref = references["restore"]
    run_dir = kill_at(zygote, ref, tmp_path, "replace", "curated/enum/triage-code.md")
    assert list((run_dir / "ws/evidence/.local/journal").glob("*.json"))
    assert K.verify(run_dir / "ws") == []


def test_an_event_after_a_torn_last_line_is_kept(tmp_path: Path) -> None:
    """A power cut can leave half a line at the end of log.jsonl; the next event was glued
    to it and both were skipped as one unreadable line."""
    log = tmp_path / "log.jsonl"
    eventlog.append(log, "consolidated", "alice", revision="a" * 64)
    log.write_bytes(log.read_bytes() + b'{"event": "activ')
    eventlog.append(log, "activated", "alice", revision="a" * 64)
    assert [e["event"] for e in eventlog.read(log)] == ["consolidated", "activated"]


def test_the_lock_note_is_durable_before_anything_is_written(
    references: dict[str, Reference],
) -> None:
    """The note tells the next holder to sweep a killed run's temp files; it was never
    fsynced, so a power cut could empty it while temp files survived (found by the
    power-loss test once the model included the lock file)."""
    for ref in references.values():
        lock = next(
            k for k, (o, p, _) in enumerate(ref.ops) if o == "fsync" and p.endswith(".lock")
        )
        first_write = next(
            k
            for k, (o, p, _) in enumerate(ref.ops)
            if o in ("open", "write") and not p.endswith(".lock")
        )
        assert lock < first_write, ref.op


def test_a_temp_file_left_in_the_cache_is_swept(
    zygote: K.Pool, references: dict[str, Reference], tmp_path: Path
) -> None:
    """The sweep walked evidence/ only: a stat-cache temp file killed mid-write stayed in
    .evidence-cache/ for good."""
    ref = references["consolidate"]
    run_dir = kill_at(zygote, ref, tmp_path, "open", ".evidence-cache/", phase="after")
    assert [p for p in K.temp_files(run_dir / "ws") if p.startswith(".evidence-cache/")]
    rerun(zygote, ref, run_dir)
    assert K.temp_files(run_dir / "ws") == []
