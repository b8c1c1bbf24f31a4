"""Where a finding's file is shown: the same rule for every CI format."""

from __future__ import annotations

import os
from pathlib import Path


def display_path(path: str | None, workspace: str | None) -> str | None:
    """A finding's file relative to the current folder when under it, else absolute
    (CI runs from the repository root, which is what GitHub and SARIF resolve against)."""
    if not path:
        return None
    full = os.path.abspath(os.path.join(workspace or os.getcwd(), path))
    rel = os.path.relpath(full, os.getcwd())
    return full if rel == ".." or rel.startswith("../") else Path(rel).as_posix()
