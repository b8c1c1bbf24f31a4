"""Which part of a workspace a path belongs to, as Git review sees it (SPEC.md 4).

Paths here are workspace-relative POSIX paths, as everywhere else in the tool.
"""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    CURATED = "curated"  # evidence/curated/**: what curators edit
    MANAGED = "managed"  # local-manifest.yaml, .local/**, source/acquired/**: written by the tool
    AUTHORED = "authored"  # other evidence/** files: incoming drafts, original local sources
    DESCRIPTOR = "descriptor"  # workspace.yaml
    MACHINE_LOCAL = "machine-local"  # the lock file and the derived cache: never committed
    OTHER = "other"


CURATED = Role.CURATED
MANAGED = Role.MANAGED
AUTHORED = Role.AUTHORED
DESCRIPTOR = Role.DESCRIPTOR
MACHINE_LOCAL = Role.MACHINE_LOCAL
OTHER = Role.OTHER

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


def role(rel: str) -> Role:
    """The role of a workspace-relative path."""
    if rel == "workspace.yaml":
        return DESCRIPTOR
    if rel in NEVER_COMMITTED or any(rel.startswith(p + "/") for p in NEVER_COMMITTED):
        return MACHINE_LOCAL
    if rel.startswith("evidence/curated/"):
        return CURATED
    if (
        rel == "evidence/local-manifest.yaml"
        or rel.startswith("evidence/.local/")
        or rel.startswith("evidence/source/acquired/")
    ):
        return MANAGED
    if rel.startswith("evidence/"):
        return AUTHORED
    return OTHER


def is_unit_path(rel: str) -> bool:
    """A curated Markdown file: what snapshots record (other curated files are not units)."""
    return rel.startswith("evidence/curated/") and rel.endswith(".md")


def is_immutable(rel: str) -> bool:
    return rel.startswith(IMMUTABLE_PREFIXES)
