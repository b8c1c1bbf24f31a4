"""Fixtures for the archive contract tests; the helpers live in ``archive_helpers``."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from archive_helpers import ACTOR, WriteRecorder, entry, stage_document
from helpers import envelope

from evidence_tool import fsio
from evidence_tool.archive.local import LocalEvidenceArchive


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A known actor, no installation from the environment, no fault hook left behind."""
    monkeypatch.setenv("THT_ACTOR", ACTOR)
    monkeypatch.delenv("THT_INSTALLATION", raising=False)
    monkeypatch.delenv("THT_NOW", raising=False)
    yield
    fsio.set_hook(None)


@pytest.fixture
def bare(workspace: Path) -> Path:
    """The fixture workspace without any archive: only workspace.yaml and the evidence files."""
    shutil.rmtree(workspace / "evidence/.local", ignore_errors=True)
    for name in ("evidence/local-manifest.yaml", ".evidence-archive.lock"):
        (workspace / name).unlink(missing_ok=True)
    return workspace


@pytest.fixture
def initialized(workspace: Path) -> Path:
    """The fixture workspace with its baseline recorded (whether or not it shipped one)."""
    result = LocalEvidenceArchive(workspace).initialize(ACTOR)
    assert result.status in ("initialized", "already_initialized")
    return workspace


@pytest.fixture
def consolidated(initialized: Path) -> Path:
    """An initialized workspace whose current files have been consolidated once."""
    LocalEvidenceArchive(initialized).consolidate(ACTOR)
    return initialized


@pytest.fixture
def documented(consolidated: Path) -> Path:
    """UNIT carries a document declaration (staged as 'decide replace' stages it)."""
    stage_document(consolidated)
    LocalEvidenceArchive(consolidated).consolidate(ACTOR)
    assert entry(consolidated)["provenance"]["kind"] == "document"
    return consolidated


@pytest.fixture
def record_writes() -> Iterator[WriteRecorder]:
    recorder = WriteRecorder()
    fsio.set_hook(recorder)
    yield recorder
    fsio.set_hook(None)


@pytest.fixture
def tht(cli: Callable[[list[str]], Any]) -> Callable[..., Any]:
    """``tht [--installation F] workspace evidence ARGS --workspace-root ROOT --json``.

    Every ``--json`` run is checked against the envelope schema.
    """

    def run(
        *args: str,
        root: Path | None = None,
        installation: Path | None = None,
        as_json: bool = True,
        workspace_id: str | None = None,
    ) -> Any:
        argv = ["--installation", str(installation)] if installation else []
        argv += ["workspace", "evidence", *args]
        if root is not None:
            argv += ["--workspace-root", str(root)]
        if workspace_id is not None:
            argv += ["--workspace", workspace_id]
        if as_json:
            argv.append("--json")
        result = cli(argv)
        if as_json:
            envelope(result)
        return result

    return run
