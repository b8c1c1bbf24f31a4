"""Every unit is parsed once per command: activation takes the records the consolidation
built, never the blobs again (issue 20).  Operation counts, never time."""

from __future__ import annotations

import importlib
import os
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


class _Parses:
    """Every unit parse of the command, in this process and in the processes it forks (the
    parse workers, the index built ahead: activation/_speed/prebuild.py): parse_unit reaches
    parse_body exactly once per text, and each call appends a byte to a file, which a
    forked child's writes reach and its memory would not."""

    def __init__(self, log: Path) -> None:
        self.log = log
        log.write_bytes(b"")

    def __getitem__(self, _: int) -> int:
        return self.log.stat().st_size


def _count_parses(monkeypatch: pytest.MonkeyPatch, log: Path) -> _Parses:
    calls = _Parses(log)
    real = parse_module.parse_body

    def spy(*args: object, **kwargs: object) -> object:
        with open(log, "ab") as fh:
            fh.write(b".")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(parse_module, "parse_body", spy)
    return calls


# 437: past parallel.PARALLEL_MIN, so the parse workers' flat results are what the
# activation must take (a forked index build that found no unit parsed them all again).
@pytest.mark.parametrize("n", [23, 61, 437])
def test_first_consolidate_with_sqlite_parses_each_unit_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, n: int
) -> None:
    root = generate(n, tmp_path / "ws", seed=n)
    calls = _count_parses(monkeypatch, tmp_path / "parses")
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
    calls = _count_parses(monkeypatch, tmp_path / "parses")
    result = LocalEvidenceArchive(root).consolidate("tester", backend)
    assert result.status == "activated" and len(result.changes["modified"]) == 1
    assert calls[0] == 1


def _index_rows(path: Path) -> list[tuple[object, ...]]:
    """The unit's own fields of every row (provenance holds when and by whom)."""
    import json
    import sqlite3

    with sqlite3.connect(path) as con:
        rows = con.execute("SELECT id, content_hash, record FROM units").fetchall()
    own = ("id", "kind", "language", "title", "metadata", "payload", "file_hash", "path")
    return sorted((i, h, {k: json.loads(r)[k] for k in own}) for i, h, r in rows)  # type: ignore[misc]


@pytest.mark.parametrize("damage", [None, "flip", "truncate"])
def test_the_first_activation_after_init_parses_nothing_init_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str | None
) -> None:
    """init records what it parsed; the first consolidate indexes from that, or, when the
    record file is damaged, parses the blobs: the same index either way."""
    n = 31
    reference = generate(n, tmp_path / "reference", seed=13)
    LocalEvidenceArchive(reference).consolidate("tester", SqliteBackend(Layout.at(reference)))
    root = generate(n, tmp_path / "ws", seed=13)
    past = os.path.getmtime(root / "workspace.yaml") - 30  # older than the racy window
    for path in (root / "evidence" / "curated").rglob("*.md"):
        os.utime(path, (past, past))
    assert LocalEvidenceArchive(root).initialize("tester").status == "initialized"
    records = root / ".evidence-cache" / "unit-records.bin"
    if damage == "flip":
        data = bytearray(records.read_bytes())
        data[-7] ^= 0x20
        records.write_bytes(bytes(data))
    elif damage == "truncate":
        records.write_bytes(records.read_bytes()[:-100])
    calls = _count_parses(monkeypatch, tmp_path / "parses")
    backend = SqliteBackend(Layout.at(root))
    assert LocalEvidenceArchive(root).consolidate("tester", backend).status == "activated"
    assert calls[0] == (0 if damage is None else n)
    assert _index_rows(backend.path) == _index_rows(reference / ".evidence-cache" / "index.sqlite")
