"""local-manifest.yaml: the fast paths write exactly what the general emitter writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import render_local_manifest_generic

from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.archive.manifest import (
    PreviousJson,
    PreviousYaml,
    manifest_bytes,
)
from evidence_tool.unit.yaml_strict import load

DRG = "evidence/curated/glossary/drg.md"


def _generic(root: Path) -> bytes:
    snap = LocalEvidenceArchive(root).newest_snapshot()
    assert snap is not None
    return render_local_manifest_generic(snap.manifest, snap.revision)


def _edit(root: Path, n: int) -> None:
    path = root / DRG
    path.write_bytes(path.read_bytes().replace(b"DRG", f"DRG{n}".encode(), 1))


def test_reused_blocks_equal_a_full_render_across_changes(workspace: Path) -> None:
    archive = LocalEvidenceArchive(workspace)
    archive.consolidate("alice")
    for n in range(3):
        _edit(workspace, n)
        (workspace / "evidence/curated/domain/patient-merge.md").unlink(missing_ok=True)
        archive.consolidate("bob")
        assert (workspace / "evidence/local-manifest.yaml").read_bytes() == _generic(workspace)
    doc = load((workspace / "evidence/local-manifest.yaml").read_text()).value
    assert any(d["id"] == "evidence:admin:patient-merge" for d in doc["deletions"])


def test_a_hand_edited_manifest_is_never_reused(workspace: Path) -> None:
    archive = LocalEvidenceArchive(workspace)
    archive.consolidate("alice")
    _edit(workspace, 1)
    archive.consolidate("alice")
    path = workspace / "evidence/local-manifest.yaml"
    tampered = path.read_bytes().replace(b"curator: ", b"curator: mallory-", 1)
    path.write_bytes(tampered)
    _edit(workspace, 2)
    archive.consolidate("alice")
    assert path.read_bytes() == _generic(workspace)
    assert b"mallory" not in path.read_bytes()


def test_a_seal_for_another_revision_is_ignored(workspace: Path) -> None:
    archive = LocalEvidenceArchive(workspace)
    archive.consolidate("alice")
    _edit(workspace, 1)
    archive.consolidate("alice")
    seal = workspace / ".evidence-cache" / "local-manifest.sha256"
    digest, _revision, encoder = seal.read_text().split()
    seal.write_text(f"{digest} {'0' * 64} {encoder}\n")
    _edit(workspace, 2)
    archive.consolidate("alice")
    assert (workspace / "evidence/local-manifest.yaml").read_bytes() == _generic(workspace)


def _newest_manifest_is_canonical(root: Path) -> None:
    snap = LocalEvidenceArchive(root).newest_snapshot()
    assert snap is not None
    assert snap.data == manifest_bytes(snap.manifest)


def test_only_a_snapshot_this_encoder_sealed_lends_its_bytes(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = LocalEvidenceArchive(workspace)
    archive.consolidate("alice")
    _edit(workspace, 1)
    archive.consolidate("alice")
    lent: list[str] = []
    real_json, real_yaml = PreviousJson.splice, PreviousYaml.splice

    def spy_json(self: PreviousJson, key: str, new: Any) -> Any:
        lent.append("json:" + key)
        return real_json(self, key, new)

    def spy_yaml(self: PreviousYaml, key: str, new: Any, block: Any) -> Any:
        lent.append("yaml:" + key)
        return real_yaml(self, key, new, block)

    monkeypatch.setattr(PreviousJson, "splice", spy_json)
    monkeypatch.setattr(PreviousYaml, "splice", spy_yaml)
    _edit(workspace, 2)
    archive.consolidate("alice")
    assert "json:units" in lent and "yaml:units" in lent  # sealed by this version: lent
    _newest_manifest_is_canonical(workspace)

    # A seal written by another version: its encoding may differ, so nothing is lent.
    seal = workspace / ".evidence-cache" / "local-manifest.sha256"
    digest, revision, _encoder = seal.read_text().split()
    seal.write_text(f"{digest} {revision} evidence-tool-0.0.0\n")
    lent.clear()
    _edit(workspace, 3)
    archive.consolidate("alice")
    assert lent == []
    _newest_manifest_is_canonical(workspace)
    assert (workspace / "evidence/local-manifest.yaml").read_bytes() == _generic(workspace)
