"""The migration plan, computed entirely in memory: the same code path for a real run and
``--dry-run``, and every refusal (E160, E301, E701, invalid v4 files) decided before a write.

Two modes.  ``convert``: the archive is not initialized yet; write the v4 files
and the acquired sources, then initialize the baseline.  ``finish``: an earlier
run initialized the baseline and was interrupted before it removed every
legacy file; only the removal is left, after checking that the baseline holds
each legacy unit exactly as converted.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from evidence_tool.archive.snapshot import Snapshot
from evidence_tool.errors import (
    ConflictError,
    Diagnostic,
    EvidenceWarning,
    IntegrityError,
    InvalidFilesError,
)
from evidence_tool.jsonvalue import JsonObject, View
from evidence_tool.migrate.convert import Converted, convert
from evidence_tool.migrate.legacy import read_unit
from evidence_tool.migrate.provenance import AcquiredSource, Carried, SourceReader, carry
from evidence_tool.migrate.reading import (
    LEGACY_MANIFEST,
    UNITS_DIR,
    LegacyManifest,
    LosslessConversionError,
    ManifestUnit,
    Problem,
    read_bytes,
    read_manifest,
)
from evidence_tool.workspace.layout import Layout
from evidence_tool.workspace.scan import scan_curated

WRITE, UNCHANGED, RECORDED = "write", "unchanged", "recorded"


@dataclass
class PlannedUnit(View):
    entry: ManifestUnit
    converted: Converted | None  # None in finish mode when the legacy file is already gone
    target: str
    action: str  # write | unchanged (convert mode); recorded (finish mode)
    provenance: str = "migrating actor"  # manual | document | migrating actor
    review_items: int = 0
    _keys = (
        "id=entry.id",
        "version=entry.version",
        "from=entry.path",
        "to=target",
        "action",
        "provenance",
        "review_items",
    )


@dataclass
class Plan:
    mode: str  # convert | finish
    units: list[PlannedUnit]
    sources: list[tuple[AcquiredSource, str]]
    removals: list[str]  # legacy unit files still present, then the legacy manifest
    carried: JsonObject  # the staged change ``initialize`` records (Carried.staged_change)
    warnings: list[EvidenceWarning] = field(default_factory=list)


class Planner:
    """Builds plans; conversions are cached by file bytes, so re-planning under the lock
    (and again before removal) re-reads every file but converts only what changed."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self._cache: dict[str, tuple[bytes, Converted | list[Problem]]] = {}

    def _convert(self, entry: ManifestUnit) -> Converted | list[Problem]:
        legacy = read_unit(self.layout, entry)
        if isinstance(legacy, list):
            return legacy
        cached = self._cache.get(entry.path)
        if cached is not None and cached[0] == legacy.data:
            return cached[1]
        result = convert(legacy)
        self._cache[entry.path] = (legacy.data, result)
        return result

    def plan(self, baseline: Snapshot | None) -> Plan:
        """Raise LosslessConversionError (E160) with every problem, or return the plan."""
        manifest, problems = read_manifest(self.layout)
        if problems:
            raise LosslessConversionError(problems)
        mode = "convert" if baseline is None else "finish"
        units: list[PlannedUnit] = []
        carried = Carried()
        sources = SourceReader(self.layout, manifest)
        for entry in manifest.units:
            if mode == "finish" and not self._exists(entry.path):
                units.append(PlannedUnit(entry, None, "", RECORDED))
                continue
            result = self._convert(entry)
            if isinstance(result, list):
                problems.extend(result)
                continue
            if result.unit.id != entry.id:
                problems.append(
                    result.legacy.problem(
                        ("id",),
                        f"the legacy manifest lists this file as '{entry.id}'; ids are "
                        "preserved, so they must agree",
                    )
                )
                continue
            planned = PlannedUnit(
                entry, result, result.target, WRITE if mode == "convert" else RECORDED
            )
            if mode == "convert":
                problems.extend(carry(result, sources, carried))
                decl = carried.declarations.get(result.unit.id)
                planned.provenance = decl.kind if decl else "migrating actor"
                planned.review_items = len(carried.review_items.get(result.unit.id, []))
            units.append(planned)
        problems.extend(_duplicates(units))
        if mode == "finish":
            assert baseline is not None
            problems.extend(_check_baseline(units, baseline))
        if problems:
            raise LosslessConversionError(problems)
        plan = Plan(mode, units, [], [], carried.staged_change())
        if mode == "convert":
            self._check_targets(plan)
            plan.sources = [(s, self._source_action(s)) for _, s in sorted(carried.sources.items())]
        plan.removals = [u.entry.path for u in units if self._exists(u.entry.path)]
        plan.removals.append(LEGACY_MANIFEST)
        plan.warnings = self._unlisted(manifest)
        return plan

    def _exists(self, rel: str) -> bool:
        try:
            return os.path.lexists(self.layout.resolve_inside(rel))
        except ValueError:  # a path leaving the workspace: reported by read_unit
            return False

    def _check_targets(self, plan: Plan) -> None:
        """Each target is absent or already holds the converted bytes (an interrupted run);
        other v4 files must be valid and use other ids, or initialize would fail halfway."""
        targets = {u.target: u for u in plan.units}
        for rel in targets:
            if not self.layout.inside(self.layout.resolve_inside(rel)):
                raise ConflictError(f"{rel} leads outside the workspace", path=rel)
        existing = scan_curated(self.layout) if os.path.isdir(self.layout.curated) else None
        conflicts, others = [], []
        for f in existing.files if existing else []:
            planned = targets.get(f.rel)
            if planned is None:
                others.append(f)
            elif planned.converted and f.data == planned.converted.data:
                planned.action = UNCHANGED
            else:
                conflicts.append(f.rel)
        if conflicts:
            raise ConflictError(
                f"{', '.join(conflicts)} already exist(s) with other content; migration never "
                "overwrites a v4 file: move it away (or delete it) and migrate again",
                path=conflicts[0],
                details={"result": {"paths": [*conflicts]}},
            )
        errors = [d for d in (existing.errors if existing else []) if d.path not in targets]
        if errors:
            raise InvalidFilesError(errors, "the existing v4 files need correction first")
        ids = {u.entry.id: u for u in plan.units}
        clashes = [
            Diagnostic(
                "E120",
                f"id '{f.result.unit_id}' is used by {f.rel} and by the legacy unit "
                f"{ids[f.result.unit_id].entry.path}; give one of them a new id",
                f.rel,
                3,
                1,
                f.result.unit_id,
            )
            for f in others
            if f.result.unit_id in ids
        ]
        if clashes:
            raise InvalidFilesError(clashes)

    def _source_action(self, source: AcquiredSource) -> str:
        data = read_bytes(self.layout, source.target)
        if isinstance(data, str):
            return WRITE
        if data != source.data:
            raise IntegrityError(
                f"{source.target} does not match its name (a managed acquired source was "
                "edited); restore it from Git",
                path=source.target,
            )
        return UNCHANGED

    def _unlisted(self, manifest: LegacyManifest) -> list[EvidenceWarning]:
        listed = {u.path for u in manifest.units}
        top = self.layout.resolve_inside(UNITS_DIR)
        out = []
        for folder, dirs, files in os.walk(top):
            dirs.sort()
            for name in sorted(files):
                rel = self.layout.rel(os.path.join(folder, name))
                if rel not in listed:
                    out.append(
                        EvidenceWarning(
                            "not listed in the legacy manifest, so not a legacy unit: "
                            "left in place",
                            rel,
                            None,
                            "W160",
                        )
                    )
        return out


def _duplicates(units: list[PlannedUnit]) -> list[Problem]:
    out: list[Problem] = []
    seen_ids: dict[str, str] = {}
    seen_targets: dict[str, str] = {}
    for u in units:
        legacy = u.converted.legacy if u.converted else None
        if u.entry.id in seen_ids:
            reason = f"'{u.entry.id}' is also the id of {seen_ids[u.entry.id]}; ids are unique"
            out.append(
                legacy.problem(("id",), reason)
                if legacy
                else Problem(u.entry.path, "id", reason, u.entry.id)
            )
        seen_ids.setdefault(u.entry.id, u.entry.path)
        if legacy is None or not u.target:
            continue
        if u.target in seen_targets:
            out.append(
                legacy.problem(
                    ("path",),
                    f"converts to {u.target}, as {seen_targets[u.target]} does; rename one",
                )
            )
        seen_targets.setdefault(u.target, u.entry.path)
    return out


def _check_baseline(units: list[PlannedUnit], baseline: Snapshot) -> list[Problem]:
    """Finish mode: the baseline must hold every legacy unit (as converted, if still present)."""
    out = []
    for u in units:
        entry = baseline.entry(u.entry.id)
        if entry is not None and (
            u.converted is None or entry.content_hash == u.converted.unit.content_hash
        ):
            u.target = entry.path
            u.provenance = entry.provenance_kind.value
            u.review_items = len(entry.review_items)
            continue
        why = "does not hold this unit" if entry is None else "holds other content for it"
        out.append(
            Problem(
                u.entry.path,
                "id",
                f"the archive is already initialized and its baseline {why}; an interrupted "
                "migration can only be finished with unchanged legacy files. Restore the "
                "legacy file from Git, or convert it by hand and remove evidence/manifest.yaml",
                u.entry.id,
                u.entry.line,
            )
        )
    return out
