"""A racily clean file is confirmed by its hash, never parsed again: the first
consolidate after `init` (which leaves every file racily clean when the files were
just written) must not parse the workspace a second time (issue 20).  Counts only."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.workspace._speed import parallel, statcache

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.generate import generate


def _spy_parse_many(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The files each scan hands to the parse workers (forced on for small workspaces)."""
    batches: list[list[str]] = []
    real = parallel.parse_many

    def spy(items: list[tuple[str, str]], progress: object, *rest: bool) -> object:
        batches.append(sorted(rel for _, rel in items))
        return real(items, progress, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(parallel, "parse_many", spy)
    monkeypatch.setattr(parallel, "PARALLEL_MIN", 4)
    monkeypatch.delenv("THT_SERIAL", raising=False)
    return batches


@pytest.mark.parametrize("n", [17, 44])
def test_attack_racily_clean_workspace_is_hashed_not_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, n: int
) -> None:
    root = generate(n, tmp_path / "ws", seed=n + 1)
    archive = LocalEvidenceArchive(root)
    assert archive.consolidate("tester", None).wrote
    batches = _spy_parse_many(monkeypatch)
    # Every recorded file counts as modified within the racy window of the cache.
    monkeypatch.setattr(statcache, "RACY_NS", 10**18)
    edited = sorted((root / "evidence" / "curated" / "domain").glob("*.md"))[0]
    edited.write_text(edited.read_text(encoding="utf-8").rstrip("\n") + " Edited.\n")
    result = LocalEvidenceArchive(root).consolidate("tester", None)
    assert result.wrote
    assert len(result.changes["modified"]) == 1, result.changes
    rel = edited.relative_to(root).as_posix()
    # Only the edited file went to the parser; the n - 1 others were confirmed by hash.
    assert [b for b in batches if b] in ([[rel]], [])
