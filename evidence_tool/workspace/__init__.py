"""Workspace layout, descriptors and discovery of files (SPEC.md 4)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evidence_tool.lazy import lazy_face

if TYPE_CHECKING:
    from evidence_tool.workspace.curated import CuratedFile
    from evidence_tool.workspace.layout import Layout
    from evidence_tool.workspace.scan import (
        scan_curated,
        validate_paths,
        validate_workspace,
    )

__all__ = ["CuratedFile", "Layout", "scan_curated", "validate_paths", "validate_workspace"]

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
