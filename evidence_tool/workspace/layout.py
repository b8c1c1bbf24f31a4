"""Where everything lives under a workspace root (SPEC.md 4)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from evidence_tool.errors import PathOutsideError

NAME_RE = re.compile(r"[a-z0-9][a-z0-9._-]*")


@dataclass(frozen=True)
class Layout:
    root: Path

    @classmethod
    def at(cls, root: str | os.PathLike[str]) -> Layout:
        return cls(Path(os.path.abspath(root)))

    @property
    def descriptor(self) -> Path:
        return self.root / "workspace.yaml"

    @property
    def lock(self) -> Path:
        return self.root / ".evidence-archive.lock"

    @property
    def evidence(self) -> Path:
        return self.root / "evidence"

    @property
    def curated(self) -> Path:
        return self.evidence / "curated"

    @property
    def incoming(self) -> Path:
        return self.evidence / "incoming"

    @property
    def source(self) -> Path:
        return self.evidence / "source"

    @property
    def acquired(self) -> Path:
        return self.source / "acquired"

    @property
    def local_manifest(self) -> Path:
        return self.evidence / "local-manifest.yaml"

    @property
    def local(self) -> Path:
        return self.evidence / ".local"

    @property
    def state(self) -> Path:
        return self.local / "state.yaml"

    @property
    def sources_json(self) -> Path:
        return self.local / "sources.json"

    @property
    def acquisitions(self) -> Path:
        return self.local / "acquisitions"

    @property
    def objects(self) -> Path:
        return self.local / "objects"

    @property
    def snapshots(self) -> Path:
        return self.local / "snapshots"

    @property
    def journal(self) -> Path:
        return self.local / "journal"

    @property
    def log(self) -> Path:
        return self.local / "log.jsonl"

    @property
    def cache(self) -> Path:
        return self.root / ".evidence-cache"

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
        the lock file): derived output such as an export must never be written there."""
        real = os.path.realpath(path)
        root = os.path.realpath(self.root)
        evidence = os.path.join(root, "evidence")
        owned = {os.path.join(root, "workspace.yaml"), os.path.join(root, ".evidence-archive.lock")}
        return real == evidence or real.startswith(evidence + os.sep) or real in owned
