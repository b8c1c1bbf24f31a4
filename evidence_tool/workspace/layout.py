"""Where everything lives under a workspace root (SPEC.md 4)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from evidence_tool.errors import PathOutsideError

DESCRIPTOR = "workspace.yaml"
NAME_RE = re.compile(r"[a-z0-9][a-z0-9._-]*")

# Managed folders of one subfolder per object prefix, revision or source: checked one
# level deeper, since a shard linked elsewhere is as foreign as the folder itself.
SHARDED = (
    "evidence/.local/objects",
    "evidence/.local/snapshots",
    "evidence/.local/acquisitions",
    "evidence/source/acquired",
)


class _Under:
    """A read-only attribute of a ``Layout``: the path ``rel`` below its root."""

    def __init__(self, rel: str, *, managed: bool = True) -> None:
        self.rel, self.parts, self.managed = rel, tuple(rel.split("/")), managed

    def __get__(self, layout: Layout, owner: object = None) -> Path:
        return layout.root.joinpath(*self.parts)


@dataclass(frozen=True)
class Layout:
    root: Path

    @classmethod
    def at(cls, root: str | os.PathLike[str]) -> Layout:
        return cls(Path(os.path.abspath(root)))

    # What the tool reads or writes under the root, parents before children (MANAGED, so
    # the link that causes an escape is the one named).
    descriptor = _Under(DESCRIPTOR)
    evidence = _Under("evidence")
    curated = _Under("evidence/curated")
    incoming = _Under("evidence/incoming")
    source = _Under("evidence/source")
    acquired = _Under("evidence/source/acquired")
    local_manifest = _Under("evidence/local-manifest.yaml")
    local = _Under("evidence/.local")
    state = _Under("evidence/.local/state.yaml")
    sources_json = _Under("evidence/.local/sources.json")
    staged_json = _Under("evidence/.local/staged.json")
    log = _Under("evidence/.local/log.jsonl")
    acquisitions = _Under("evidence/.local/acquisitions")
    objects = _Under("evidence/.local/objects")
    snapshots = _Under("evidence/.local/snapshots")
    journal = _Under("evidence/.local/journal")
    cache = _Under(".evidence-cache")
    # Not managed: the lock is opened with O_NOFOLLOW, and a link there is refused as a
    # held lock (E303).
    lock = _Under(".evidence-archive.lock", managed=False)

    def rel(self, path: str | os.PathLike[str]) -> str:
        """Workspace-relative POSIX path (what manifests and errors show)."""
        return Path(os.path.abspath(path)).relative_to(self.root).as_posix()

    def resolve_inside(self, rel: str) -> Path:
        """The absolute path of a workspace-relative path; refuses escapes (.., absolute, NUL)."""
        if "\x00" in rel or rel.startswith("/") or "\\" in rel:
            raise PathOutsideError(f"path {rel!r} is not a relative workspace path; refused")
        parts = rel.split("/")
        if any(p in ("", ".", "..") for p in parts):
            raise PathOutsideError(
                f"path {rel!r} leaves the workspace or is not normalized; refused"
            )
        return self.root.joinpath(*parts)

    def inside(self, path: str | os.PathLike[str]) -> bool:
        """True if ``path`` (symlinks resolved) stays under the workspace root."""
        real = os.path.realpath(path)
        root = os.path.realpath(self.root)
        return real == root or real.startswith(root + os.sep)

    def holds_evidence(self, path: str | os.PathLike[str]) -> bool:
        """True for what curators and the archive own (``evidence/**``, ``workspace.yaml``,
        the lock file): a new workspace must not be created there."""
        real = os.path.realpath(path)
        root = os.path.realpath(self.root)
        evidence = os.path.join(root, "evidence")
        owned = {os.path.join(root, DESCRIPTOR), os.path.join(root, ".evidence-archive.lock")}
        return real == evidence or real.startswith(evidence + os.sep) or real in owned

    def escapes(self) -> list[tuple[str, str]]:
        """(managed path, where it resolves) for each managed entry whose symlinks lead
        outside the root; a child of an escaping entry is not named again."""
        root = os.path.realpath(self.root)
        out: list[tuple[str, str]] = []
        for rel in MANAGED:
            if any(rel.startswith(bad + "/") for bad, _ in out):
                continue
            real = os.path.realpath(self.root / rel)
            if real != root and not real.startswith(root + os.sep):
                out.append((rel, real))
        for rel in SHARDED:
            if not any(rel == bad or rel.startswith(bad + "/") for bad, _ in out):
                out.extend(self._escaping_children(rel, root))
        return out

    def _escaping_children(self, rel: str, root: str) -> list[tuple[str, str]]:
        """Links among the subfolders of a sharded folder (one scandir, no stat unless a
        link): the tool never makes links there, so each is planted."""
        try:
            entries = list(os.scandir(self.root / rel))
        except OSError:
            return []  # missing or unreadable: the command reports that itself
        out = []
        for entry in entries:
            if entry.is_symlink():
                real = os.path.realpath(entry.path)
                if real != root and not real.startswith(root + os.sep):
                    out.append((f"{rel}/{entry.name}", real))
        return sorted(out)

    def require_contained(self) -> None:
        """Refuse (E108) a workspace where a managed folder or file leads outside the root
        (SPEC.md 11): nothing may then be read or written through it."""
        bad = self.escapes()
        if not bad:
            return
        rel, real = bad[0]
        others = "".join(f"; {r} too" for r, _ in bad[1:])
        raise PathOutsideError(
            f"{rel} leads outside the workspace {self.root} (to {real}){others}: nothing is "
            f"read or written through it; put the real {rel} back inside the workspace "
            f"(remove the symbolic link and move or restore the content, e.g. from Git)",
            path=rel,
        )


MANAGED = tuple(a.rel for a in vars(Layout).values() if isinstance(a, _Under) and a.managed)


def nearest_workspace(start: str | os.PathLike[str], *, curated_marks: bool = False) -> Path | None:
    """The nearest folder at or above ``start`` (symlinks not resolved) holding
    workspace.yaml -- or, with ``curated_marks``, evidence/curated; None if there is none.
    lexists: a descriptor that is a folder or a dangling link still marks the workspace,
    so its own error is reported rather than a parent's."""
    probe = Path(os.path.abspath(start))
    for folder in (probe, *probe.parents):
        if os.path.lexists(folder / DESCRIPTOR) or (
            curated_marks and os.path.lexists(folder / "evidence" / "curated")
        ):
            return folder
    return None


def enclosing_workspace(path: str | os.PathLike[str]) -> Layout | None:
    """The workspace ``path`` lies in (a folder holding workspace.yaml or evidence/curated
    at or above it); None outside any workspace."""
    found = nearest_workspace(path, curated_marks=True)
    return None if found is None else Layout(found)
