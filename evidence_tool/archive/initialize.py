"""init: record the current files as the baseline snapshot, without activation (SPEC.md 5)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from evidence_tool import fsio
from evidence_tool.archive import eventlog
from evidence_tool.archive import staged as staging
from evidence_tool.archive._speed import unitrecords
from evidence_tool.archive.consolidate import build_candidate, derive_files, parsed_units
from evidence_tool.archive.core import ArchiveCore
from evidence_tool.archive.derive import Derivation
from evidence_tool.archive.manifest import Manifest
from evidence_tool.archive.mirror import CURRENT, MirrorCheck
from evidence_tool.archive.results import ConsolidateResult, ConsolidateStatus
from evidence_tool.archive.snapshot import Snapshot
from evidence_tool.archive.state import State, write_state
from evidence_tool.archive.writing import write_snapshot
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.workspace._speed import gcpause


def initialize(
    core: ArchiveCore,
    actor: str,
    *,
    carried: JsonObject | None = None,
    prepare: Callable[[Snapshot], None] | None = None,
) -> ConsolidateResult:
    """Record the current files as the baseline snapshot, without activation.

    ``carried`` is a staged change (declarations, review items) that migration
    brings from legacy units; otherwise every unit gets a manual declaration.
    ``prepare`` readies the activation of the baseline (the sqlite backend builds its
    index, which the first consolidate adopts): derived, so a failure is ignored.
    """
    with core.locked("init"):
        state = core.state()
        if state.initialized:
            assert state.baseline is not None
            return ConsolidateResult(
                ConsolidateStatus.ALREADY_INITIALIZED, state.baseline, None, {}, False
            )
        report, _, d = derive_files(core, actor, carried=carried, baseline=True)
        # No previous snapshot: the mirror is written whole, as for the first consolidate.
        revision = write_snapshot(core, d, report, MirrorCheck(CURRENT))
        # The first activation indexes every unit: hand it what this scan parsed.
        unitrecords.save(core.layout, parsed_units(report).items())
        if prepare is not None:
            _prepare(prepare, build_candidate(core, revision, d, None, report))
        _record_baseline(core, actor, revision, d)
        return ConsolidateResult(
            ConsolidateStatus.INITIALIZED,
            revision,
            None,
            d.summary(),
            True,
            warnings=report.warnings,
        )


def _record_baseline(core: ArchiveCore, actor: str, revision: str, d: Derivation) -> None:
    layout = core.layout
    write_state(layout.state, State(baseline=revision))
    staging.write(layout.local / "staged.json", staging.empty())
    eventlog.append(
        layout.log,
        "baseline",
        actor,
        revision=revision,
        units=Manifest(d.manifest).unit_count(),
    )
    # init pays for its own writes: the derived caches it wrote without fsync would
    # otherwise be flushed by the first consolidate's first fsync (issue 20).
    with contextlib.suppress(OSError):  # durable writes were fsynced each already
        fsio.sync_filesystem(layout.root)


def _prepare(prepare: Callable[[Snapshot], None], baseline: Snapshot) -> None:
    """Ready the baseline's activation; without it the first consolidate does it all."""
    try:
        with gcpause.resumed():
            prepare(baseline)
    except Exception:  # derived: the first activation builds it instead
        pass
