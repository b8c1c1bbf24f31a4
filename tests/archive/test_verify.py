"""``verify``: a consolidated checkout passes; one flipped byte of a managed file fails (SPEC 9)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from archive_helpers import UNIT, UNIT_PATH
from helpers import codes

from evidence_tool.archive.local import LocalEvidenceArchive


def _flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def _flip_hex(path: Path, pattern: str) -> None:
    """Change one hex digit inside the first match of ``pattern``: still valid-looking hex."""
    text = path.read_text(encoding="utf-8")
    match = re.search(pattern, text)
    assert match, f"{pattern!r} not in {path.name}"
    i = match.end() - 1
    digit = "1" if text[i] != "1" else "2"
    path.write_text(text[:i] + digit + text[i + 1 :], encoding="utf-8")


def _object(ws: Path) -> str:
    snap = LocalEvidenceArchive(ws).newest_snapshot()
    assert snap is not None
    digest = snap.entry(UNIT).file_hash  # type: ignore[union-attr]
    rel = f"evidence/.local/objects/{digest[:2]}/{digest[2:]}"
    _flip(ws / rel, 10)
    return rel


def _snapshot_manifest(ws: Path) -> str:
    revision = LocalEvidenceArchive(ws).state().newest
    rel = f"evidence/.local/snapshots/{revision}/manifest.json"
    _flip(ws / rel, 40)
    return rel


def _state(ws: Path) -> str:
    rel = "evidence/.local/state.yaml"
    _flip_hex(ws / rel, r"baseline: [0-9a-f]{64}")
    return rel


def _local_manifest(ws: Path) -> str:
    rel = "evidence/local-manifest.yaml"
    _flip_hex(ws / rel, r"content_hash: [0-9a-f]{64}")
    return rel


def test_verify_passes_on_a_consolidated_workspace(documented: Path, tht) -> None:
    result = tht("verify", root=documented)
    assert result.exit_code == 0, result.stdout
    checked = result.json["result"]["checked"]
    assert checked["snapshots"] >= 2 and checked["objects"] >= 49
    assert checked["acquired_sources"] == 1


@pytest.mark.parametrize(
    "damage",
    [_object, _snapshot_manifest, _state, _local_manifest],
    ids=["object", "snapshot-manifest", "state.yaml", "local-manifest.yaml"],
)
def test_one_flipped_byte_fails_verify_naming_the_file(documented: Path, tht, damage) -> None:
    rel = damage(documented)
    result = tht("verify", root=documented)
    assert result.exit_code == 7
    assert set(codes(result)) == {"E701"}
    assert rel in [e["path"] for e in result.json["errors"]], result.json["errors"]


def test_a_changed_acquired_source_fails_verify(documented: Path, tht) -> None:
    [source] = (documented / "evidence/source/acquired").rglob("*.md")
    _flip(source, 0)
    result = tht("verify", root=documented)
    assert result.exit_code == 7
    assert documented.joinpath(result.json["errors"][0]["path"]) == source


def test_a_live_unit_on_a_reserved_id_fails_verify(consolidated: Path, tht) -> None:
    data = (consolidated / UNIT_PATH).read_bytes()
    (consolidated / UNIT_PATH).unlink()
    LocalEvidenceArchive(consolidated).consolidate("bob")
    (consolidated / UNIT_PATH).write_bytes(data)
    result = tht("verify", root=consolidated)
    assert result.exit_code == 7
    assert [e["unit_id"] for e in result.json["errors"]] == [UNIT]


def test_a_corrupted_object_met_during_activation_is_e701_not_e401(consolidated: Path, tht) -> None:
    """Regression: the damage was reported as a retryable activation failure (exit 4)."""
    rel = _object(consolidated)
    (consolidated / "evidence/curated/glossary/drg.md").write_text(
        (consolidated / "evidence/curated/glossary/drg.md")
        .read_text(encoding="utf-8")
        .replace("# DRG", "# DRG (grouper)"),
        encoding="utf-8",
    )
    result = tht("consolidate", root=consolidated)
    assert result.exit_code == 7
    assert codes(result) == ["E701"]
    assert result.json["errors"][0]["path"] == rel
    assert not [e for e in LocalEvidenceArchive(consolidated).events() if "failed" in e["event"]]
