"""The Git-worktree path check (SPEC.md 7): migration removes legacy files, so it only runs
where Git holds the pre-migration state.  Read-only: gitpython reads the repository
files; no Git command is run on the repository and nothing is staged or committed.
"""

from __future__ import annotations

import os
from pathlib import Path

from evidence_tool.errors import EvidenceError


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def require_worktree(root: Path) -> None:
    """Raise E602 (exit 6) unless ``root`` lies in the working tree of a non-bare repository."""
    import git

    real = os.path.realpath(root)
    refusal = EvidenceError(
        f"{root} is not inside a Git worktree; migration removes the legacy files, so it "
        "runs only where Git keeps the pre-migration state ('git init' or clone, commit the "
        "legacy tree, then migrate)",
        code="E602",
        path=str(root),
    )
    try:
        repo = git.Repo(real, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise refusal from None
    try:
        tree = repo.working_tree_dir
        git_dir = os.path.realpath(repo.git_dir)
        bare = repo.bare
    finally:
        repo.close()
    if bare or tree is None:
        raise refusal
    if not _inside(real, os.path.realpath(tree)) or _inside(real, git_dir):
        raise refusal
