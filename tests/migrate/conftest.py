"""Legacy workspaces in temporary Git repositories, and whole-tree fingerprints."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

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


@pytest.fixture(autouse=True)
def pinned_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THT_NOW", NOW)
    monkeypatch.setenv("THT_ACTOR", "migrator")


@pytest.fixture
def legacy_repo(tmp_path: Path) -> Callable[..., Path]:
    """``legacy_repo("v1")``: a copy of fixtures/legacy/v1 in a fresh Git repository."""
    counter = iter(range(1000))

    def make(name: str, *, git: bool = True) -> Path:
        dest = tmp_path / f"repo{next(counter)}" / "ws"
        shutil.copytree(LEGACY / name, dest)
        if git:
            git_init(dest.parent)  # the workspace is a folder inside the worktree
        return dest

    return make


@pytest.fixture(autouse=True)
def no_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each migration makes ~150 fsyncs (every managed file and its folder), which on this
    class of disk costs more than everything else together; these tests check what is
    written and in which order (crashes are injected through fsio's hook), not that the
    disk honours fsync, so the call itself is skipped."""
    monkeypatch.setattr(os, "fsync", lambda fd: None)
