"""Which part of a workspace a path belongs to, as Git review sees it (SPEC.md 4).

Paths here are workspace-relative POSIX paths, as everywhere else in the tool.
"""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path


class Role(StrEnum):
    CURATED = "curated"  # evidence/curated/**: what curators edit
    MANAGED = "managed"  # local-manifest.yaml, .local/**, source/acquired/**: written by the tool
    AUTHORED = "authored"  # other evidence/** files: incoming drafts, original local sources
    DESCRIPTOR = "descriptor"  # workspace.yaml
    MACHINE_LOCAL = "machine-local"  # the lock file and the derived cache: never committed
    IMPORT = "import"  # an input an import source of the descriptor names (SPEC 9)
    GITIGNORE = "gitignore"  # the workspace's .gitignore: keeps machine-local files out
    OTHER = "other"


# What the operator commits: the complete evidence tree and the workspace descriptor.
COMMITTED = ("evidence", "workspace.yaml")
# What must never be committed: it coordinates or caches one machine's work.
NEVER_COMMITTED = (".evidence-archive.lock", ".evidence-cache")

# Managed files that are never rewritten once written: named by their content.
IMMUTABLE_PREFIXES = (
    "evidence/.local/objects/",
    "evidence/.local/snapshots/",
    "evidence/source/acquired/",
)
# Managed files that only ever grow: their committed bytes must stay a prefix.
APPEND_ONLY = ("evidence/.local/log.jsonl",)


def import_paths(root: Path) -> tuple[str, ...]:
    """The workspace-relative paths the descriptor's import sources name (``imports/x``,
    ``../dbt``), in descriptor order; none when the descriptor cannot be read (status
    and git-commands then show the evidence tree alone, validate reports the descriptor)."""
    from evidence_tool.errors import EvidenceError
    from evidence_tool.workspace.descriptor import load_workspace_descriptor

    try:
        sources = load_workspace_descriptor(root).sources
    except EvidenceError:
        return ()
    out: list[str] = []
    for entry in sources:
        path = entry.get("path") if entry.get("kind") == "import" else None
        if isinstance(path, str) and path and path not in out:
            out.append(path.rstrip("/"))
    return tuple(out)


def committed(root: Path) -> tuple[str, ...]:
    """What a commit of the workspace holds: the evidence tree, the descriptor, the
    ``.gitignore`` that keeps the machine-local files out, and every import input the
    descriptor names (a clone needs them to refresh). Paths that do not exist are left
    out (``git add`` refuses a pathspec that matches nothing)."""
    extra = [".gitignore", *import_paths(root)]
    return COMMITTED + tuple(p for p in extra if os.path.lexists(os.path.join(root, p)))


def role(rel: str, imports: tuple[str, ...] = ()) -> Role:
    """The role of a workspace-relative path (``imports``: the descriptor's import paths)."""
    if any(rel == p or rel.startswith(p + "/") for p in imports):
        return Role.IMPORT
    if rel == ".gitignore":
        return Role.GITIGNORE
    if rel == "workspace.yaml":
        return Role.DESCRIPTOR
    if rel in NEVER_COMMITTED or any(rel.startswith(p + "/") for p in NEVER_COMMITTED):
        return Role.MACHINE_LOCAL
    if rel.startswith("evidence/curated/"):
        return Role.CURATED
    if (
        rel == "evidence/local-manifest.yaml"
        or rel.startswith("evidence/.local/")
        or rel.startswith("evidence/source/acquired/")
    ):
        return Role.MANAGED
    if rel.startswith("evidence/"):
        return Role.AUTHORED
    return Role.OTHER


def is_unit_path(rel: str) -> bool:
    """A curated Markdown file: what snapshots record (other curated files are not units)."""
    return rel.startswith("evidence/curated/") and rel.endswith(".md")


def is_immutable(rel: str) -> bool:
    return rel.startswith(IMMUTABLE_PREFIXES)
