"""Git state of the evidence tree for ``status``: staged, modified, untracked, partial stages.

A *partial stage* is what the contract warns about ("do not commit only the
edited Markdown"): as soon as any curated or managed file is staged, the index
must hold one consistent consolidation, so that the commit it becomes passes
``verify --strict`` on a fresh clone.  Precisely, with *staged bytes* meaning
the index entry of a path (or its absence):

- W801 *consolidation not fully staged*: a unit path whose working bytes are
  what the newest snapshot records, but whose staged bytes are not (a
  consolidated edit, addition or deletion left out of the stage); or a managed
  file (``local-manifest.yaml``, ``.local/**``, ``source/acquired/**``) that
  is modified, deleted or untracked in the working tree;
- W802 *staged edit not consolidated*: a unit path whose staged bytes are not
  what the newest snapshot records while its working bytes are not either
  (the edit was staged, or left half-staged, before ``consolidate``).

Unconsolidated edits that are not staged, next to a consistent stage, are no
partial stage: they are later work, shown as unconsolidated by ``status``.
"""

from __future__ import annotations

import hashlib
import os

import evidence_tool.gitflow.roles as roles
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.errors import EvidenceError, EvidenceWarning
from evidence_tool.gitflow.records import GitFile, GitState, PartialStage
from evidence_tool.gitflow.repository import EvidenceRepo, FileStatus, Unavailable, open_repo
from evidence_tool.gitflow.roles import Role
from evidence_tool.workspace.layout import Layout

CHANGES = {
    "M": "modified",
    "T": "type changed",
    "A": "added",
    "D": "deleted",
    "R": "renamed",
    "C": "copied",
    "?": "untracked",
}
SHOWN = 5  # paths named in one warning; the full lists are in the result


def git_state(archive: LocalEvidenceArchive) -> GitState:
    """The Git state of the workspace's evidence tree; a note instead outside a worktree."""
    with open_repo(archive.layout.root) as repo:
        if isinstance(repo, Unavailable):
            return GitState.unavailable(repo.note)
        from git.exc import GitError

        try:
            return _state(archive, repo)
        except GitError as exc:
            return GitState.unavailable(f"git failed, Git state is not shown: {exc}")


def _listing(
    entries: list[FileStatus], letter: str, imports: tuple[str, ...]
) -> tuple[GitFile, ...]:
    return tuple(
        GitFile(
            e.rel,
            roles.role(e.rel, imports),
            CHANGES.get(getattr(e, letter), getattr(e, letter)),
        )
        for e in entries
    )


def _state(archive: LocalEvidenceArchive, repo: EvidenceRepo) -> GitState:
    root = archive.layout.root
    imports = roles.import_paths(root)
    committed = roles.committed(root)
    entries = repo.status(committed + roles.NEVER_COMMITTED)
    ordered = sorted(entries.values(), key=lambda e: e.rel)
    evidence = [e for e in ordered if roles.role(e.rel) != Role.MACHINE_LOCAL]
    warnings: list[EvidenceWarning] = []
    partial = partial_stage(archive, repo, entries)
    if partial is not None:
        warnings += partial_warnings(partial)
    warnings += _machine_local_warnings(repo, ordered)
    all_ignored = repo.ignored(committed)
    ignored = [
        rel
        for rel in all_ignored
        if roles.role(rel, imports) in (Role.MANAGED, Role.DESCRIPTOR, Role.GITIGNORE)
        or (rel.endswith(".md") and roles.role(rel, imports) != Role.IMPORT)
    ]
    warnings += _about(
        "W804",
        ignored,
        "Git ignores {n} evidence file(s) a commit must hold: {some}; remove "
        "the matching .gitignore rule",
    )
    conflicted = [e for e in evidence if e.unmerged]
    warnings += _about(
        "W805",
        [e.rel for e in conflicted],
        "unmerged evidence file(s): {some}; resolve the curated files, then run consolidate "
        "(never merge managed files by hand)",
    )
    warnings += _import_warnings(imports, evidence, all_ignored)
    staged = [e for e in evidence if e.staged]
    modified = [e for e in evidence if e.unstaged]
    untracked = [e for e in evidence if e.untracked]
    return GitState(
        available=True,
        repository=str(repo.top),
        workspace_path=repo.prefix or ".",
        branch=repo.branch,
        head=repo.head,
        staged=_listing(staged, "index", imports),
        modified=_listing(modified, "worktree", imports),
        untracked=tuple(GitFile(e.rel, roles.role(e.rel, imports)) for e in untracked),
        conflicted=tuple(e.rel for e in conflicted),
        ignored=tuple(ignored),
        partial_stage=partial,
        clean=not evidence,
        warnings=tuple(warnings),
    )


def _import_warnings(
    imports: tuple[str, ...], evidence: list[FileStatus], ignored: list[str]
) -> list[EvidenceWarning]:
    """W806: an import input the descriptor names that a commit would not hold (untracked
    or ignored): a clone could not refresh that source."""
    left = sorted(
        {e.rel for e in evidence if e.untracked and roles.role(e.rel, imports) == Role.IMPORT}
        | {rel for rel in ignored if roles.role(rel, imports) == Role.IMPORT}
    )
    return _about(
        "W806",
        left,
        "{n} import input file(s) are not committed (untracked or ignored by Git): {some}; a "
        "clone could not refresh their source: stage them with the evidence tree (see 'tht "
        "workspace evidence git-commands')",
    )


def _some(paths: list[str]) -> str:
    shown = ", ".join(paths[:SHOWN])
    return shown + (f" and {len(paths) - SHOWN} more" if len(paths) > SHOWN else "")


def _about(code: str, paths: list[str], message: str) -> list[EvidenceWarning]:
    """Warning ``code`` on ``paths`` (none: no warning); ``message`` names their number
    (``{n}``) and the first of them (``{some}``), at the first one's path."""
    if not paths:
        return []
    return [EvidenceWarning(message.format(n=len(paths), some=_some(paths)), paths[0], code=code)]


def working_unit_hashes(layout: Layout) -> dict[str, str]:
    """sha256 of every curated Markdown file in the working tree, by workspace-relative path."""
    found: dict[str, str] = {}
    for folder, dirs, files in os.walk(layout.curated):
        dirs.sort()
        for name in sorted(files):
            rel = layout.rel(os.path.join(folder, name))
            if not roles.is_unit_path(rel):
                continue
            try:
                with open(os.path.join(folder, name), "rb") as fh:
                    found[rel] = hashlib.sha256(fh.read()).hexdigest()
            except OSError:
                continue  # unreadable: validation reports it; here it simply has no bytes
    return found


def partial_stage(
    archive: LocalEvidenceArchive, repo: EvidenceRepo, entries: dict[str, FileStatus]
) -> PartialStage | None:
    """The two lists of the module docstring, or None when nothing curated or managed is staged."""
    if not any(
        e.staged and roles.role(e.rel) in (Role.CURATED, Role.MANAGED) for e in entries.values()
    ):
        return None
    try:
        newest = archive.newest_snapshot()
    except EvidenceError:
        newest = None  # a broken archive is verify's finding; compare against nothing here
    recorded = {e.path: e.file_hash for e in newest.entries()} if newest else {}
    working = working_unit_hashes(archive.layout)
    staged: dict[str, str] = {}
    for rel, sha in repo.index_blobs(["evidence/curated"]).items():
        if not roles.is_unit_path(rel):
            continue
        entry = entries.get(rel)
        if (entry is not None and entry.unstaged) or rel not in working:
            staged[rel] = hashlib.sha256(repo.blob(sha)).hexdigest()
        else:  # the index holds the working bytes: no need to read the blob
            staged[rel] = working[rel]
    not_staged: list[str] = []
    not_consolidated: list[str] = []
    for rel in sorted(staged.keys() | recorded.keys()):
        if staged.get(rel) == recorded.get(rel):
            continue
        if working.get(rel) == recorded.get(rel):
            not_staged.append(rel)
        else:
            not_consolidated.append(rel)
    for e in sorted(entries.values(), key=lambda e: e.rel):
        if roles.role(e.rel) == Role.MANAGED and (e.unstaged or e.untracked):
            not_staged.append(e.rel)
    return PartialStage(tuple(sorted(not_staged)), tuple(not_consolidated))


def partial_warnings(partial: PartialStage) -> list[EvidenceWarning]:
    return _about(
        "W801",
        list(partial.not_staged),
        "partial stage: {n} file(s) of the newest consolidation are not staged ({some}); a "
        "commit of only the edited Markdown loses the managed files: stage the complete "
        "evidence tree (see 'tht workspace evidence git-commands')",
    ) + _about(
        "W802",
        list(partial.not_consolidated),
        "staged curated edit(s) not consolidated: {some}; run 'tht workspace evidence "
        "consolidate', then stage the evidence tree again",
    )


def _machine_local_warnings(repo: EvidenceRepo, ordered: list[FileStatus]) -> list[EvidenceWarning]:
    local = [e.rel for e in ordered if roles.role(e.rel) == Role.MACHINE_LOCAL]
    tracked = repo.tracked(roles.NEVER_COMMITTED)
    return _about(
        "W803",
        sorted(set(local) | set(tracked)),
        "machine-local file(s) not ignored by Git: {some}; the lock file and .evidence-cache/ "
        "are never committed: add them to .gitignore (and 'git rm --cached' them if tracked)",
    )
