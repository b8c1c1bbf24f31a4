"""``<workspace-root>/.evidence-cache/``: derived data, git-ignored by its own .gitignore."""

from __future__ import annotations

from pathlib import Path

from evidence_tool import fsio
from evidence_tool.workspace.layout import Layout


def ensure_cache(layout: Layout) -> Path:
    """The cache folder, created with a .gitignore that keeps all of it out of Git."""
    cache = layout.cache
    ignore = cache / ".gitignore"
    if not ignore.exists():
        fsio.write_atomic(ignore, b"# derived by evidence-tool: never commit\n*\n")
    return cache
