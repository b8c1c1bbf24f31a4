"""Legacy unit versions 1-3 -> v4 (SPEC.md 7, docs/legacy-formats.md).

``migrate`` converts a workspace and initializes its archive baseline;
``step`` is the migration the façade (session.py) runs before consolidating a legacy
workspace.  Layer: above archive, beside sources and activation, below cli;
it uses gitflow's worktree check (the one sibling edge, see pyproject.toml).
Names are loaded on first use (``evidence_tool.lazy``): a consolidation without a
legacy manifest must not load the converter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evidence_tool.lazy import lazy_face

if TYPE_CHECKING:
    from evidence_tool.migrate.reading import (
        LEGACY_MANIFEST,
        LosslessConversionError,
        Problem,
        has_legacy_manifest,
    )
    from evidence_tool.migrate.run import MigrationResult, migrate

__all__ = [
    "LEGACY_MANIFEST",
    "LosslessConversionError",
    "MigrationResult",
    "Problem",
    "has_legacy_manifest",
    "migrate",
]

lazy_face(
    __name__,
    {
        "LEGACY_MANIFEST": "reading",
        "LosslessConversionError": "reading",
        "MigrationResult": "run",
        "Problem": "reading",
        "has_legacy_manifest": "reading",
        "migrate": "run",
    },
)
