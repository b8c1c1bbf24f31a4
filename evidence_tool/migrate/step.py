"""Migration as its own step of consolidate (SPEC.md 7): the façade (session.py) runs it
first while the workspace still holds ``evidence/manifest.yaml``; a v4 workspace never
loads it."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from evidence_tool.archive.local import ConsolidateResult, ConsolidateStatus, LocalEvidenceArchive
from evidence_tool.errors import EvidenceWarning
from evidence_tool.migrate.reading import LEGACY_MANIFEST

if TYPE_CHECKING:
    from evidence_tool.migrate.run import MigrationResult


@dataclass
class MigratedConsolidateResult(ConsolidateResult):
    """A consolidation result that also reports the migration that ran first."""

    migration: MigrationResult | None = None
    _keys = (*ConsolidateResult._keys, "migration")


def migrate_first(archive: LocalEvidenceArchive, actor: str, dry_run: bool) -> MigrationResult:
    """Convert the legacy workspace (a dry run only plans it) before it is consolidated."""
    from evidence_tool.migrate.run import migrate  # the converter, for legacy workspaces only

    return migrate(archive.layout.root, actor, dry_run=dry_run)


def would_migrate(migration: MigrationResult, dry_run: bool) -> bool:
    """A dry run that would convert: the v4 files do not exist yet, so there is nothing
    to validate against; the plan is the result (``planned``)."""
    return dry_run and migration.plan is not None and migration.plan.mode == "convert"


def planned(archive: LocalEvidenceArchive, migration: MigrationResult) -> ConsolidateResult:
    """The result of a dry run that would convert first: no revision, the plan."""
    state = archive.state()
    pending = ConsolidateResult(
        ConsolidateStatus.WOULD_MIGRATE,
        None,  # type: ignore[arg-type]  # no revision: a dry run converts nothing
        state.active,
        {},
        False,
        True,
    )
    return with_migration(pending, migration)


def with_migration(result: ConsolidateResult, migration: MigrationResult) -> ConsolidateResult:
    """``result`` reporting the migration that ran first (and W160 saying so)."""
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
