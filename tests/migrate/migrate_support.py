"""Helpers of the migration tests, importable by name.

Every test folder has a conftest.py, so ``from conftest import ...`` resolves to
whichever conftest Python imported first when the whole suite runs together.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

LEGACY = Path(__file__).resolve().parents[2] / "fixtures" / "legacy"
NOW = "2026-03-01T12:00:00Z"


def git_init(path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(path)], check=True, capture_output=True)


def tree_hashes(root: Path, *, skip: tuple[str, ...] = ()) -> dict[str, str]:
    """Every file and folder under ``root`` (relative path -> sha256 or 'dir')."""
    out = {}
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        rel_folder = Path(folder).relative_to(root).as_posix()
        if any(rel_folder == s or rel_folder.startswith(s + "/") for s in skip):
            continue
        out[rel_folder + "/"] = "dir"
        for name in files:
            rel = (Path(folder) / name).relative_to(root).as_posix()
            if rel in skip:
                continue
            out[rel] = hashlib.sha256((Path(folder) / name).read_bytes()).hexdigest()
    return out
