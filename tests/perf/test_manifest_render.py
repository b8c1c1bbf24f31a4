"""local-manifest.yaml: the fast paths write exactly what the general emitter writes."""

from __future__ import annotations

from pathlib import Path

from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.archive.manifest import render_local_manifest_generic
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
    digest, _revision = seal.read_text().split()
    seal.write_text(f"{digest} {'0' * 64}\n")
    _edit(workspace, 2)
    archive.consolidate("alice")
    assert (workspace / "evidence/local-manifest.yaml").read_bytes() == _generic(workspace)
