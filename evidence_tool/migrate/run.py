"""``migrate(root, actor)``: legacy units -> v4 files plus an initialized archive baseline.

Write order, chosen so that a run interrupted anywhere is finished by the next:

1. plan in memory (every refusal happens here, before any write);
2. under the archive lock, re-plan and write the v4 files and acquired sources
   (a file that already holds the converted bytes is left alone);
3. ``initialize(actor, carried=...)``: the baseline with the legacy provenance
   and review items (state.yaml is written last, so it is all or nothing);
4. under the lock, re-plan in finish mode (the baseline must hold every legacy
   unit as converted), remove the legacy unit files, prune emptied legacy
   folders, and remove ``evidence/manifest.yaml`` last.

While the legacy manifest exists the workspace counts as not migrated, so a
re-run resumes at step 2 (before the baseline) or step 4 (after it).  Without
it, migrate is a no-op that writes nothing, not even the lock file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from enum import StrEnum

from evidence_tool import fsio
from evidence_tool.archive import eventlog
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.archive.snapshot import Snapshot
from evidence_tool.errors import AvailabilityError, EvidenceWarning
from evidence_tool.jsonvalue import JsonObject, View
from evidence_tool.migrate.plan import WRITE, Plan, PlannedUnit, Planner
from evidence_tool.migrate.reading import LEGACY_MANIFEST, UNITS_DIR, has_legacy_manifest
from evidence_tool.workspace.layout import Layout
from evidence_tool.workspace.locate import require_workspace

# Migration removes the legacy files: it runs only where Git holds what it removes.
_WHY_GIT = (
    "migration removes the legacy files, so it runs only where Git keeps the pre-migration "
    "state ('git init' or clone, commit the legacy tree, then migrate)"
)


class MigrationStatus(StrEnum):
    MIGRATED = "migrated"
    FINISHED = "finished"  # a baseline existed: only the legacy files were removed
    WOULD_MIGRATE = "would_migrate"
    WOULD_FINISH = "would_finish"
    NOTHING_TO_MIGRATE = "nothing_to_migrate"


@dataclass
class MigrationResult(View):
    status: MigrationStatus
    dry_run: bool
    plan: Plan | None = None
    baseline: str | None = None
    removed: list[str] = field(default_factory=list)

    @property
    def warnings(self) -> list[EvidenceWarning]:
        return list(self.plan.warnings) if self.plan else []

    @property
    def removals(self) -> list[str]:
        """What was removed, or (a dry run) what would be."""
        return self.removed if not self.dry_run else (self.plan.removals if self.plan else [])

    _keys = (
        "status",
        "dry_run",
        "mode",
        "baseline",
        "units",
        "sources",
        "removed=removals",
        "counts",
    )

    @property
    def mode(self) -> str | None:
        return self.plan.mode if self.plan else None

    @property
    def units(self) -> list[PlannedUnit]:
        return self.plan.units if self.plan else []

    @property
    def sources(self) -> list[JsonObject]:
        pairs = self.plan.sources if self.plan else []
        return [{"from": s.legacy_path, "to": s.target, "action": a} for s, a in pairs]

    @property
    def counts(self) -> dict[str, int]:
        return {
            "units": len(self.units),
            "written": sum(u.action == WRITE for u in self.units),
            "sources": len(self.sources),
            "removed": len(self.removals),
        }

    def lines(self) -> list[str]:
        if self.status == MigrationStatus.NOTHING_TO_MIGRATE:
            return [f"nothing to migrate: no {LEGACY_MANIFEST}"]
        verb = "would remove" if self.dry_run else "removed"
        units = self.units
        out = [f"{self.status}: {len(units)} legacy unit(s)"]
        out += [
            f"  v{u.entry.version} {u.entry.path} -> {u.target} ({u.action}, "
            f"provenance: {u.provenance}, review items: {u.review_items})"
            for u in units
        ]
        out += [
            f"  source {s.legacy_path} -> {s.target} ({action})"
            for s, action in (self.plan.sources if self.plan else [])
        ]
        out.append(f"  {verb}: {', '.join(self.removals)}")
        if self.baseline:
            out.append(f"  baseline: {self.baseline} (not activated)")
        return out


def _baseline(archive: LocalEvidenceArchive) -> Snapshot | None:
    state = archive.state()
    return archive.snapshot(state.baseline) if state.baseline else None


def migrate(root: str | os.PathLike[str], actor: str, *, dry_run: bool = False) -> MigrationResult:
    """Convert every legacy unit to v4 and initialize the baseline (SPEC.md 7); never activates.

    Raises E603 (no workspace), E602 (not a Git worktree), E160 (a field v4 cannot hold),
    E301 (a v4 file in the way) before writing anything.
    """
    layout = Layout.at(root)
    if not layout.root.is_dir():
        raise AvailabilityError(
            f"the workspace root {layout.root} does not exist", code="E603", path=str(root)
        )
    from evidence_tool.gitflow.repository import require_worktree  # only when migrating

    require_worktree(layout.root, _WHY_GIT)
    # Not a workspace: "nothing to migrate" (exit 0) would pass a job in the wrong checkout.
    require_workspace(layout.root)
    if not has_legacy_manifest(layout.root):
        return MigrationResult(MigrationStatus.NOTHING_TO_MIGRATE, dry_run)
    archive = LocalEvidenceArchive(layout.root)
    planner = Planner(layout)
    plan = planner.plan(_baseline(archive))
    if dry_run:
        verb = "migrate" if plan.mode == "convert" else "finish"
        return MigrationResult(MigrationStatus(f"would_{verb}"), True, plan)
    first_mode = plan.mode
    if plan.mode == "convert":
        with archive.locked("migrate"):
            plan = planner.plan(_baseline(archive))
            if plan.mode == "convert":
                _write(layout, plan)
        if plan.mode == "convert":
            archive.initialize(actor, carried=plan.carried)
    with archive.locked("migrate"):
        final = planner.plan(_baseline(archive))
        assert final.mode == "finish", "initialize() returned without a baseline"
        baseline = archive.state().baseline
        removed = _remove_units(layout, final)
        # Logged before the manifest goes: a crash in between repeats the event on the
        # re-run rather than losing it.
        eventlog.append(
            layout.log,
            "migrated",
            actor,
            revision=baseline,
            units=len(final.units),
            removed=len(removed) + 1,
        )
        fsio.unlink(layout.resolve_inside(LEGACY_MANIFEST), missing_ok=True)
        removed.append(LEGACY_MANIFEST)
    status = MigrationStatus.MIGRATED if first_mode == "convert" else MigrationStatus.FINISHED
    return MigrationResult(
        status, False, plan if first_mode == "convert" else final, baseline, removed
    )


def _write(layout: Layout, plan: Plan) -> None:
    # One step: a failure undoes the v4 files written so far (the legacy ones are intact).
    fsio.begin_step()
    for u in plan.units:
        if u.action == WRITE and u.converted is not None:
            fsio.write_atomic(layout.resolve_inside(u.target), u.converted.data)
    for source, action in plan.sources:
        if action == WRITE:
            fsio.write_atomic(layout.resolve_inside(source.target), source.data)
    fsio.makedirs(layout.curated)  # a legacy workspace with no units still gets a curated tree


def _remove_units(layout: Layout, plan: Plan) -> list[str]:
    """Legacy unit files, then emptied legacy folders; the manifest (the resume marker) is
    removed by the caller, last."""
    removed = []
    for rel in plan.removals:
        if rel != LEGACY_MANIFEST:
            fsio.unlink(layout.resolve_inside(rel), missing_ok=True)
            removed.append(rel)
    top = layout.resolve_inside(UNITS_DIR)
    kinds = sorted(p for p in top.iterdir() if p.is_dir()) if top.is_dir() else []
    for folder in [*kinds, top]:
        if folder.is_dir() and not folder.is_symlink() and not any(folder.iterdir()):
            fsio.rmdir(folder)
    return removed
