"""Read-only Git for the evidence tree (SPEC.md 9): state, quoted commands, strict verify.

The only package (with ``migrate``) that imports gitpython.  Nothing here runs
a Git command that writes: no add, commit, push, and no index refresh either
(every command runs with ``GIT_OPTIONAL_LOCKS=0``).  Outside a Git worktree
the state degrades to a note; only ``git-commands`` needs a worktree (E602).
"""

from evidence_tool.gitflow.commands import git_commands
from evidence_tool.gitflow.repository import EvidenceRepo, open_repo
from evidence_tool.gitflow.status import git_state
from evidence_tool.gitflow.strict import verify_strict

__all__ = ["EvidenceRepo", "git_commands", "git_state", "open_repo", "verify_strict"]
