"""Fixtures of the Git workflow tests: isolated Git, a committed workspace checkout."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitflow_helpers import GIT_ENV, Checkout, make_checkout


@pytest.fixture(autouse=True)
def _isolated_git(monkeypatch: pytest.MonkeyPatch) -> None:
    """No global or system Git configuration, a known actor, no installation."""
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("THT_ACTOR", "test-curator")
    monkeypatch.delenv("THT_INSTALLATION", raising=False)


@pytest.fixture
def checkout(tmp_path: Path) -> Checkout:
    """The workspace in a subfolder with a space: the usual monorepo layout."""
    return make_checkout(tmp_path / "repo", "knowledge base/psd")
