"""Fixtures of the server tests: a consolidated copy of the shipped workspace."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the serve extra (mcp) is not installed")

from serve_helpers import consolidate


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("THT_ACTOR", "alice")
    monkeypatch.delenv("THT_INSTALLATION", raising=False)
    monkeypatch.delenv("THT_SERVE_TOKEN", raising=False)
    yield


@pytest.fixture
def served(workspace: Path) -> Path:
    """The shipped workspace, consolidated with the sqlite index (something to serve)."""
    consolidate(workspace)
    return workspace
