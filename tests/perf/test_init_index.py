"""`init` leaves a warm cache: it builds the sqlite index of the baseline it records, and
the first consolidate adopts that index after checking it, instead of building it again
(issue 20).  A prepared index that does not hold the revision exactly is never adopted."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from evidence_tool.activation import sqlite_index
from evidence_tool.activation.sqlite_index import build_index, index_entries
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.session import Session

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.generate import generate


def _builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    built: list[str] = []
    real = sqlite_index.build_index

    def spy(path: Path, revision: str, records: Any, analyzer: str = "stem") -> int:
        built.append(revision)
        return real(path, revision, records, analyzer)

    monkeypatch.setattr(sqlite_index, "build_index", spy)
    return built


def _rows(path: Path) -> list[list[tuple[Any, ...]]]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [
            con.execute("SELECT id, content_hash, record FROM units ORDER BY id").fetchall(),
            con.execute("SELECT id, title, body, applies_to FROM fts ORDER BY id").fetchall(),
            con.execute("SELECT * FROM unit_tables ORDER BY 1, 2").fetchall(),
            con.execute("SELECT * FROM meta ORDER BY key").fetchall(),
        ]
    finally:
        con.close()


def _fresh(root: Path, tmp: Path) -> list[list[tuple[Any, ...]]]:
    snap = LocalEvidenceArchive(root).active_snapshot()
    assert snap is not None
    build_index(tmp, snap.revision, snap.records())
    return _rows(tmp)


def _init_then_consolidate(root: Path, monkeypatch: pytest.MonkeyPatch, tamper: Any) -> Any:
    s = Session.open(root, None)
    built = _builds(monkeypatch)
    assert s.initialize("tester").status == "initialized"
    assert len(built) == 1  # init built the baseline's index
    tamper(root / ".evidence-cache")
    built.clear()
    s = Session.open(root, None)
    result = s.consolidate("tester", s.activation())
    assert result.status == "activated"
    return built


@pytest.mark.parametrize("n", [14, 33])
def test_first_consolidate_after_init_adopts_the_index_init_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, n: int
) -> None:
    root = generate(n, tmp_path / "ws", seed=n)
    built = _init_then_consolidate(root, monkeypatch, lambda cache: None)
    assert built == []  # adopted, not built again
    index = root / ".evidence-cache" / "index.sqlite"
    assert _rows(index) == _fresh(root, tmp_path / "fresh.sqlite")
    held = index_entries(index)
    assert held is not None and len(held) == n
    assert [p.name for p in (root / ".evidence-cache").iterdir() if "prepared" in p.name] == []


def _edit_a_row(cache: Path) -> None:
    [prepared] = [p for p in cache.iterdir() if "prepared" in p.name]
    con = sqlite3.connect(prepared)
    con.execute("UPDATE units SET content_hash = 'x' WHERE rowid = 3")
    con.commit()
    con.close()


def _replace_by_other_revision(cache: Path) -> None:
    [prepared] = [p for p in cache.iterdir() if "prepared" in p.name]
    con = sqlite3.connect(prepared)
    con.execute("UPDATE meta SET value = ? WHERE key = 'revision'", ("0" * 64,))
    con.commit()
    con.close()


def _drop_a_unit(cache: Path) -> None:
    [prepared] = [p for p in cache.iterdir() if "prepared" in p.name]
    con = sqlite3.connect(prepared)
    con.execute("DELETE FROM units WHERE rowid = 5")
    con.commit()
    con.close()


@pytest.mark.parametrize("tamper", [_edit_a_row, _replace_by_other_revision, _drop_a_unit])
def test_attack_prepared_index_not_holding_the_revision_is_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tamper: Any
) -> None:
    root = generate(21, tmp_path / "ws", seed=2)
    built = _init_then_consolidate(root, monkeypatch, tamper)
    assert len(built) == 1  # rebuilt from the snapshot
    assert _rows(root / ".evidence-cache" / "index.sqlite") == _fresh(root, tmp_path / "f.sqlite")
    assert [p.name for p in (root / ".evidence-cache").iterdir() if "prepared" in p.name] == []
