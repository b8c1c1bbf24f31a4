"""Workspace layout, descriptors and discovery of files (SPEC.md 4)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evidence_tool.lazy import lazy_face

if TYPE_CHECKING:
    from evidence_tool.workspace.curated import CuratedFile as CuratedFile
    from evidence_tool.workspace.layout import Layout as Layout
    from evidence_tool.workspace.scan import scan_curated as scan_curated
    from evidence_tool.workspace.scan import validate_paths as validate_paths
    from evidence_tool.workspace.scan import validate_workspace as validate_workspace

lazy_face(
    __name__,
    {
        "CuratedFile": "curated",
        "Layout": "layout",
        "scan_curated": "scan",
        "validate_paths": "scan",
        "validate_workspace": "scan",
    },
)
