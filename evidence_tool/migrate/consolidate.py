"""The first consolidation of a legacy workspace: migrate, then validate and activate
(SPEC.md 7).  Without a legacy manifest this is exactly ``archive.consolidate``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from evidence_tool.archive.local import (
    Activate,
    CatalogRecord,
    ConsolidateResult,
    ConsolidateStatus,
    LocalEvidenceArchive,
)
from evidence_tool.errors import EvidenceError, EvidenceWarning
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.migrate.reading import LEGACY_MANIFEST, has_legacy_manifest

if TYPE_CHECKING:
    from evidence_tool.migrate.run import MigrationResult


@dataclass
class MigratedConsolidateResult(ConsolidateResult):
    """A consolidation result that also reports the migration that ran first."""

    migration: MigrationResult | None = None

    def to_json(self) -> JsonObject:
        migration = self.migration.to_json() if self.migration else None
        return {**super().to_json(), "migration": migration}


def _with_migration(result: ConsolidateResult, migration: MigrationResult) -> ConsolidateResult:
    base = {f.name: getattr(result, f.name) for f in fields(ConsolidateResult)}
    base["warnings"] = [*migration.warnings, *result.warnings, _note(migration)]
    return MigratedConsolidateResult(**base, migration=migration)


def _note(migration: MigrationResult) -> EvidenceWarning:
    n = len(migration.plan.units) if migration.plan else 0
    if migration.dry_run:
        text = (
            f"dry run: {n} legacy unit(s) would be converted to v4 first (tht evidence "
            "migrate --dry-run shows the plan); validation and activation follow the conversion"
        )
    else:
        text = f"converted {n} legacy unit(s) to v4 first and removed {LEGACY_MANIFEST}"
    return EvidenceWarning(text, LEGACY_MANIFEST, None, "W160")


def consolidate(
    archive: LocalEvidenceArchive,
    actor: str,
    activate: Activate | None,
    dry_run: bool = False,
    *,
    warnings_as_errors: bool = False,
    extra_warnings: Sequence[EvidenceWarning] = (),
    catalog: CatalogRecord | None = None,
) -> ConsolidateResult:
    """Consolidate; while ``evidence/manifest.yaml`` exists, migrate the workspace first."""
    root = archive.layout.root

    def plain() -> ConsolidateResult:
        return archive.consolidate(
            actor,
            activate,
            dry_run,
            warnings_as_errors=warnings_as_errors,
            extra_warnings=extra_warnings,
            catalog=catalog,
        )

    if not has_legacy_manifest(root):
        return plain()
    from evidence_tool.migrate.run import migrate  # the converter, for legacy workspaces only

    migration = migrate(root, actor, dry_run=dry_run)
    if dry_run and migration.plan is not None and migration.plan.mode == "convert":
        # The v4 files do not exist yet, so there is nothing to validate against: report the plan.
        state = archive.state()
        pending = ConsolidateResult(
            ConsolidateStatus.WOULD_MIGRATE,
            None,  # type: ignore[arg-type]  # no revision: a dry run converts nothing
            state.active,
            {},
            False,
            True,
        )
        return _with_migration(pending, migration)
    try:
        result = plain()
    except EvidenceError as exc:
        # The conversion stands (it is the baseline); say so next to the validation errors.
        exc.add_result(migration=migration.to_json())
        raise
    return _with_migration(result, migration)
