"""Read-only Git for the evidence tree (SPEC.md 9): state, quoted commands, strict verify.

The only package that imports gitpython; a sibling of sources, activation and
migrate (SPEC.md 2).  Nothing here runs a Git command that writes: no add,
commit, push, and no index refresh either (every command runs with
``GIT_OPTIONAL_LOCKS=0``).  Outside a Git worktree the state degrades to a
note; ``git-commands`` and migration (``require_worktree``) need one (E602).
"""

from evidence_tool.gitflow.commands import git_commands
from evidence_tool.gitflow.repository import EvidenceRepo, open_repo, require_worktree
from evidence_tool.gitflow.status import git_state
from evidence_tool.gitflow.strict import verify_strict

__all__ = [
    "EvidenceRepo",
    "git_commands",
    "git_state",
    "open_repo",
    "require_worktree",
    "verify_strict",
]
