"""``git-commands``: POSIX-shell examples to review and commit the complete evidence tree.

Every path is quoted with ``shlex.quote`` and relative to the repository top,
and every command starts with ``git -C <top>``, so the lines run from any
folder, for workspace paths with spaces, quotes or non-ASCII letters alike.
``add`` and ``commit`` name ``evidence``, ``workspace.yaml``, ``.gitignore`` and the
import inputs the descriptor names (a clone needs them to refresh): the lock file
and ``.evidence-cache/`` sit beside them and are never staged.  The
commit is limited to those paths (``git commit -- PATHS``), so unrelated
staged work stays staged and out of the evidence commit.
"""

from __future__ import annotations

import re
import shlex

import evidence_tool.gitflow.roles as roles
from evidence_tool.archive.diffing import diff
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.errors import EvidenceError, EvidenceWarning
from evidence_tool.gitflow.records import GitCommands
from evidence_tool.gitflow.repository import Unavailable, not_a_worktree, open_repo
from evidence_tool.workspace.descriptor import load_workspace_descriptor

STEPS = ("status", "diff", "add", "commit", "push")
# Characters that make a pathspec a glob or magic; plain names need no --literal-pathspecs.
_MAGIC = set("*?[\\") | {":"}


# Control characters but newline and tab: a terminal acts on them (ESC retitles it), so
# they are written as `printf` octal escapes the shell turns back into the same bytes.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")


def quote(word: str) -> str:
    """``shlex.quote``, with every control character but newline and tab spelt
    ``'"$(printf '\\033')"'``: the printed command names the same bytes and shows no
    raw control character (a newline stays, inside the quotes, on a line of its own)."""
    quoted = shlex.quote(word)
    if _CONTROL.search(quoted) is None:
        return quoted
    return _CONTROL.sub(lambda m: f"'\"$(printf '\\{ord(m.group()):03o}')\"'", quoted)


def _workspace_id(archive: LocalEvidenceArchive) -> str:
    try:
        return load_workspace_descriptor(archive.layout.root).id
    except EvidenceError:
        return archive.layout.root.name


def commit_message(workspace_id: str, active: str | None, pending: str | None) -> str:
    """The commit message: names the active revision (and a pending one, if any)."""
    if active is None and pending is None:
        return f"Evidence {workspace_id}: not consolidated"
    text = f"Evidence {workspace_id}: active revision {active or 'none'}"
    return text + (f", pending revision {pending}" if pending else "")


def git_commands(archive: LocalEvidenceArchive) -> GitCommands:
    """The commands, their steps and the facts they were built from.

    Raises E602 when the workspace is not inside a Git worktree.
    """
    with open_repo(archive.layout.root) as repo:
        if isinstance(repo, Unavailable):
            raise not_a_worktree(repo, archive.layout.root, "git-commands needs a Git checkout")
        committed = roles.committed(archive.layout.root)
        top, paths = str(repo.top), [repo.to_repo(p) for p in committed]
    state = archive.state()
    message = commit_message(_workspace_id(archive), state.active, state.pending)
    git = "git -C " + quote(top)
    if any(c in _MAGIC for p in paths for c in p):
        git += " --literal-pathspecs"
    spec = "-- " + " ".join(quote(p) for p in paths)
    commands = [
        f"{git} status {spec}",
        f"{git} diff {spec}",
        f"{git} add --all {spec}",
        f"{git} commit -m {quote(message)} {spec}",
        f"{git} push",
    ]
    return GitCommands(
        top,
        tuple(paths),
        state.active,
        state.pending,
        message,
        STEPS,
        tuple(commands),
        tuple(_warnings(archive)),
    )


def _warnings(archive: LocalEvidenceArchive) -> list[EvidenceWarning]:
    """Why committing now would record something other than a finished consolidation."""
    state = archive.state()
    if not state.initialized:
        return [
            _warning(
                "the archive is not initialized: run 'tht workspace evidence init' "
                "and 'consolidate' before committing"
            )
        ]
    try:
        changes = diff(archive, state.newest)
    except EvidenceError as exc:
        return [
            _warning(f"the archive cannot be read ({exc}); run 'tht workspace evidence verify'")
        ]
    edited = [
        uid
        for key in ("added", "modified", "deleted", "renamed", "reformatted", "invalid")
        for uid in changes.ids(key)
    ]
    if not edited:
        return []
    return [
        _warning(
            f"{len(edited)} unconsolidated edit(s) ({', '.join(edited[:5])}"
            f"{' …' if len(edited) > 5 else ''}): run 'tht workspace evidence consolidate' "
            "first, or the commit holds edits no snapshot records"
        )
    ]


def _warning(message: str) -> EvidenceWarning:
    return EvidenceWarning(message, code="W802")
