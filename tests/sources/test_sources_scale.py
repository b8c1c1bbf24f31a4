"""Work that must not grow with the number of citing units, counted rather than timed."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from source_helpers import LAB, decide, refresh

from evidence_tool.archive import derive
from evidence_tool.archive import integrity as integrity_module
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.archive.objects import ObjectStore


def _adopt_lab(ws: Path) -> list[str]:
    assert refresh(ws).exit_code == 0
    assert decide(ws, LAB, "replace").exit_code == 0
    snap = LocalEvidenceArchive(ws).newest_snapshot()
    assert snap is not None
    return [e.id for e in snap.entries() if e.provenance.get("kind") == "document"]


def test_a_source_is_hashed_once_per_consolidate_however_many_units_cite_it(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    citing = _adopt_lab(workspace)
    assert len(citing) >= 3
    acquired = next((workspace / "evidence/source/acquired").rglob("*.md")).read_bytes()
    hashed: list[int] = []

    class Counting:
        @staticmethod
        def sha256(data: bytes = b"") -> Any:
            if data == acquired:
                hashed.append(1)
            return hashlib.sha256(data)

    monkeypatch.setattr(derive, "hashlib", Counting)
    # A visible edit elsewhere makes a new snapshot; the lab units stay document-derived.
    drg = workspace / "evidence/curated/glossary/drg.md"
    drg.write_bytes(drg.read_bytes().replace(b"DRG", b"DRG code", 1))
    result = LocalEvidenceArchive(workspace).consolidate("tester")
    assert result.changes["modified"] == ["evidence:clinical:drg"]
    assert len(hashed) == 1, f"the source was hashed {len(hashed)} times for {len(citing)} units"


def test_verify_checks_snapshots_against_one_walk_of_the_objects(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _adopt_lab(workspace)
    lookups: list[str] = []
    real = ObjectStore.path_for

    def path_for(self: ObjectStore, digest: str) -> Path:
        lookups.append(digest)
        return real(self, digest)

    monkeypatch.setattr(ObjectStore, "path_for", path_for)
    problems, counts = integrity_module.verify(LocalEvidenceArchive(workspace))
    assert problems == []
    assert counts["snapshots"] >= 2
    assert lookups == [], "a file lookup per entry of every snapshot is snapshots x units"
