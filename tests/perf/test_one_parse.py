"""Every unit is parsed once per command: activation takes the records the consolidation
built, never the blobs again (issue 20).  Operation counts, never time."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from evidence_tool.activation.sqlite_index import SqliteBackend, index_entries
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.workspace.layout import Layout

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.generate import generate

# The module, not the function evidence_tool.unit.parse that shadows it.
parse_module = importlib.import_module("evidence_tool.unit.parse")


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count every unit parse in this process: parse_unit reaches parse_body exactly once
    per text, whoever calls it (scan, snapshot records, queries)."""
    calls = [0]
    real = parse_module.parse_body

    def spy(*args: object, **kwargs: object) -> object:
        calls[0] += 1
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(parse_module, "parse_body", spy)
    monkeypatch.setenv("THT_SERIAL", "1")  # parses in forked workers would not be counted
    return calls


@pytest.mark.parametrize("n", [23, 61])
def test_first_consolidate_with_sqlite_parses_each_unit_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, n: int
) -> None:
    root = generate(n, tmp_path / "ws", seed=n)
    calls = _count_parses(monkeypatch)
    backend = SqliteBackend(Layout.at(root))
    result = LocalEvidenceArchive(root).consolidate("tester", backend)
    assert result.status == "activated"
    assert calls[0] == n
    held = index_entries(backend.path)
    assert held is not None and len(held) == n


def test_one_edit_with_sqlite_parses_only_the_edited_unit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = generate(40, tmp_path / "ws", seed=7)
    backend = SqliteBackend(Layout.at(root))
    LocalEvidenceArchive(root).consolidate("tester", backend)
    edited = sorted((root / "evidence" / "curated" / "glossary").glob("*.md"))[1]
    edited.write_text(edited.read_text(encoding="utf-8").rstrip("\n") + " Edited.\n")
    calls = _count_parses(monkeypatch)
    result = LocalEvidenceArchive(root).consolidate("tester", backend)
    assert result.status == "activated" and len(result.changes["modified"]) == 1
    assert calls[0] == 1
