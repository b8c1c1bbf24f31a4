"""Workspace layout, descriptors and discovery of files (SPEC.md 4)."""

from evidence_tool.workspace.layout import Layout
from evidence_tool.workspace.scan import (
    CuratedFile,
    scan_curated,
    validate_paths,
    validate_workspace,
)

__all__ = ["CuratedFile", "Layout", "scan_curated", "validate_paths", "validate_workspace"]
