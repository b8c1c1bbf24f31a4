"""Fixtures for the activation tests: an isolated environment and the CLI as ``tht``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from activation_helpers import ACTOR, Tht
from helpers import envelope

from evidence_tool import fsio


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A known actor, no installation from the environment, no fault hook left behind."""
    monkeypatch.setenv("THT_ACTOR", ACTOR)
    monkeypatch.delenv("THT_INSTALLATION", raising=False)
    monkeypatch.delenv("THT_NOW", raising=False)
    yield
    fsio.set_hook(None)


@pytest.fixture
def tht(cli: Callable[[list[str]], Any], workspace: Path) -> Tht:
    """``tht [--installation F] workspace evidence ARGS --workspace-root ROOT [--json]``.

    The root defaults to the ``workspace`` fixture; every ``--json`` run is checked
    against the envelope schema and its ``ok`` against the exit code.
    """

    def run(
        *args: str,
        root: Path | None = None,
        installation: Path | None = None,
        as_json: bool = True,
        group: tuple[str, ...] = ("workspace", "evidence"),
    ) -> Any:
        argv = ["--installation", str(installation)] if installation else []
        argv += [*group, *args, "--workspace-root", str(root or workspace)]
        if as_json:
            argv.append("--json")
        result = cli(argv)
        if as_json:
            envelope(result)
        return result

    return run


@pytest.fixture
def indexed(workspace: Path, tht: Tht) -> Path:
    """The fixture workspace with its embedded index built for the active revision.

    The shipped copy has no ``.evidence-cache/``, so the first consolidate rebuilds
    the derived index without moving any pointer ("reindexed").
    """
    result = tht("consolidate")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.json["result"]["status"] == "reindexed"
    return workspace
