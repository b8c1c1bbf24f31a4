"""What retrieval may see (SPEC.md 8): only the active snapshot, never unconsolidated edits.

``search`` (the embedded index), ``export`` and ``open_active_corpus`` are the
three readers; before initialization the reader falls back to the working files.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from activation_helpers import (
    FORMULA,
    FORMULA_PATH,
    Tht,
    add_word,
    state,
)
from helpers import codes

from evidence_tool.activation.reader import open_active_corpus
from evidence_tool.archive.local import LocalEvidenceArchive

WORD = "zanzibarite"  # in no fixture unit


def _visible(root: Path, tht: Tht) -> dict[str, bool]:
    """Does WORD reach each reader?"""
    search = tht("search", WORD).json["result"]
    exported = tht("export", as_json=False)
    assert exported.exit_code == 0, exported.stderr
    corpus = open_active_corpus(root)
    formula = next(r for r in corpus.records if r.id == FORMULA)
    return {
        "search": any(h["id"] == FORMULA for h in search["hits"]),
        "export": WORD in exported.stdout,
        "reader": WORD in formula.title,
    }


def test_unconsolidated_edits_never_reach_a_reader_until_consolidated(
    indexed: Path, tht: Tht
) -> None:
    before = state(indexed).active
    add_word(indexed / FORMULA_PATH, WORD)
    assert _visible(indexed, tht) == {"search": False, "export": False, "reader": False}
    # A snapshot that is only pending is not active either.
    pending = tht("consolidate", "--no-activate").json["result"]
    assert pending["status"] == "pending_activation"
    assert _visible(indexed, tht) == {"search": False, "export": False, "reader": False}
    assert tht("search", "degenza").json["result"]["revision"] == before

    result = tht("consolidate").json["result"]
    assert result["status"] == "activated" and result["revision"] == pending["revision"]
    assert _visible(indexed, tht) == {"search": True, "export": True, "reader": True}
    assert tht("search", WORD).json["result"]["revision"] == result["revision"]
    assert open_active_corpus(indexed).revision == result["revision"]


def test_the_reader_returns_the_active_snapshot_with_typed_provenance(indexed: Path) -> None:
    corpus = open_active_corpus(indexed)
    snap = LocalEvidenceArchive(indexed).active_snapshot()
    assert snap is not None and corpus.revision == snap.revision
    assert corpus.ids() == sorted(e.id for e in snap.entries())
    assert len(corpus.records) == len(list(snap.entries()))
    for typed in corpus.records:
        r = typed.to_json()
        assert r["revision"] == snap.revision
        assert isinstance(r["provenance"], dict)
        assert typed.provenance_kind == r["provenance_kind"] == r["provenance"]["kind"] == "manual"
        assert r["provenance"]["curator"]


@pytest.fixture
def uninitialized(workspace: Path, tmp_path: Path) -> Path:
    """A fresh workspace made of the fixture's descriptor and curated files only."""
    root = tmp_path / "fresh"
    (root / "evidence").mkdir(parents=True)
    shutil.copy(workspace / "workspace.yaml", root / "workspace.yaml")
    shutil.copytree(workspace / "evidence" / "curated", root / "evidence" / "curated")
    assert not (root / "evidence" / ".local").exists()
    assert not (root / "evidence" / "local-manifest.yaml").exists()
    return root


def test_before_initialization_the_reader_reads_the_working_files(
    uninitialized: Path, workspace: Path
) -> None:
    corpus = open_active_corpus(uninitialized)
    assert corpus.revision is None
    shipped = open_active_corpus(workspace)  # the same files, consolidated
    assert corpus.ids() == shipped.ids() and len(corpus.ids()) == 48
    by_id = {r.id: r for r in corpus.records}
    for r in shipped.records:
        assert by_id[r.id].content_hash == r.content_hash
        assert by_id[r.id].payload == r.payload
    # The pinned repository source: a working edit shows at once, nothing is written.
    add_word(uninitialized / FORMULA_PATH, WORD)
    edited = {r.id: r for r in open_active_corpus(uninitialized).records}[FORMULA]
    assert WORD in edited.title and edited.provenance is None
    assert not (uninitialized / "evidence" / ".local").exists()
    assert not (uninitialized / ".evidence-cache").exists()


def test_after_initialization_without_activation_nothing_is_active(uninitialized: Path) -> None:
    LocalEvidenceArchive(uninitialized).initialize("alice")
    corpus = open_active_corpus(uninitialized)
    assert corpus.revision is None and corpus.records == []


# -- export ------------------------------------------------------------------------------


def test_export_jsonl_to_stdout_is_the_active_corpus(indexed: Path, tht: Tht) -> None:
    result = tht("export", "--format", "jsonl", as_json=False)
    assert result.exit_code == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines == [r.to_json() for r in open_active_corpus(indexed).records]
    assert {r["provenance_kind"] for r in lines} == {"manual"}
    summary = tht("export").json["result"]
    assert summary["units"] == 48 and summary["revision"] == state(indexed).active


def test_export_output_inside_the_workspace(indexed: Path, tht: Tht) -> None:
    stdout = tht("export", as_json=False).stdout
    result = tht("export", "--output", str(indexed / "exports" / "corpus.jsonl"))
    assert result.exit_code == 0
    out = indexed / "exports" / "corpus.jsonl"
    assert result.json["result"]["output"] == str(out)
    assert out.read_text(encoding="utf-8") == stdout
    assert not [p.name for p in out.parent.iterdir() if p.name.endswith(".tmp")]


def test_export_output_outside_the_workspace_is_refused(
    indexed: Path, tht: Tht, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.jsonl"
    result = tht("export", "--output", str(outside))
    assert result.exit_code == 2 and codes(result.json) == ["E901"]
    assert not outside.exists()
    # A folder inside the workspace that is a symlink to the outside is outside too.
    (indexed / "exports").symlink_to(tmp_path, target_is_directory=True)
    result = tht("export", "--output", str(indexed / "exports" / "x.jsonl"))
    assert result.exit_code == 2 and not (tmp_path / "x.jsonl").exists()


def test_export_output_never_overwrites_managed_files(indexed: Path, tht: Tht) -> None:
    target = indexed / "evidence" / ".local" / "state.yaml"
    before = target.read_bytes()
    result = tht("export", "--output", str(target))
    assert result.exit_code == 2
    assert target.read_bytes() == before
