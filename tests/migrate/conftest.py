"""Legacy workspaces in temporary Git repositories, and whole-tree fingerprints."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from migrate_support import LEGACY, NOW, git_init, tree_hashes  # noqa: F401


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
