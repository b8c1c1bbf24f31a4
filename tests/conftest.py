"""Shared fixtures: fresh copies of the shipped workspace and an in-process CLI runner."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURE_WORKSPACE = REPO / "fixtures" / "workspace"


from cli_runner import CliResult, invoke  # noqa: E402  (re-exported for fixtures)


@pytest.fixture
def cli() -> Callable[[list[str]], CliResult]:
    return invoke


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A fresh copy of the shipped fixture workspace."""
    dest = tmp_path / "ws"
    shutil.copytree(
        FIXTURE_WORKSPACE, dest, symlinks=True, ignore=shutil.ignore_patterns(".evidence-cache")
    )
    return dest


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Build a folder from a ``{relative path: text}`` dict in one line."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root
