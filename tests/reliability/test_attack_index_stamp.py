"""The index stamp lets a no-op consolidate skip reading the index's rows; it must never
vouch for an index that was written after it was taken (issue 20)."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
from pathlib import Path

import pytest

from evidence_tool.activation import sqlite_index
from evidence_tool.activation.sqlite_index import SqliteBackend, index_entries
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.workspace.layout import Layout

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.generate import generate

RACY_S = getattr(sqlite_index, "RACY_NS", 10**9) / 1e9 + 0.2


def _consolidate(root: Path) -> str:
    return LocalEvidenceArchive(root).consolidate("tester", SqliteBackend(Layout.at(root))).status


def _row_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    real = sqlite_index.index_entries

    def counting(path: Path) -> dict[str, str] | None:
        calls[0] += 1
        return real(path)

    monkeypatch.setattr(sqlite_index, "index_entries", counting)
    return calls


@pytest.fixture
def stamped(tmp_path: Path) -> Path:
    """An activated workspace whose index was proven once the racy window had passed."""
    root = generate(27, tmp_path / "ws", seed=3)
    assert _consolidate(root) == "activated"
    time.sleep(RACY_S)
    assert _consolidate(root) == "unchanged"  # reads the rows once, then stamps them
    return root


def test_a_noop_consolidate_reads_no_index_row(
    stamped: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = _row_reads(monkeypatch)
    for _ in range(3):
        assert _consolidate(stamped) == "unchanged"
    assert reads[0] == 0
    (stamped / ".evidence-cache" / "index.sqlite.stamp").unlink()
    assert _consolidate(stamped) == "unchanged"
    assert reads[0] == 1  # no stamp: the rows are read, once


def _tamper(index: Path) -> str:
    with sqlite3.connect(index) as con:
        victim = con.execute("SELECT id FROM units ORDER BY id LIMIT 1").fetchone()[0]
        con.execute("UPDATE units SET content_hash = ? WHERE id = ?", ("0" * 64, victim))
    return str(victim)


def test_attack_index_row_edited_after_the_stamp(stamped: Path) -> None:
    index = stamped / ".evidence-cache" / "index.sqlite"
    victim = _tamper(index)
    assert _consolidate(stamped) == "reindexed"
    held = index_entries(index)
    assert held is not None and held[victim] != "0" * 64 and len(held) == 27


def test_attack_index_edited_with_its_times_put_back(stamped: Path) -> None:
    """``touch -d`` puts mtime back; the change time still moves, and the stamp holds it."""
    index = stamped / ".evidence-cache" / "index.sqlite"
    before = os.stat(index)
    victim = _tamper(index)
    os.utime(index, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert _consolidate(stamped) == "reindexed"
    held = index_entries(index)
    assert held is not None and held[victim] != "0" * 64


def test_attack_index_replaced_by_an_older_copy(stamped: Path, tmp_path: Path) -> None:
    """An index of another revision copied over the stamped one: another inode, rebuilt."""
    index = stamped / ".evidence-cache" / "index.sqlite"
    old = tmp_path / "old.sqlite"
    old.write_bytes(index.read_bytes())
    edited = sorted((stamped / "evidence" / "curated" / "domain").glob("*.md"))[0]
    edited.write_text(edited.read_text(encoding="utf-8").rstrip("\n") + " More.\n")
    assert _consolidate(stamped) == "activated"
    os.replace(old, index)
    assert _consolidate(stamped) == "reindexed"


def test_attack_stamp_forged_for_the_active_revision(stamped: Path) -> None:
    """A stamp edited to name a file id it does not have vouches for nothing."""
    stamp = stamped / ".evidence-cache" / "index.sqlite.stamp"
    index = stamped / ".evidence-cache" / "index.sqlite"
    data = json.loads(stamp.read_bytes())
    _tamper(index)
    data["file"][0] += 1  # names neither the old file nor the tampered one
    stamp.write_text(json.dumps(data))
    assert _consolidate(stamped) == "reindexed"


def test_an_update_reads_no_row_and_no_manifest_again(
    stamped: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A one-unit change updates a stamped index from the snapshot the consolidation
    already holds: no row read to prove it, no second load of the previous manifest."""
    reads = _row_reads(monkeypatch)
    loads = [0]
    real = sqlite_index.load_snapshot

    def counting(*args: object) -> object:
        loads[0] += 1
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(sqlite_index, "load_snapshot", counting)
    edited = sorted((stamped / "evidence" / "curated" / "example").glob("*.md"))[0]
    edited.write_text(edited.read_text(encoding="utf-8").rstrip("\n") + "\n\nMore.\n")
    assert _consolidate(stamped) == "activated"
    assert (reads[0], loads[0]) == (0, 0)
    held = index_entries(stamped / ".evidence-cache" / "index.sqlite")
    assert held is not None and len(held) == 27


def test_attack_index_drifted_before_an_update_is_rebuilt(stamped: Path) -> None:
    """A row edited under a stamp, then a change: the update must not carry the drift."""
    index = stamped / ".evidence-cache" / "index.sqlite"
    victim = _tamper(index)
    edited = sorted((stamped / "evidence" / "curated" / "domain").glob("*.md"))[-1]
    edited.write_text(edited.read_text(encoding="utf-8").rstrip("\n") + " More.\n")
    assert _consolidate(stamped) == "activated"
    held = index_entries(index)
    assert held is not None and held[victim] != "0" * 64 and len(held) == 27


def test_edits_back_to_back_read_no_index_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An update stamps the index it just wrote, and the next edit, a moment later, trusts
    that stamp (git's racy rule: the file's change time is older than the stamp file's
    own), so four quick edits read no row; a row edited between them is still caught."""
    root = generate(41, tmp_path / "ws", seed=11)
    assert _consolidate(root) == "activated"
    reads = _row_reads(monkeypatch)
    files = sorted((root / "evidence" / "curated" / "glossary").glob("*.md"))
    assert len(files) >= 4
    for n, edited in enumerate(files[:4]):
        edited.write_text(edited.read_text(encoding="utf-8").rstrip("\n") + f" Edit {n}.\n")
        assert _consolidate(root) == "activated"
    assert reads[0] == 0
    index = root / ".evidence-cache" / "index.sqlite"
    victim = _tamper(index)  # right after the last update's stamp
    assert _consolidate(root) == "reindexed"
    held = index_entries(index)
    assert held is not None and held[victim] != "0" * 64 and len(held) == 41


def test_a_stamp_no_newer_than_the_index_is_not_trusted(stamped: Path) -> None:
    """Where the clock is coarse, the stamp file can carry the index's own change time: it
    is racily clean, and the rows are read (and a row edited in that tick is caught)."""
    index = stamped / ".evidence-cache" / "index.sqlite"
    stamp = stamped / ".evidence-cache" / "index.sqlite.stamp"
    data = json.loads(stamp.read_bytes())
    victim = _tamper(index)
    st = os.stat(index)
    data["file"] = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
    data["taken_ns"] = st.st_ctime_ns  # taken in the tick the index last changed
    stamp.write_text(json.dumps(data))
    os.utime(stamp, ns=(st.st_ctime_ns, st.st_ctime_ns))
    assert os.stat(index).st_ctime_ns == st.st_ctime_ns  # the index itself untouched since
    assert _consolidate(stamped) == "reindexed"
    held = index_entries(index)
    assert held is not None and held[victim] != "0" * 64
